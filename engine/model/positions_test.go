package model

import (
	"errors"
	"testing"
)

func TestPositions(t *testing.T) {
	var p Positions
	if p.String() != "" {
		t.Fatalf("empty: %q", p.String())
	}
	if err := p.Add("s1:4, global:2"); err != nil {
		t.Fatal(err)
	}
	p.Note("s1", 3) // lower: kept at 4
	if err := p.Add("s0:9,s1:5"); err != nil {
		t.Fatal(err)
	}
	if got := p.String(); got != "global:2,s0:9,s1:5" {
		t.Fatalf("got %q", got)
	}
	for _, bad := range []string{"s1", "s1:x", ":3", "s1:3,", "s1:-1"} {
		if err := p.Add(bad); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if got := p.String(); got != "global:2,s0:9,s1:5" {
		t.Fatalf("a bad text changed the positions: %q", got)
	}
}
