package model

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Default limits of a write (API.md, "Conventions"). A relationship may be
// as long as a name: FB15k-237's raw relation paths reach 146 bytes, and
// the record codec length-prefixes every string (uvarint), so nothing
// stored depends on the bound.
const (
	DefaultMaxNameBytes        = 1024
	DefaultMaxRelBytes         = DefaultMaxNameBytes
	DefaultMaxTypeBytes        = 256
	DefaultMaxDescriptionBytes = 16384
	DefaultMaxBatch            = 1_000_000
)

// MaxAliases bounds the aliases of one endpoint of a triplet, and the
// surface names a store remembers per node.
const MaxAliases = 32

// Limits bound the fields of a write. Zero fields take the defaults above.
type Limits struct {
	MaxNameBytes int // source, target and each alias; default 1,024
	// MaxRelBytes bounds a relationship as sent and its snake_case form
	// (NormalizeRelationship), which is what is stored and exported, so
	// an export always imports back; default 1,024.
	MaxRelBytes         int
	MaxTypeBytes        int // default 256
	MaxDescriptionBytes int // default 16,384
	MaxBatch            int // triplets per Import call, default 1,000,000
}

// WithDefaults returns a copy of l with zero fields set to the defaults.
func (l *Limits) WithDefaults() Limits {
	d := *l
	if d.MaxNameBytes <= 0 {
		d.MaxNameBytes = DefaultMaxNameBytes
	}
	if d.MaxRelBytes <= 0 {
		d.MaxRelBytes = DefaultMaxRelBytes
	}
	if d.MaxTypeBytes <= 0 {
		d.MaxTypeBytes = DefaultMaxTypeBytes
	}
	if d.MaxDescriptionBytes <= 0 {
		d.MaxDescriptionBytes = DefaultMaxDescriptionBytes
	}
	if d.MaxBatch <= 0 {
		d.MaxBatch = DefaultMaxBatch
	}
	return d
}

var (
	errEmptyName   = errors.New("is empty or whitespace")
	errInvalidUTF8 = errors.New("is not valid UTF-8")
)

// ValidateID checks an org, project, agent or session id: 1 to 128 bytes of
// [A-Za-z0-9_.:-]. Ids appear in keys, Cedar entity ids and URLs, so they are
// kept to a conservative alphabet.
func ValidateID(id string) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("%w: id must be 1 to 128 bytes", ErrInvalidInput)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-') {
			return fmt.Errorf("%w: id %q may only hold letters, digits, '_', '.', ':' and '-'", ErrInvalidInput, id)
		}
	}
	return nil
}

