package tripletio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/kgctx/kgctx/engine/model"
)

// Encoder writes triplets as NDJSON, the export format: one compact object
// per line, optional fields omitted when empty, readable back by a JSONL
// Reader into identical values. An Encoder is not safe for concurrent use.
type Encoder struct {
	w   io.Writer
	buf []byte
}

// NewEncoder returns an Encoder writing to w. Each Encode is one Write of
// one complete line, so wrap a file or pipe in a bufio.Writer (and flush it)
// when exporting many triplets.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: w}
}

// Encode writes t as one line. It writes nothing when t cannot be encoded
// (a NaN weight or vector component).
func (e *Encoder) Encode(t *model.TripletInput) error {
	if t == nil {
		return errors.New("tripletio: encode: nil triplet")
	}
	b, err := AppendNDJSON(e.buf[:0], t)
	if err != nil {
		return err
	}
	e.buf = b
	_, err = e.w.Write(b)
	return err
}

// AppendNDJSON appends t to dst as one NDJSON line, byte for byte what
// encoding/json's Encoder with SetEscapeHTML(false) writes (field order,
// omitted empty fields, string escapes, number formats), without its
// reflection: exports and the client's batches spend most of their time
// here. On error (a NaN or infinite number) dst is returned unchanged.
func AppendNDJSON(dst []byte, t *model.TripletInput) ([]byte, error) {
	b := append(dst, `{"source":`...)
	b = appendJSONString(b, t.Source)
	b = append(b, `,"relationship":`...)
	b = appendJSONString(b, t.Relationship)
	b = append(b, `,"target":`...)
	b = appendJSONString(b, t.Target)
	str := func(key, v string) {
		if v != "" {
			b = append(b, key...)
			b = appendJSONString(b, v)
		}
	}
	str(`,"sourceType":`, t.SourceType)
	str(`,"targetType":`, t.TargetType)
	str(`,"sourceDescription":`, t.SourceDescription)
	str(`,"targetDescription":`, t.TargetDescription)
	var err error
	num := func(key string, v *float64) {
		if v != nil && err == nil {
			b = append(b, key...)
			b, err = appendJSONFloat(b, *v, 64)
		}
	}
	num(`,"weight":`, t.Weight)
	num(`,"sourceWeight":`, t.SourceWeight)
	num(`,"targetWeight":`, t.TargetWeight)
	if t.Provenance != nil && err == nil {
		var p bytes.Buffer
		enc := json.NewEncoder(&p)
		enc.SetEscapeHTML(false)
		if err = enc.Encode(t.Provenance); err == nil {
			b = append(append(b, `,"provenance":`...), bytes.TrimSuffix(p.Bytes(), []byte("\n"))...)
		}
	}
	vec := func(key string, v []float32) {
		if len(v) == 0 || err != nil {
			return
		}
		b = append(b, key...)
		for i, f := range v {
			b = append(b, listSep(i))
			if b, err = appendJSONFloat(b, float64(f), 32); err != nil {
				return
			}
		}
		b = append(b, ']')
	}
	vec(`,"sourceVector":`, t.SourceVector)
	vec(`,"targetVector":`, t.TargetVector)
	strs := func(key string, v []string) {
		if len(v) == 0 {
			return
		}
		b = append(b, key...)
		for i, s := range v {
			b = append(b, listSep(i))
			b = appendJSONString(b, s)
		}
		b = append(b, ']')
	}
	strs(`,"sourceAliases":`, t.SourceAliases)
	strs(`,"targetAliases":`, t.TargetAliases)
	str(`,"sourceProjectId":`, t.SourceProjectID)
	str(`,"targetProjectId":`, t.TargetProjectID)
	str(`,"targetOrgId":`, t.TargetOrgID)
	if t.SourceExact {
		b = append(b, `,"sourceExact":true`...)
	}
	if t.TargetExact {
		b = append(b, `,"targetExact":true`...)
	}
	loc := func(key string, l *model.Location) {
		if l == nil {
			return
		}
		b = append(b, key...)
		b = append(b, `{"file":`...)
		b = appendJSONString(b, l.File)
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, int64(l.Line), 10)
		if l.EndLine != 0 {
			b = append(b, `,"endLine":`...)
			b = strconv.AppendInt(b, int64(l.EndLine), 10)
		}
		b = append(b, '}')
	}
	loc(`,"sourceLocation":`, t.SourceLocation)
	loc(`,"targetLocation":`, t.TargetLocation)
	str(`,"sourceSignature":`, t.SourceSignature)
	str(`,"targetSignature":`, t.TargetSignature)
	if err != nil {
		return dst, fmt.Errorf("tripletio: encode: %w", err)
	}
	return append(b, '}', '\n'), nil
}

// listSep opens a JSON array before element 0 and separates the others.
func listSep(i int) byte {
	if i == 0 {
		return '['
	}
	return ','
}

// appendJSONString quotes s as encoding/json does without HTML escaping:
// short escapes for \b \f \n \r \t, \u00XX for other control bytes,
// U+FFFD for invalid UTF-8, \u2028 and \u2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONFloat formats f as encoding/json does for a float of bits bits.
func appendJSONFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, bits))
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// e-09 -> e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
