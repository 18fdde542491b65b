package engine

import (
	"context"
	"testing"
)

// TestRankedCountsAlike: every incident of Ranked carries how many of its
// node's edges share its relationship and direction; a delete changes the
// counts of the edges left.
func TestRankedCountsAlike(t *testing.T) {
	s, _ := openTest(t, &Options{InMemory: true})
	ctx := context.Background()
	tn := Tenant{Org: "org_a", Project: "p"}
	in := []TripletInput{
		{Source: "A", Relationship: "calls", Target: "B"},
		{Source: "A", Relationship: "calls", Target: "C"},
		{Source: "A", Relationship: "calls", Target: "D"},
		{Source: "A", Relationship: "owns", Target: "E"},
		{Source: "F", Relationship: "calls", Target: "A"},
		{Source: "G", Relationship: "calls", Target: "A"},
		{Source: "A", Relationship: "owns", Target: "A"}, // a self-loop: outgoing, once
	}
	if _, err := s.Import(ctx, tn, in, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	counts := func() map[string]uint32 {
		got := map[string]uint32{}
		_ = s.View(func(v *View) error {
			a, _ := v.Lookup(tn, "A")
			for _, x := range v.Ranked(a) {
				got[v.NodeName(x.Other())] = x.Alike
			}
			return nil
		})
		return got
	}
	want := map[string]uint32{"B": 3, "C": 3, "D": 3, "E": 2, "A": 2, "F": 2, "G": 2}
	if got := counts(); len(got) != len(want) {
		t.Fatalf("counts %v, want %v", got, want)
	} else {
		for k, n := range want {
			if got[k] != n {
				t.Fatalf("counts %v, want %v", got, want)
			}
		}
	}
	if err := s.DeleteTriplet(ctx, tn, "A", "calls", "C"); err != nil {
		t.Fatal(err)
	}
	if got := counts(); got["B"] != 2 || got["D"] != 2 || got["F"] != 2 {
		t.Fatalf("after a delete: %v", got)
	}
}
