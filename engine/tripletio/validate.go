package tripletio

import (
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kgctx/kgctx/engine"
)

// Default limits, from API.md except where noted.
const (
	DefaultMaxNameBytes        = 1024
	DefaultMaxRelBytes         = 128
	DefaultMaxTypeBytes        = 256   // not in API.md: generous for a label
	DefaultMaxDescriptionBytes = 16384 // not in API.md: a paragraph or two
	// maxIDBytes bounds project and org ids, which become key prefixes.
	maxIDBytes = 128
)

// Limits parameterises Validate. A zero field means its default; Dim zero
// means vectors' lengths are not checked (their components still are).
type Limits struct {
	MaxNameBytes        int // source, target; default 1,024
	MaxRelBytes         int // relationship; default 128
	MaxTypeBytes        int // sourceType, targetType; default 256
	MaxDescriptionBytes int // sourceDescription, targetDescription; default 16,384
	Dim                 int // the store's vector dimension; 0 = unchecked
}

// Validate reports whether l is usable: no field may be negative.
func (l Limits) Validate() error {
	for _, f := range [...]struct {
		name string
		v    int
	}{
		{"MaxNameBytes", l.MaxNameBytes}, {"MaxRelBytes", l.MaxRelBytes},
		{"MaxTypeBytes", l.MaxTypeBytes}, {"MaxDescriptionBytes", l.MaxDescriptionBytes},
		{"Dim", l.Dim},
	} {
		if f.v < 0 {
			return fmt.Errorf("%w: Limits.%s %d is negative", ErrInvalidOptions, f.name, f.v)
		}
	}
	return nil
}

func (l Limits) withDefaults() Limits {
	if l.MaxNameBytes == 0 {
		l.MaxNameBytes = DefaultMaxNameBytes
	}
	if l.MaxRelBytes == 0 {
		l.MaxRelBytes = DefaultMaxRelBytes
	}
	if l.MaxTypeBytes == 0 {
		l.MaxTypeBytes = DefaultMaxTypeBytes
	}
	if l.MaxDescriptionBytes == 0 {
		l.MaxDescriptionBytes = DefaultMaxDescriptionBytes
	}
	return l
}

// Validate applies API.md's content rules to t, the checks the Reader
// leaves out, and returns the first violation wrapped around its sentinel
// (ErrInvalidName, ErrInvalidRelationship, ...) with a message naming the
// field. It trims white space from Source, Relationship and Target in place,
// since names are compared and stored trimmed.
//
//   - source, target: 1 to MaxNameBytes bytes of valid UTF-8 after trimming
//   - relationship: 1 to MaxRelBytes bytes of valid UTF-8 after trimming,
//     no control characters (a newline or tab in a predicate would break
//     line-oriented exports and rendered context blocks)
//   - sourceType, targetType, descriptions: valid UTF-8 within their limits
//   - weight, if set: finite and in [0,1]
//   - sourceVector, targetVector, if non-empty: Dim components (when Dim is
//     set), all finite
//   - sourceProjectId, targetProjectId, targetOrgId, if set: 1 to 128 bytes
//     of [A-Za-z0-9_.:-]
//   - provenance ids: valid UTF-8, at most MaxNameBytes bytes
func Validate(t *engine.TripletInput, lim Limits) error {
	if err := lim.Validate(); err != nil {
		return err
	}
	lim = lim.withDefaults()

	t.Source = strings.TrimSpace(t.Source)
	t.Relationship = strings.TrimSpace(t.Relationship)
	t.Target = strings.TrimSpace(t.Target)
	if err := checkText(ErrInvalidName, "source", t.Source, 1, lim.MaxNameBytes); err != nil {
		return err
	}
	if err := checkText(ErrInvalidRelationship, "relationship", t.Relationship, 1, lim.MaxRelBytes); err != nil {
		return err
	}
	if i := strings.IndexFunc(t.Relationship, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(t.Relationship[i:])
		return fmt.Errorf("%w: relationship contains control character %U", ErrInvalidRelationship, r)
	}
	if err := checkText(ErrInvalidName, "target", t.Target, 1, lim.MaxNameBytes); err != nil {
		return err
	}
	for _, f := range [...]struct {
		kind  error
		name  string
		value string
		max   int
	}{
		{ErrInvalidType, "sourceType", t.SourceType, lim.MaxTypeBytes},
		{ErrInvalidType, "targetType", t.TargetType, lim.MaxTypeBytes},
		{ErrInvalidDescription, "sourceDescription", t.SourceDescription, lim.MaxDescriptionBytes},
		{ErrInvalidDescription, "targetDescription", t.TargetDescription, lim.MaxDescriptionBytes},
	} {
		if err := checkText(f.kind, f.name, f.value, 0, f.max); err != nil {
			return err
		}
	}
	if w := t.Weight; w != nil {
		if math.IsNaN(*w) || math.IsInf(*w, 0) {
			return fmt.Errorf("%w: weight is %v, want a finite number in [0,1]", ErrInvalidWeight, *w)
		}
		if *w < 0 || *w > 1 {
			return fmt.Errorf("%w: weight %v is outside [0,1]", ErrInvalidWeight, *w)
		}
	}
	if err := checkVector("sourceVector", t.SourceVector, lim.Dim); err != nil {
		return err
	}
	if err := checkVector("targetVector", t.TargetVector, lim.Dim); err != nil {
		return err
	}
	if err := checkID(ErrInvalidProjectID, "sourceProjectId", t.SourceProjectID); err != nil {
		return err
	}
	if err := checkID(ErrInvalidProjectID, "targetProjectId", t.TargetProjectID); err != nil {
		return err
	}
	if err := checkID(ErrInvalidOrgID, "targetOrgId", t.TargetOrgID); err != nil {
		return err
	}
	if p := t.Provenance; p != nil {
		if err := checkText(ErrInvalidProvenance, "provenance.observationId", p.ObservationID, 0, lim.MaxNameBytes); err != nil {
			return err
		}
		if err := checkText(ErrInvalidProvenance, "provenance.sessionId", p.SessionID, 0, lim.MaxNameBytes); err != nil {
			return err
		}
	}
	return nil
}

func checkText(kind error, field, s string, minBytes, maxBytes int) error {
	switch {
	case len(s) < minBytes:
		return fmt.Errorf("%w: %s is empty", kind, field)
	case len(s) > maxBytes:
		return fmt.Errorf("%w: %s is %d bytes, over the limit of %d", kind, field, len(s), maxBytes)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", kind, field)
	}
	return nil
}

func checkVector(field string, v []float32, dim int) error {
	if len(v) == 0 {
		return nil // absent: the built-in embedding is used
	}
	if dim > 0 && len(v) != dim {
		return fmt.Errorf("%w: %s has %d components, want %d", ErrInvalidVector, field, len(v), dim)
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: %s[%d] is %v", ErrInvalidVector, field, i, x)
		}
	}
	return nil
}

// checkID accepts an empty id (unset) or 1 to 128 bytes of [A-Za-z0-9_.:-].
func checkID(kind error, field, id string) error {
	if id == "" {
		return nil
	}
	ok := len(id) <= maxIDBytes
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '_' || c == '.' || c == ':' || c == '-'
	}
	if !ok {
		shown := id
		if len(shown) > 64 {
			shown = shown[:64] + "..."
		}
		return fmt.Errorf("%w: %s %q must be 1 to %d bytes of [A-Za-z0-9_.:-]", kind, field, shown, maxIDBytes)
	}
	return nil
}
