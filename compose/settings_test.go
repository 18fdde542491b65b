package compose

import (
	"errors"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

// TestPredicateConfigLength: a vocabulary may list any relationship the
// store accepts (up to engine.DefaultMaxRelBytes, e.g. FB15k-237's 146-byte
// raw relation paths), and nothing longer.
func TestPredicateConfigLength(t *testing.T) {
	fb := "/base/schemastaging/organization_extra/phone_number./base/schemastaging/phone_sandbox/service_location"
	long := strings.Repeat("r", engine.DefaultMaxRelBytes)
	c, err := PredicateConfig{Mode: PredicatesStrict, Allowed: []string{fb, long}}.Normalize()
	if err != nil || len(c.Allowed) != 2 || c.Allowed[1] != long || c.Allowed[0] != engine.NormalizeRelationship(fb) {
		t.Fatalf("long predicates: %d kept, %v", len(c.Allowed), err)
	}
	for _, bad := range []string{long + "r", strings.Repeat("aB", engine.DefaultMaxRelBytes/2)} {
		if _, err := (PredicateConfig{Allowed: []string{bad}}).Normalize(); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%d-byte predicate: %v, want ErrInvalidRequest", len(bad), err)
		}
	}
}
