package compose

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kgctx/kgctx/engine"
)

// repeatedLine returns the first non-blank line of block that appears
// twice ("" when none does). Blank lines are the format's separators.
func repeatedLine(block string) string {
	seen := map[string]bool{}
	for _, l := range strings.Split(block, "\n") {
		if l == "" {
			continue
		}
		if seen[l] {
			return l
		}
		seen[l] = true
	}
	return ""
}

// checkSessionGraphPart asserts the session block's graph part is exactly
// the graph block the same query, scope and identity get at the room the
// composer had for it: its share of the budget, or, when the observations
// left more, all they left (total - observations - the blank line).
func checkSessionGraphPart(t testing.TB, e *env, req SessionRequest, b *SessionBlock) (secondRender bool) {
	t.Helper()
	if r := repeatedLine(b.Block); r != "" {
		t.Fatalf("budget %d: line %q repeats:\n%s", b.BudgetTokens, r, b.Block)
	}
	obs, graph := sessionParts(t, b.Block)
	total := b.BudgetTokens * 4
	share := int(float64(total) * DefaultGraphShare)
	final := total
	if obs != "" {
		final = total - utf8.RuneCountInString(obs) - 2
	}
	room := max(share, final)
	want := e.c.graphBlock(context.Background(), GraphRequest{Identity: req.Identity, Scope: req.Scope, QueryText: b.QueryText,
		TopK: DefaultTopK, Depth: DefaultDepth}, room)
	if graph != want.Block {
		t.Fatalf("budget %d (room %d of %d, share %d): session graph part\n%s\n--- differs from the graph block at that room\n%s",
			b.BudgetTokens, room, total, share, graph, want.Block)
	}
	keys := make([]engine.EdgeKey, 0, len(want.Triplets))
	for _, x := range want.Triplets {
		keys = append(keys, engine.EdgeKey{SourceID: x.SourceNodeID, TargetID: x.TargetNodeID, RelationshipName: x.Relationship})
	}
	if !slices.Equal(keys, b.GraphEdgeKeys) {
		t.Fatalf("budget %d: edge keys %v, graph block's %v", b.BudgetTokens, b.GraphEdgeKeys, keys)
	}
	if room > share {
		atShare := e.c.graphBlock(context.Background(), GraphRequest{Identity: req.Identity, Scope: req.Scope, QueryText: b.QueryText,
			TopK: DefaultTopK, Depth: DefaultDepth}, share)
		secondRender = atShare.Block != want.Block
	}
	return secondRender
}

// hubGraph is a graph with hundreds of candidates for the query "Alpha":
// Alpha calls 40 hubs, each depending on 6 leaves, weights varied so the
// ranking is not the insertion order.
func hubGraph() []engine.TripletInput {
	var in []engine.TripletInput
	for i := range 40 {
		hub := fmt.Sprintf("Hub%02d", i)
		in = append(in, engine.TripletInput{Source: "Alpha", Relationship: "calls", Target: hub, Weight: w(0.3 + float64(i*7%10)/20)})
		for j := range 6 {
			in = append(in, engine.TripletInput{Source: hub, Relationship: "depends_on", Target: fmt.Sprintf("Leaf%02d_%d", i, j),
				Weight: w(0.2 + float64((i+j)%8)/10)})
		}
	}
	return in
}

