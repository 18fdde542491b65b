package tripletio

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kgctx/kgctx/engine/model"
)

// fastDecoder decodes the common shape of an NDJSON triplet line without
// encoding/json: one object whose members are TripletInput's own keys
// (exact case) with string, number, array or null values. Profiles of bulk
// imports showed encoding/json's reflection at 60-70 % of the reader's
// time; this path is about ten times faster.
//
// It never decides an error. Anything it does not handle with certainty
// (a key in another case, provenance, a surrogate escape, a number out of
// range, a syntax error, a wrong type) makes it give up, and the line is
// decoded again by encoding/json, which then produces the exact result and
// the exact error message. So the two paths agree on every line by
// construction: the fast path only accepts lines whose meaning is
// unambiguous, and assigns what encoding/json would assign.
//
// Relationship names, types and project ids are interned in a bounded
// table: they repeat on nearly every line, and one string per distinct
// value keeps a 50,000-line batch small. Names and descriptions are not:
// most are distinct within a batch and the table would only churn.
type fastDecoder struct {
	b      []byte
	i      int
	intern map[string]string
	buf    []byte // unescaping scratch
}

// maxIntern bounds the intern table; it is cleared when full.
const maxIntern = 4096

// decode reports whether it decoded line into t (which must be zero).
// On false t may hold partial values and must be reset by the caller.
func (d *fastDecoder) decode(line []byte, t *model.TripletInput) bool {
	d.b, d.i = line, 0
	defer func() { d.b = nil }()
	if !d.consume('{') {
		return false
	}
	if d.consume('}') {
		return d.end()
	}
	for {
		key, ok := d.rawString()
		if !ok || !d.consume(':') {
			return false
		}
		if !d.member(key, t) {
			return false
		}
		if d.consume(',') {
			continue
		}
		if d.consume('}') {
			return d.end()
		}
		return false
	}
}

// member decodes the value of key into t.
func (d *fastDecoder) member(key []byte, t *model.TripletInput) bool {
	var sp *string
	intern := true
	switch string(key) {
	case "source":
		sp, intern = &t.Source, false
	case "relationship":
		sp = &t.Relationship
	case "target":
		sp, intern = &t.Target, false
	case "sourceType":
		sp = &t.SourceType
	case "targetType":
		sp = &t.TargetType
	case "sourceDescription":
		sp, intern = &t.SourceDescription, false
	case "targetDescription":
		sp, intern = &t.TargetDescription, false
	case "sourceProjectId":
		sp = &t.SourceProjectID
	case "targetProjectId":
		sp = &t.TargetProjectID
	case "targetOrgId":
		sp = &t.TargetOrgID
	case "weight":
		return d.floatPtr(&t.Weight)
	case "sourceWeight":
		return d.floatPtr(&t.SourceWeight)
	case "targetWeight":
		return d.floatPtr(&t.TargetWeight)
	case "sourceVector":
		return d.vector(&t.SourceVector)
	case "targetVector":
		return d.vector(&t.TargetVector)
	case "sourceAliases":
		return d.strings(&t.SourceAliases)
	case "targetAliases":
		return d.strings(&t.TargetAliases)
	case "sourceExact":
		return d.boolean(&t.SourceExact)
	case "targetExact":
		return d.boolean(&t.TargetExact)
	case "sourceLocation":
		return d.location(&t.SourceLocation)
	case "targetLocation":
		return d.location(&t.TargetLocation)
	case "sourceSignature":
		sp, intern = &t.SourceSignature, false
	case "targetSignature":
		sp, intern = &t.TargetSignature, false
	default:
		return false
	}
	if d.null() {
		return true // encoding/json leaves a string unchanged on null
	}
	s, ok := d.str(intern)
	if ok {
		*sp = s
	}
	return ok
}

// boolean decodes true or false (null leaves *p, as encoding/json does).
func (d *fastDecoder) boolean(p *bool) bool {
	if d.null() {
		return true
	}
	switch {
	case len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "true":
		*p, d.i = true, d.i+4
	case len(d.b)-d.i >= 5 && string(d.b[d.i:d.i+5]) == "false":
		*p, d.i = false, d.i+5
	default:
		return false
	}
	return true
}

// location decodes a Location object (null: nil). As encoding/json
// does, a second object for the same key decodes into the first.
func (d *fastDecoder) location(p **model.Location) bool {
	if d.null() {
		*p = nil
		return true
	}
	if !d.consume('{') {
		return false
	}
	l := *p
	if l == nil {
		l = &model.Location{}
	}
	if !d.consume('}') {
		for {
			key, ok := d.rawString()
			if !ok || !d.consume(':') {
				return false
			}
			switch string(key) {
			case "file":
				if !d.null() {
					if l.File, ok = d.str(false); !ok {
						return false
					}
				}
			case "line":
				if !d.integer(&l.Line) {
					return false
				}
			case "endLine":
				if !d.integer(&l.EndLine) {
					return false
				}
			default:
				return false
			}
			if d.consume(',') {
				continue
			}
			if d.consume('}') {
				break
			}
			return false
		}
	}
	*p = l
	return true
}

