package compose

import (
	"context"
	"fmt"
	"testing"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/traverse"
)

// TestGraphBlockAllocsBounded pins the allocations of a block: the same
// seed, query and budget over a small neighbourhood (tens of candidates) and
// a large one (thousands) must allocate the same bounded amount. Expansion,
// scoring and the policy checks reuse pooled scratch, so what allocates is
// the seed search and the output, which the budget bounds.
func TestGraphBlockAllocsBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts do not hold under the race detector")
	}
	measure := func(fanout int) (allocs float64, cands int) {
		e := newEnv(t)
		var in []engine.TripletInput
		for i := range fanout {
			hub := fmt.Sprintf("Hub%03d", i)
			in = append(in, engine.TripletInput{Source: "Alpha", Relationship: "calls", Target: hub, Weight: w(0.9)})
			for j := range fanout {
				in = append(in, engine.TripletInput{Source: hub, Relationship: "calls", Target: fmt.Sprintf("Leaf%03d_%03d", i, j), Weight: w(0.5)})
			}
		}
		e.load(t, tenA, in...)
		req := GraphRequest{Identity: agent("org_a"), Scope: tenA, QueryText: "Alpha", BudgetTokens: 60, TopK: 1, Depth: 2}
		ctx := context.Background()
		b, err := e.c.GraphBlock(ctx, req)
		if err != nil || len(b.Triplets) == 0 {
			t.Fatalf("block: %v %+v", err, b)
		}
		allocs = testing.AllocsPerRun(50, func() {
			if _, err := e.c.GraphBlock(ctx, req); err != nil {
				t.Fatal(err)
			}
		})
		return allocs, b.Candidates
	}
	small, smallCands := measure(4)
	large, largeCands := measure(60)
	t.Logf("allocations per block: %.0f with %d candidates, %.0f with %d candidates", small, smallCands, large, largeCands)
	if largeCands < 50*smallCands {
		t.Fatalf("the large graph gives only %d candidates against %d", largeCands, smallCands)
	}
	const bound = 300
	if large > bound || small > bound {
		t.Fatalf("a block allocates %.0f / %.0f times, over the bound of %d", small, large, bound)
	}
	if large > small+40 {
		t.Fatalf("allocations grow with candidates: %.0f for %d candidates vs %.0f for %d", large, largeCands, small, smallCands)
	}
}

// TestExpandAllocatesNothing: a warm expansion allocates nothing at all.
func TestExpandAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts do not hold under the race detector")
	}
	e := newEnv(t)
	e.load(t, tenA, architecture()...)
	_ = e.st.View(func(v *engine.View) error {
		auth, _ := v.Lookup(tenA, "AuthService")
		seeds := []traverse.Seed{{Node: auth, Score: 1}}
		dst := traverse.Expand(v, seeds, traverse.Options{}, nil)
		if n := testing.AllocsPerRun(100, func() { dst = traverse.Expand(v, seeds, traverse.Options{}, dst) }); n != 0 {
			t.Errorf("Expand allocates %v times", n)
		}
		return nil
	})
}