// TestSessionGraphPartIsGraphBlock: the session block renders its graph
// part a second time when the observations leave room; that render must
// start from the full candidate list, not from what the first render left
// of it (which repeated lines and lost the best triplets).
func TestSessionGraphPartIsGraphBlock(t *testing.T) {
	e := newSessionEnv(t)
	e.load(t, tenA, hubGraph()...)
	e.observe(t, tenA, "Alpha calls the hubs in order", "Alpha retries the hubs twice")
	ctx := context.Background()
	seconds := 0
	for _, budget := range []int{60, 100, 200, 300, 400, 750, 1000, 1500, 3000} {
		if err := e.c.Settings.SetBudgets(BudgetConfig{Defaults: map[string]int{WorkBugFix: budget}}); err != nil {
			t.Fatal(err)
		}
		req := sreq(WorkBugFix, "Alpha hubs")
		b, err := e.c.SessionBlock(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if b.ActualTokens > budget || !strings.Contains(b.Block, ObservationsHeader) || !strings.Contains(b.Block, GraphHeader) {
			t.Fatalf("budget %d: %d tokens\n%s", budget, b.ActualTokens, b.Block)
		}
		if checkSessionGraphPart(t, e, req, b) {
			seconds++
		}
	}
	if seconds == 0 {
		t.Fatal("no budget made the graph part take the observations' leftover room: the test proves nothing")
	}
}

// randomGraph loads a random graph into two projects of org_a with names
// from a small vocabulary, so names repeat across projects (an org-wide
// block meets two nodes of the same name) and edges share endpoints.
func randomGraph(t testing.TB, e *env, rng *rand.Rand) {
	vocab := []string{"auth", "billing", "payments", "token", "db", "cache", "router", "parser", "invoice", "session"}
	rels := []string{"calls", "depends_on", "contains", "related_to", "resolved_by", "caused_by", "similar_to"}
	name := func() string { return vocab[rng.IntN(len(vocab))] + "_" + vocab[rng.IntN(len(vocab))] }
	for _, ten := range []engine.Tenant{tenA, tenA2} {
		// The same triplet in both projects: an org-wide block meets it twice.
		in := []engine.TripletInput{{Source: "auth_token", Relationship: "calls", Target: "db_cache", Weight: w(0.9)}}
		for range 30 + rng.IntN(60) {
			in = append(in, engine.TripletInput{Source: name(), Relationship: rels[rng.IntN(len(rels))], Target: name(),
				Weight: w(float64(1+rng.IntN(9)) / 10)})
		}
		e.load(t, ten, in...)
		var obs []string
		for range 3 + rng.IntN(6) {
			obs = append(obs, name()+" "+name()+" "+vocab[rng.IntN(len(vocab))])
		}
		obs = append(obs, obs[0]) // the same text twice
		e.observe(t, ten, obs...)
	}
}

// TestNoRepeatedLineProperty: over random graphs and budgets, no block of
// any type repeats a line, and the session block's graph part is the graph
// block at its room.
func TestNoRepeatedLineProperty(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 7))
		e := newSessionEnv(t)
		randomGraph(t, e, rng)
		in := NewInjector(e.c)
		cfg := DefaultInSessionConfig()
		cfg.LatencyBudgetMs = 10_000 // the property, not the latency, is under test
		cfg.MinRelevanceScore = 0.01
		if err := e.c.Settings.SetInSessionConfig(cfg); err != nil {
			t.Fatal(err)
		}
		vocab := []string{"auth", "billing", "payments", "token", "db", "cache", "router", "parser"}
		for i := range 12 {
			q := vocab[rng.IntN(len(vocab))] + " " + vocab[rng.IntN(len(vocab))]
			budget := 10 + rng.IntN(600)
			for _, scope := range []engine.Tenant{tenA, {Org: "org_a"}} {
				g, err := e.c.GraphBlock(ctx, GraphRequest{Identity: agent("org_a"), Scope: scope, QueryText: q, BudgetTokens: budget, TopK: 10, Depth: 2})
				if err != nil {
					t.Fatal(err)
				}
				if r := repeatedLine(g.Block); r != "" {
					t.Fatalf("seed %d scope %v budget %d: graph block repeats %q:\n%s", seed, scope, budget, r, g.Block)
				}
				checkBlock(t, g, budget)
				rb, err := e.c.RAG(ctx, RAGRequest{Identity: agent("org_a"), Scope: scope, QueryText: q, BudgetTokens: budget, TopK: 10})
				if err != nil {
					t.Fatal(err)
				}
				if r := repeatedLine(rb.Block); r != "" {
					t.Fatalf("seed %d scope %v budget %d: RAG block repeats %q:\n%s", seed, scope, budget, r, rb.Block)
				}
			}
			if err := e.c.Settings.SetBudgets(BudgetConfig{Defaults: map[string]int{WorkBugFix: budget}}); err != nil {
				t.Fatal(err)
			}
			req := sreq(WorkBugFix, q)
			req.SessionID = fmt.Sprintf("ses_%d_%d", seed, i)
			b, err := e.c.SessionBlock(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			checkSessionGraphPart(t, e, req, b)
			x := ev("Edit", nil, q)
			x.SessionID = req.SessionID + "_live"
			r, err := in.Handle(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			if l := repeatedLine(r.Block); l != "" {
				t.Fatalf("seed %d: in-session block repeats %q:\n%s", seed, l, r.Block)
			}
		}
	}
}
