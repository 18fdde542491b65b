package compose

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestRelevanceFloor: a line enters a graph block only when its query
// relevance (seed score × query match) is at least the floor's share of
// the best the block shows; 0 keeps every line the budget holds; the
// default is DefaultMinRelevance.
func TestRelevanceFloor(t *testing.T) {
	e := newEnv(t)
	e.load(t, tenA, architecture()...)
	ctx := context.Background()
	block := func(floor *float64) *GraphBlock {
		t.Helper()
		b, err := e.c.GraphBlock(ctx, GraphRequest{Identity: agent("org_a"), Scope: tenA, QueryText: "billing payments",
			BudgetTokens: 2000, TopK: 3, Depth: 3, MinRelevance: floor, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	all := block(w(0))
	if len(all.Triplets) < 3 {
		t.Fatalf("%d lines at floor 0: want a few to cut", len(all.Triplets))
	}
	for _, f := range []*float64{nil, w(0.05), w(0.3), w(0.7), w(1)} {
		floor := DefaultMinRelevance
		if f != nil {
			floor = *f
		}
		// The floor leaves out of the unfloored block the lines whose
		// relevance is under floor × the best shown before them (the
		// budget is ample: nothing else changes).
		var want []uint32
		best := 0.0
		for _, tr := range all.Triplets {
			rel := tr.Explain.SeedScore * tr.Explain.QueryMatch
			if rel >= floor*best {
				want = append(want, tr.Edge)
				best = max(best, rel)
			}
		}
		var got []uint32
		for _, tr := range block(f).Triplets {
			got = append(got, tr.Edge)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("floor %v: edges %v, want %v (of %d unfloored lines)", floor, got, want, len(all.Triplets))
		}
	}
	if cut := block(w(0.3)); len(cut.Triplets) == len(all.Triplets) {
		t.Fatalf("floor 0.3 cut nothing of %d lines: the test's graph no longer has a line that far below the best", len(all.Triplets))
	}
	// Out of range: refused, not clamped.
	for _, f := range []float64{-0.01, 1.01} {
		_, err := e.c.GraphBlock(ctx, GraphRequest{Identity: agent("org_a"), Scope: tenA, QueryText: "billing payments",
			BudgetTokens: 500, TopK: 10, Depth: 2, MinRelevance: w(f)})
		if !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("minRelevance %v: %v, want ErrInvalidRequest", f, err)
		}
	}
}

// TestRelevanceFloorObservations: a session block drops the observations
// whose relevance is under the floor's share of the best one's, and a
// floor of 0 keeps them.
func TestRelevanceFloorObservations(t *testing.T) {
	e := newSessionEnv(t)
	ids := e.observe(t, tenA,
		"billing invoices are generated nightly by the billing cron job",
		"the billing service retries failed invoices three times",
		"the staging cluster has two nodes",
		"logs are kept for thirty days")
	ctx := context.Background()
	session := func(floor *float64) []string {
		t.Helper()
		r := sreq("bug_fix", "billing invoices retried")
		r.MinRelevance = floor
		r.Explain = true
		b, err := e.c.SessionBlock(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return b.ObservationIDs
	}
	all, strict := session(w(0)), session(w(0.9))
	if !slices.Contains(strict, ids[0]) && !slices.Contains(strict, ids[1]) {
		t.Fatalf("floor 0.9 kept %v, want the best billing note", strict)
	}
	if len(strict) >= len(all) {
		t.Fatalf("floor 0.9 kept %d observations, floor 0 %d: want fewer", len(strict), len(all))
	}
	r := sreq("bug_fix", "billing")
	r.MinRelevance = w(2)
	if _, err := e.c.SessionBlock(ctx, r); !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("minRelevance 2: %v, want ErrInvalidRequest", err)
	}
}

// TestRelevanceFloorCodeGraph: in a code graph the default floor is none
// (a weak seed's callees are often what a change touches): a request that
// names no floor gets the block of floor 0, while a floor it names holds.
// Outside code graphs the default cuts what floor 0 keeps.
func TestRelevanceFloorCodeGraph(t *testing.T) {
	e := codeEnv(t)
	ctx := context.Background()
	block := func(floor *float64) []string {
		t.Helper()
		b, err := e.c.GraphBlock(ctx, GraphRequest{Identity: agent("org_a"), Scope: tenCode, QueryText: "doReconnect hangs",
			BudgetTokens: 4000, TopK: 10, Depth: 2, MinRelevance: floor})
		if err != nil {
			t.Fatal(err)
		}
		lines := []string{}
		for _, tr := range b.Triplets {
			lines = append(lines, lineOf(tr))
		}
		for _, s := range b.CodeMap {
			lines = append(lines, s.File+":"+s.Name)
		}
		return lines
	}
	all := block(w(0))
	if got := block(nil); !slices.Equal(got, all) {
		t.Fatalf("default floor in a code graph: %d lines, floor 0: %d", len(got), len(all))
	}
	if cut := block(w(DefaultMinRelevance)); len(cut) >= len(all) {
		t.Fatalf("floor %v named in a code graph kept %d of %d lines: a named floor must hold", DefaultMinRelevance, len(cut), len(all))
	}

	g := newEnv(t)
	g.load(t, tenA, architecture()...)
	graph := func(floor *float64) int {
		t.Helper()
		b, err := g.c.GraphBlock(ctx, GraphRequest{Identity: agent("org_a"), Scope: tenA, QueryText: "billing payments",
			BudgetTokens: 500, TopK: 3, Depth: 2, MinRelevance: floor})
		if err != nil {
			t.Fatal(err)
		}
		return len(b.Triplets)
	}
	if def, none := graph(nil), graph(w(0)); def >= none {
		t.Fatalf("default floor outside code graphs: %d lines, floor 0: %d; want fewer", def, none)
	}
}