// integer decodes a JSON integer without fraction or exponent into an int
// (null leaves *p); anything else is left to encoding/json.
func (d *fastDecoder) integer(p *int) bool {
	if d.null() {
		return true
	}
	d.space()
	j := d.i
	if j < len(d.b) && d.b[j] == '-' {
		j++
	}
	k := j
	for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' {
		j++
	}
	if j == k || d.b[k] == '0' && j > k+1 || j < len(d.b) && (d.b[j] == '.' || d.b[j] == 'e' || d.b[j] == 'E') {
		return false
	}
	n, err := strconv.ParseInt(string(d.b[d.i:j]), 10, strconv.IntSize)
	if err != nil {
		return false
	}
	*p, d.i = int(n), j
	return true
}

func (d *fastDecoder) floatPtr(p **float64) bool {
	if d.null() {
		*p = nil
		return true
	}
	f, ok := d.number(64)
	if ok {
		*p = &f
	}
	return ok
}

func (d *fastDecoder) vector(p *[]float32) bool {
	return array(d, p, make([]float32, 0, 128), func() (float32, bool) {
		f, ok := d.number(32)
		return float32(f), ok
	})
}

func (d *fastDecoder) strings(p *[]string) bool {
	return array(d, p, []string{}, func() (string, bool) {
		if d.null() {
			return "", false // encoding/json would store ""; leave it to it
		}
		return d.str(false)
	})
}

// array decodes a JSON array (null: nil) into *p, appending to v the
// elements that elem reads.
func array[T any](d *fastDecoder, p *[]T, v []T, elem func() (T, bool)) bool {
	if d.null() {
		*p = nil
		return true
	}
	if !d.consume('[') {
		return false
	}
	if !d.consume(']') {
		for {
			x, ok := elem()
			if !ok {
				return false
			}
			v = append(v, x)
			if d.consume(',') {
				continue
			}
			if d.consume(']') {
				break
			}
			return false
		}
	}
	*p = v
	return true
}

func (d *fastDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDecoder) consume(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *fastDecoder) end() bool {
	d.space()
	return d.i == len(d.b)
}

func (d *fastDecoder) null() bool {
	d.space()
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// rawString returns the bytes of a string without escapes (keys).
func (d *fastDecoder) rawString() ([]byte, bool) {
	d.space()
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	start := d.i + 1
	for j := start; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return d.b[start:j], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// str decodes a string value, unescaping it; the line is valid UTF-8
// already (the reader checks it first).
func (d *fastDecoder) str(intern bool) (string, bool) {
	d.space()
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	j := start
	for ; j < len(d.b); j++ {
		c := d.b[j]
		if c == '"' {
			d.i = j + 1
			return d.makeString(d.b[start:j], intern), true
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", false
		}
	}
	buf := append(d.buf[:0], d.b[start:j]...)
	for j < len(d.b) {
		c := d.b[j]
		switch {
		case c == '"':
			d.i, d.buf = j+1, buf
			return d.makeString(buf, intern), true
		case c < 0x20:
			return "", false
		case c != '\\':
			buf = append(buf, c)
			j++
			continue
		}
		if j+1 >= len(d.b) {
			return "", false
		}
		switch e := d.b[j+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			if j+6 > len(d.b) {
				return "", false
			}
			r, err := strconv.ParseUint(string(d.b[j+2:j+6]), 16, 32)
			if err != nil || utf16.IsSurrogate(rune(r)) {
				return "", false // surrogates: encoding/json's rules are subtle
			}
			buf = utf8.AppendRune(buf, rune(r))
			j += 6
			continue
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

func (d *fastDecoder) makeString(b []byte, intern bool) string {
	if !intern {
		return string(b)
	}
	if s, ok := d.intern[string(b)]; ok {
		return s
	}
	if d.intern == nil || len(d.intern) >= maxIntern {
		d.intern = make(map[string]string, 64)
	}
	s := string(b)
	d.intern[s] = s
	return s
}

// number parses a JSON number (strict grammar) as a float of bits bits.
func (d *fastDecoder) number(bits int) (float64, bool) {
	d.space()
	b, start := d.b, d.i
	j := start
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	default:
		return 0, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == k {
			return 0, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == k {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(b[start:j]), bits)
	if err != nil {
		return 0, false
	}
	d.i = j
	return f, true
}
