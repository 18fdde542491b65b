package compose

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

// TestSelfLearningSession replays a scripted session: a tool fails, a
// similar failure follows in another session, a fix is recorded, the tool
// then succeeds; the triplets and weights are checked, and a Graph RAG
// query for a similar error surfaces the fix.
func TestSelfLearningSession(t *testing.T) {
	e := newSessionEnv(t)
	ctx := context.Background()
	run := func(r ToolResult) *LearnResult {
		t.Helper()
		r.Scope = tenA
		res, err := e.c.ToolResult(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	lines := func(res *LearnResult) []string {
		var out []string
		for _, x := range res.Triplets {
			out = append(out, x.Source+" --"+x.Relationship+"--> "+x.Target)
		}
		return out
	}
	r1 := run(ToolResult{SessionID: "ses_1", Tool: "http_client", Error: "timeout calling payments API"})
	want := []string{
		"error:timeout calling payments API --caused_by--> tool:http_client",
		"error:timeout calling payments API --in_session--> session:ses_1",
	}
	if !slices.Equal(lines(r1), want) {
		t.Fatalf("first failure: %q", lines(r1))
	}
	r2 := run(ToolResult{SessionID: "ses_2", Tool: "http_client", Error: "timeout calling payments API (v2 endpoint)"})
	if !slices.Contains(lines(r2), "error:timeout calling payments API (v2 endpoint) --similar_to--> error:timeout calling payments API") {
		t.Fatalf("similar error not linked: %q", lines(r2))
	}
	r3 := run(ToolResult{SessionID: "ses_1", Tool: "http_client", Success: false, Error: "timeout calling payments API",
		Fix: "raise the client timeout to 60s and retry with backoff"})
	if !slices.Contains(lines(r3), "error:timeout calling payments API --resolved_by--> fix:raise the client timeout to 60s and retry with backoff") ||
		!slices.Contains(lines(r3), "fix:raise the client timeout to 60s and retry with backoff --learned_from--> session:ses_1") {
		t.Fatalf("fix: %q", lines(r3))
	}
	// A fix reported alone attaches to the session's last error of the tool.
	r4 := run(ToolResult{SessionID: "ses_2", Tool: "http_client", Success: true, Fix: "use the v2 client with a circuit breaker"})
	if !slices.Contains(lines(r4), "error:timeout calling payments API (v2 endpoint) --resolved_by--> fix:use the v2 client with a circuit breaker") {
		t.Fatalf("fix without error: %q", lines(r4))
	}
	// That success came after ses_2's failure: the resolved_by edges of the
	// failure and of its similar error rose by one EMA step of 0.03.
	if r4.Propagated != 2 {
		t.Fatalf("propagated %d", r4.Propagated)
	}
	ts, _ := e.st.QueryTriplets(tenA, engine.TripletQuery{Predicate: "resolved_by"})
	for _, x := range ts {
		if want := 0.97*0.5 + 0.03; math.Abs(x.Weight-want) > 1e-12 {
			t.Fatalf("%s weight %v, want %v", x.Target, x.Weight, want)
		}
	}
	// A success with no earlier failure in its session moves nothing.
	if r := run(ToolResult{SessionID: "ses_3", Tool: "http_client", Success: true}); r.Propagated != 0 || len(r.Triplets) != 0 {
		t.Fatalf("clean success: %+v", r)
	}
	// The next Graph RAG query for a similar error surfaces the fix.
	b, err := e.c.RAG(ctx, RAGRequest{Identity: agent("org_a"), Scope: tenA, QueryText: "timeout calling payments API from checkout"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.Block, "(via resolved_by from error:timeout calling payments API") || !strings.Contains(b.Block, "fix:raise the client timeout") {
		t.Fatalf("RAG does not surface the fix:\n%s", b.Block)
	}
	if _, err := e.c.ToolResult(ctx, ToolResult{SessionID: "ses_4", Scope: tenA, Tool: "x", Success: false}); err == nil {
		t.Fatal("a failure without its error accepted")
	}
}
