package sessionlog

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/enginetest"
)

var (
	tenA = engine.Tenant{Org: "org_a", Project: "proj_1"}
	tenB = engine.Tenant{Org: "org_b", Project: "proj_1"}
)

func mustNew(t *testing.T, st *engine.Store) *Store {
	t.Helper()
	s, err := New(st)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestInjectionLogsAndFeedback(t *testing.T) {
	st, dir := enginetest.OpenDir(t, &engine.Options{Dim: 2})
	s := mustNew(t, st)
	ctx := context.Background()
	if _, err := st.Import(ctx, tenA, []engine.TripletInput{{Source: "AuthService", Relationship: "depends_on", Target: "PostgresDB"}}, engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	ts, _ := st.QueryTriplets(tenA, engine.TripletQuery{})
	ids, err := st.AddObservations(ctx, tenA, []engine.ObservationInput{{Content: "tokens expire", Vector: []float32{1, 0}}}, engine.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l := InjectionLog{SessionID: "ses_1", WorkType: "bug_fix", BudgetTokens: 750, ActualTokens: 40, ObservationIDs: ids,
		GraphNodeIDs: []string{ts[0].SourceNodeID, ts[0].TargetNodeID}, OrgID: tenA.Org, ProjectID: tenA.Project, QueryText: "q",
		GraphEdgeKeys: []engine.EdgeKey{{SourceID: ts[0].SourceNodeID, TargetID: ts[0].TargetNodeID, RelationshipName: "depends_on"}},
		Timestamp:     time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	id1, err := s.PutInjectionLog(l)
	if err != nil {
		t.Fatal(err)
	}
	l.Timestamp = l.Timestamp.Add(time.Minute)
	id2, _ := s.PutInjectionLog(l)
	if _, err := s.PutInjectionLog(InjectionLog{SessionID: "bad id", OrgID: "o"}); err == nil {
		t.Fatal("bad session id accepted")
	}
	logs, err := s.InjectionLogs(tenA.Org, "ses_1")
	if err != nil || len(logs) != 2 || logs[0].ID != id2 || logs[1].ID != id1 {
		t.Fatalf("logs: %+v %v", logs, err)
	}
	// Two logs: helpful applies twice (once per log), then never again.
	res, err := s.ApplyFeedback(ctx, tenA.Org, "ses_1", OutcomeHelpful, 0.2)
	if err != nil || res != (FeedbackResult{Observations: 1, Nodes: 2, Edges: 1, Logs: 2}) {
		t.Fatalf("feedback: %+v %v", res, err)
	}
	want := 0.5
	for range 2 {
		want = 0.8*want + 0.2
	}
	check := func(w float64) {
		t.Helper()
		o, _ := st.Observation(tenA, ids[0])
		q, _ := st.QueryTriplets(tenA, engine.TripletQuery{})
		n, _ := st.Node(tenA, q[0].SourceNodeID)
		for _, got := range []float64{o.Weight, q[0].Weight, n.Weight} {
			if math.Abs(got-w) > 1e-12 {
				t.Fatalf("weight %v, want %v", got, w)
			}
		}
	}
	check(want)
	if res, _ := s.ApplyFeedback(ctx, tenA.Org, "ses_1", OutcomeHelpful, 0.2); res.Logs != 0 {
		t.Fatalf("helpful applied twice: %+v", res)
	}
	// Another org's feedback touches nothing of this org's session.
	if res, _ := s.ApplyFeedback(ctx, tenB.Org, "ses_1", OutcomeMisleading, 0.2); res.Logs != 0 {
		t.Fatalf("foreign org applied feedback: %+v", res)
	}
	st = enginetest.Reopen(t, st, dir, &engine.Options{Dim: 2})
	s = mustNew(t, st)
	check(want)
	if _, err := s.ApplyFeedback(ctx, tenA.Org, "ses_1", OutcomeMisleading, 0.2); err != nil {
		t.Fatal(err)
	}
	want = 0.8 * (0.8 * want)
	check(want)
	if _, err := s.ApplyFeedback(ctx, tenA.Org, "ses_1", "great", 0.2); err == nil {
		t.Fatal("unknown outcome accepted")
	}
}

// TestDropOrg deletes an org's injection logs and nothing of an org whose
// id starts with the same letters.
func TestDropOrg(t *testing.T) {
	st, _ := enginetest.OpenDir(t, nil)
	s := mustNew(t, st)
	for _, org := range []string{"o", "o1"} {
		for _, ses := range []string{"ses_1", "ses_2"} {
			if _, err := s.PutInjectionLog(InjectionLog{SessionID: ses, OrgID: org, WorkType: "bug_fix"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n, err := s.DropOrg("o"); err != nil || n != 2 {
		t.Fatalf("DropOrg: %d %v, want 2", n, err)
	}
	for _, ses := range []string{"ses_1", "ses_2"} {
		if ls, err := s.InjectionLogs("o", ses); err != nil || len(ls) != 0 {
			t.Errorf("o's logs of %s: %v %v", ses, ls, err)
		}
		if ls, err := s.InjectionLogs("o1", ses); err != nil || len(ls) != 1 {
			t.Errorf("o1's logs of %s: %v %v", ses, ls, err)
		}
	}
}