// ValidateTriplet trims and checks t in place against lim and the store's
// vector dimension dim (0: vectors are refused; negative: their length is
// not checked, for callers that do not know the store). The error names the
// field.
func ValidateTriplet(t *TripletInput, lim Limits, dim int) error {
	lim = lim.WithDefaults()
	var err error
	if t.Source, err = checkName(t.Source, lim.MaxNameBytes); err != nil {
		return fmt.Errorf("source %w", err)
	}
	if t.Target, err = checkName(t.Target, lim.MaxNameBytes); err != nil {
		return fmt.Errorf("target %w", err)
	}
	rel := strings.TrimSpace(t.Relationship)
	switch {
	case rel == "":
		return errors.New("relationship is empty")
	case !utf8.ValidString(rel):
		return fmt.Errorf("relationship %w", errInvalidUTF8)
	case len(rel) > lim.MaxRelBytes:
		return fmt.Errorf("relationship is %d bytes, over the limit of %d", len(rel), lim.MaxRelBytes)
	case HasControl(rel):
		return errors.New("relationship contains a control character (newline, tab, ...)")
	case !hasAlnum(rel):
		return errors.New("relationship has no letters or digits")
	}
	// The snake_case form adds at most one '_' per rune and lower-casing
	// at most doubles a rune's bytes, so only a relationship longer than
	// half the limit can outgrow it: shorter ones skip the allocation.
	if 2*len(rel) > lim.MaxRelBytes {
		if n := len(NormalizeRelationship(rel)); n > lim.MaxRelBytes {
			return fmt.Errorf("relationship is %d bytes in snake_case form, over the limit of %d", n, lim.MaxRelBytes)
		}
	}
	t.Relationship = rel
	if err := checkText("sourceType", t.SourceType, lim.MaxTypeBytes); err != nil {
		return err
	}
	if err := checkText("targetType", t.TargetType, lim.MaxTypeBytes); err != nil {
		return err
	}
	if err := checkText("sourceDescription", t.SourceDescription, lim.MaxDescriptionBytes); err != nil {
		return err
	}
	if err := checkText("targetDescription", t.TargetDescription, lim.MaxDescriptionBytes); err != nil {
		return err
	}
	for _, f := range [...]struct {
		name string
		w    *float64
	}{{"weight", t.Weight}, {"sourceWeight", t.SourceWeight}, {"targetWeight", t.TargetWeight}} {
		if f.w != nil && (math.IsNaN(*f.w) || *f.w < 0 || *f.w > 1) {
			return fmt.Errorf("%s %v is outside [0,1]", f.name, *f.w)
		}
	}
	if err := CheckVector("sourceVector", t.SourceVector, dim); err != nil {
		return err
	}
	if err := CheckVector("targetVector", t.TargetVector, dim); err != nil {
		return err
	}
	for _, f := range [...]struct{ name, v string }{
		{"sourceProjectId", t.SourceProjectID}, {"targetProjectId", t.TargetProjectID}, {"targetOrgId", t.TargetOrgID},
	} {
		if f.v != "" {
			if err := ValidateID(f.v); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
		}
	}
	for _, as := range [...]struct {
		field string
		v     []string
	}{{"sourceAliases", t.SourceAliases}, {"targetAliases", t.TargetAliases}} {
		if len(as.v) > MaxAliases {
			return fmt.Errorf("%s has %d entries, the limit is %d", as.field, len(as.v), MaxAliases)
		}
		for i, a := range as.v {
			if as.v[i], err = checkName(a, lim.MaxNameBytes); err != nil {
				return fmt.Errorf("%s: %q %w", as.field, a, err)
			}
		}
	}
	if err := checkLocation("sourceLocation", t.SourceLocation); err != nil {
		return err
	}
	if err := checkLocation("targetLocation", t.TargetLocation); err != nil {
		return err
	}
	if err := checkSignature("sourceSignature", t.SourceSignature); err != nil {
		return err
	}
	if err := checkSignature("targetSignature", t.TargetSignature); err != nil {
		return err
	}
	if p := t.Provenance; p != nil {
		if err := checkText("provenance.observationId", p.ObservationID, 256); err != nil {
			return err
		}
		if err := checkText("provenance.sessionId", p.SessionID, 256); err != nil {
			return err
		}
	}
	return nil
}

func checkName(s string, max int) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return s, errEmptyName
	case !utf8.ValidString(s):
		return s, errInvalidUTF8
	case len(s) > max:
		return s, fmt.Errorf("is %d bytes, over the limit of %d", len(s), max)
	}
	return s, nil
}

func checkText(field, s string, max int) error {
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("%s %w", field, errInvalidUTF8)
	case len(s) > max:
		return fmt.Errorf("%s is %d bytes, over the limit of %d", field, len(s), max)
	}
	return nil
}

// CheckVector checks vector v of field: finite, not zero, and of length
// dim unless dim is negative (nil passes). An error of length wraps
// ErrDimensionMismatch.
func CheckVector(field string, v []float32, dim int) error {
	if v == nil {
		return nil
	}
	if dim >= 0 && len(v) != dim {
		return fmt.Errorf("%s has %d dimensions, the store has %d: %w", field, len(v), dim, ErrDimensionMismatch)
	}
	var norm float64
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%s holds a non-finite value", field)
		}
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return fmt.Errorf("%s is the zero vector", field)
	}
	return nil
}

// HasControl reports whether s holds a control character or a Unicode
// line or paragraph separator: what a one-line field may not hold.
func HasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return true
		}
	}
	return false
}

// hasAlnum reports whether s holds a letter or digit, i.e. whether
// NormalizeRelationship(s) is non-empty, without building it.
func hasAlnum(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}
