package tripletio

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kgctx/kgctx/engine/model"
)

// nextSPO decodes the next SUBJECT|PREDICATE|OBJECT[|WEIGHT] line, the
// format the reference extractor's LLM prompt asks for. Fields are trimmed;
// '#' starts a comment line.
func (r *Reader) nextSPO(t *model.TripletInput) error {
	for {
		line, _, err := r.lines.next()
		if err != nil {
			return r.readFailed(err)
		}
		if isSpaceBytes(line) || bytes.TrimLeft(line, " ")[0] == '#' {
			continue
		}
		r.line = r.lines.n
		parts := strings.Split(string(line), "|")
		if len(parts) < 3 || len(parts) > 4 {
			return r.fail(r.line, detail(ErrInvalidRecord, fmt.Sprintf("want SUBJECT|PREDICATE|OBJECT, got %d field(s)", len(parts))), false)
		}
		t.Source, t.Relationship, t.Target = strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1]), strings.TrimSpace(parts[2])
		if len(parts) == 4 {
			if t.Weight, err = parseWeight(strings.TrimSpace(parts[3])); err != nil {
				return r.fail(r.line, err, false)
			}
		}
		if err := checkRequired(t); err != nil {
			return r.fail(r.line, err, false)
		}
		return nil
	}
}

