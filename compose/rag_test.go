package compose

import (
	"context"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

func TestGraphRAG(t *testing.T) {
	e := newSessionEnv(t)
	ctx := context.Background()
	e.load(t, tenA,
		engine.TripletInput{Source: "error:timeout", Relationship: "caused_by", Target: "tool:http_client"},
		engine.TripletInput{Source: "error:timeout", Relationship: "resolved_by", Target: "fix:retry_logic", Weight: w(0.9)},
		engine.TripletInput{Source: "error:timeout", Relationship: "in_session", Target: "session_abc"},
		engine.TripletInput{Source: "fix:retry_logic", Relationship: "related_to", Target: "exponential backoff"},
		engine.TripletInput{Source: "fix:retry_logic", Relationship: "learned_from", Target: "session_abc"},
	)
	e.observe(t, tenA, "The http client times out after 30s; payments API is slow at peak")
	b, err := e.c.RAG(ctx, RAGRequest{Identity: agent("org_a"), Scope: tenA, QueryText: "timeout calling payments API error:timeout"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.Block, RAGSemanticHeader+"\n### [") || !strings.Contains(b.Block, "\n\n"+RAGExpandedHeader+"\n"+RAGPreface+"\n- **") {
		t.Fatalf("block:\n%s", b.Block)
	}
	if !strings.Contains(b.Block, "- **fix:retry_logic** (via resolved_by from error:timeout)") ||
		!strings.Contains(b.Block, "- **exponential backoff** (via related_to from fix:retry_logic)") {
		t.Fatalf("expansion:\n%s", b.Block)
	}
	if strings.Contains(b.Block, "session_abc") {
		t.Fatalf("followed a predicate not asked for:\n%s", b.Block)
	}
	for i := 1; i < len(b.Expanded); i++ {
		if b.Expanded[i].Score > b.Expanded[i-1].Score {
			t.Fatal("expansion not in score order")
		}
	}
	// Only the predicates asked for; depth 1 stops at the first hop.
	b, _ = e.c.RAG(ctx, RAGRequest{Identity: agent("org_a"), Scope: tenA, QueryText: "error:timeout", MaxTraversalDepth: 1, Predicates: []string{"caused_by"}})
	if len(b.Expanded) != 1 || b.Expanded[0].Node != "tool:http_client" {
		t.Fatalf("caused_by only: %+v", b.Expanded)
	}
	// The budget holds; another org sees nothing.
	for budget := 5; budget < 200; budget += 13 {
		b, _ := e.c.RAG(ctx, RAGRequest{Identity: agent("org_a"), Scope: tenA, QueryText: "timeout", BudgetTokens: budget})
		if b.ActualTokens > budget {
			t.Fatalf("budget %d: %d tokens", budget, b.ActualTokens)
		}
	}
	b, _ = e.c.RAG(ctx, RAGRequest{Identity: agent("org_b"), Scope: tenA, QueryText: "timeout error"})
	if b.Block != "" {
		t.Fatalf("other org:\n%s", b.Block)
	}
	if _, err := e.c.RAG(ctx, RAGRequest{Identity: agent("org_a"), Scope: tenA, QueryText: "x", MaxExpansionResults: 1000}); err == nil {
		t.Fatal("1000 expansion results accepted")
	}
}
