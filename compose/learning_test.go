package compose

import (
	"context"
	"fmt"
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
	// A success of a tool that never failed moves nothing; a success of
	// http_client in a session without failures still raises the fixes of
	// its earlier errors (TestPropagationAcrossSessions).
	if r := run(ToolResult{SessionID: "ses_3", Tool: "grep", Success: true}); r.Propagated != 0 || len(r.Triplets) != 0 {
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

// TestPropagationAcrossSessions: a success raises the fixes of every error
// the tool caused, whichever session recorded them (the reference follows
// every error --caused_by--> tool edge), and the fixes of their similar
// errors, and nothing else.
func TestPropagationAcrossSessions(t *testing.T) {
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
	// Session A: http_client fails and the fix is recorded.
	run(ToolResult{SessionID: "ses_a", Tool: "http_client", Error: "timeout calling payments API", Fix: "retry with backoff"})
	// Session C: another tool fails with a similar error, and its fix.
	r := run(ToolResult{SessionID: "ses_c", Tool: "grpc_client", Error: "timeout calling payments API (grpc)", Fix: "raise the grpc deadline"})
	if !slices.ContainsFunc(r.Triplets, func(x LearnedTriplet) bool { return x.Relationship == "similar_to" }) {
		t.Fatalf("setup: the grpc error is not similar to the http one: %+v", r.Triplets)
	}
	// Session D: an unrelated tool's unrelated error and fix.
	run(ToolResult{SessionID: "ses_d", Tool: "linter", Error: "unused import in main.go", Fix: "remove the import"})
	weights := func() map[string]float64 {
		ts, err := e.st.QueryTriplets(tenA, engine.TripletQuery{Predicate: "resolved_by"})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]float64{}
		for _, x := range ts {
			m[x.Target] = x.Weight
		}
		return m
	}
	before := weights()
	if len(before) != 3 {
		t.Fatalf("setup: fixes %v", before)
	}
	// Session B: http_client succeeds, with no failure of its own.
	res := run(ToolResult{SessionID: "ses_b", Tool: "http_client", Success: true})
	after := weights()
	step := func(x float64) float64 { return 0.97*x + 0.03 } // alpha 0.1 x 0.3, target 1
	for fix, want := range map[string]float64{
		"fix:retry with backoff":      step(before["fix:retry with backoff"]),
		"fix:raise the grpc deadline": step(before["fix:raise the grpc deadline"]),
		"fix:remove the import":       before["fix:remove the import"],
	} {
		if math.Abs(after[fix]-want) > 1e-12 {
			t.Errorf("%s: weight %v -> %v, want %v", fix, before[fix], after[fix], want)
		}
	}
	if res.Propagated != 2 {
		t.Errorf("propagated %d, want 2", res.Propagated)
	}
}

// TestPropagationBounded: a success visits at most MaxFanout errors caused
// by the tool, the most recently linked first.
func TestPropagationBounded(t *testing.T) {
	e := newSessionEnv(t)
	e.c.Expand.MaxFanout = 2
	ctx := context.Background()
	failures := []struct{ err, fix string }{
		{"disk full on var partition", "rotate the logs"},
		{"permission denied for user bob", "add bob to the group"},
		{"certificate expired yesterday", "renew the certificate"},
		{"segmentation fault in parser", "bounds check the index"},
	}
	for i, f := range failures {
		r, err := e.c.ToolResult(ctx, ToolResult{SessionID: fmt.Sprintf("ses_%d", i), Scope: tenA, Tool: "deploy", Error: f.err, Fix: f.fix})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(r.Triplets, func(x LearnedTriplet) bool { return x.Relationship == "similar_to" }) {
			t.Fatalf("setup: errors meant to be unrelated are similar: %+v", r.Triplets)
		}
	}
	res, err := e.c.ToolResult(ctx, ToolResult{SessionID: "ses_ok", Scope: tenA, Tool: "deploy", Success: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Propagated != 2 {
		t.Fatalf("propagated %d, want the cap of 2", res.Propagated)
	}
	ts, _ := e.st.QueryTriplets(tenA, engine.TripletQuery{Predicate: "resolved_by"})
	var raised []string
	for _, x := range ts {
		if x.Weight > 0.5 {
			raised = append(raised, x.Target)
		}
	}
	slices.Sort(raised)
	if want := []string{"fix:bounds check the index", "fix:renew the certificate"}; !slices.Equal(raised, want) {
		t.Fatalf("raised %q, want the two latest errors' fixes %q", raised, want)
	}
}