// nextNTriples decodes the next N-Triples statement, <s> <p> <o> . (or a
// blank node _:x, or a literal object "..."[@lang|^^<type>]). IRIs become
// names by their last path segment or fragment; the full IRI is kept as an
// alias (the predicate's short name is what the graph shows). Every
// statement is one line, so a bad one is an ErrInvalidRecord of its line
// and the next line is read normally.
func (r *Reader) nextNTriples(t *model.TripletInput) error {
	for {
		line, _, err := r.lines.next()
		if err != nil {
			return r.readFailed(err)
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 || trimmed[0] == '#' {
			continue
		}
		r.line = r.lines.n
		s := string(trimmed)
		var terms [3]ntTerm
		for i := range terms {
			var err error
			terms[i], s, err = ntNext(s, i == 2)
			if err != nil {
				return r.fail(r.line, detail(ErrInvalidRecord, fmt.Sprintf("N-Triples term %d: %v", i+1, err)), false)
			}
		}
		s = strings.TrimSpace(s)
		if !strings.HasPrefix(s, ".") || strings.TrimSpace(s[1:]) != "" && !strings.HasPrefix(strings.TrimSpace(s[1:]), "#") {
			return r.fail(r.line, detail(ErrInvalidRecord, "N-Triples statement must end with ' .'"), false)
		}
		if terms[1].kind != ntIRI {
			return r.fail(r.line, detail(ErrInvalidRecord, "N-Triples predicate must be an IRI"), false)
		}
		t.Source = terms[0].name()
		t.Relationship = terms[1].name()
		t.Target = terms[2].name()
		if terms[0].kind == ntIRI && terms[0].value != t.Source {
			t.SourceAliases = []string{terms[0].value}
		}
		if terms[2].kind == ntIRI && terms[2].value != t.Target {
			t.TargetAliases = []string{terms[2].value}
		}
		if err := checkRequired(t); err != nil {
			return r.fail(r.line, err, false)
		}
		return nil
	}
}

type ntKind uint8

const (
	ntIRI ntKind = iota
	ntBlank
	ntLiteral
)

type ntTerm struct {
	kind  ntKind
	value string // IRI, blank node label (with _:) or literal lexical form
}

// name is the term as a node name: an IRI's last path segment or fragment
// (the whole IRI when that is empty), a blank node's label, a literal's
// text.
func (t ntTerm) name() string {
	if t.kind != ntIRI {
		return t.value
	}
	iri := t.value
	if i := strings.LastIndexByte(iri, '#'); i >= 0 && i < len(iri)-1 {
		return iri[i+1:]
	}
	trimmed := strings.TrimRight(iri, "/")
	if i := strings.LastIndexByte(trimmed, '/'); i >= 0 && i < len(trimmed)-1 {
		return trimmed[i+1:]
	}
	if i := strings.LastIndexByte(trimmed, ':'); i >= 0 && i < len(trimmed)-1 {
		return trimmed[i+1:]
	}
	return iri
}

// ntNext reads one term from the front of s.
func ntNext(s string, object bool) (ntTerm, string, error) {
	s = strings.TrimLeft(s, " \t")
	switch {
	case strings.HasPrefix(s, "<"):
		end := strings.IndexByte(s, '>')
		if end < 0 {
			return ntTerm{}, s, fmt.Errorf("unterminated IRI")
		}
		iri, err := ntUnescape(s[1:end])
		if err != nil {
			return ntTerm{}, s, err
		}
		if iri == "" {
			return ntTerm{}, s, fmt.Errorf("empty IRI")
		}
		return ntTerm{ntIRI, iri}, s[end+1:], nil
	case strings.HasPrefix(s, "_:"):
		end := strings.IndexAny(s, " \t")
		if end < 0 {
			end = len(s)
		}
		if end <= 2 {
			return ntTerm{}, s, fmt.Errorf("empty blank node label")
		}
		return ntTerm{ntBlank, s[:end]}, s[end:], nil
	case object && strings.HasPrefix(s, `"`):
		var b strings.Builder
		i := 1
		for ; i < len(s); i++ {
			c := s[i]
			if c == '"' {
				break
			}
			if c == '\\' && i+1 < len(s) {
				j, r, err := ntEscape(s, i)
				if err != nil {
					return ntTerm{}, s, err
				}
				b.WriteString(r)
				i = j
				continue
			}
			b.WriteByte(c)
		}
		if i >= len(s) {
			return ntTerm{}, s, fmt.Errorf("unterminated literal")
		}
		rest := s[i+1:]
		// A language tag or a datatype IRI belongs to the literal.
		if strings.HasPrefix(rest, "@") {
			end := strings.IndexAny(rest, " \t")
			if end < 0 {
				end = len(rest)
			}
			rest = rest[end:]
		} else if strings.HasPrefix(rest, "^^<") {
			end := strings.IndexByte(rest, '>')
			if end < 0 {
				return ntTerm{}, s, fmt.Errorf("unterminated datatype IRI")
			}
			rest = rest[end+1:]
		}
		return ntTerm{ntLiteral, b.String()}, rest, nil
	}
	return ntTerm{}, s, fmt.Errorf("want <IRI>, _:blank or (as object) \"literal\"")
}

// ntUnescape resolves \u and \U escapes inside an IRI.
func ntUnescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		j, r, err := ntEscape(s, i)
		if err != nil {
			return "", err
		}
		b.WriteString(r)
		i = j
	}
	return b.String(), nil
}

// ntEscape decodes the escape at s[i] ('\'); it returns the index of the
// escape's last byte and its text.
func ntEscape(s string, i int) (int, string, error) {
	if i+1 >= len(s) {
		return i, "", fmt.Errorf("dangling escape")
	}
	switch c := s[i+1]; c {
	case 't':
		return i + 1, "\t", nil
	case 'n':
		return i + 1, "\n", nil
	case 'r':
		return i + 1, "\r", nil
	case 'b':
		return i + 1, "\b", nil
	case 'f':
		return i + 1, "\f", nil
	case '"', '\'', '\\':
		return i + 1, string(c), nil
	case 'u', 'U':
		n := 4
		if c == 'U' {
			n = 8
		}
		if i+2+n > len(s) {
			return i, "", fmt.Errorf("short \\%c escape", c)
		}
		v, err := strconv.ParseUint(s[i+2:i+2+n], 16, 32)
		if err != nil || !utf8.ValidRune(rune(v)) {
			return i, "", fmt.Errorf("bad \\%c escape", c)
		}
		return i + 1 + n, string(rune(v)), nil
	}
	return i, "", fmt.Errorf("unknown escape \\%c", s[i+1])
}
