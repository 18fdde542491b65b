package workload

import (
	"testing"

	"github.com/kgctx/kgctx/engine"
)

func TestObservations(t *testing.T) {
	fb, err := LoadFB15k("")
	if err != nil {
		t.Skip(err)
	}
	a := Observations(fb, 2000, 1)
	b := Observations(fb, 2000, 1)
	for i := range a {
		if a[i].Content != b[i].Content {
			t.Fatal("not deterministic")
		}
		if err := engine.ValidateObservation(&a[i], 0); err != nil {
			t.Fatalf("observation %d invalid: %v (%q)", i, err, a[i].Content)
		}
	}
}
