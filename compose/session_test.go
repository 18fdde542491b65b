package compose

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/sessionlog"
	"github.com/kgctx/kgctx/policy"
)

func newSessionEnv(t *testing.T) *env {
	e := newEnv(t)
	e.c.Settings = NewSettings(e.st)
	return e
}

func (e *env) observe(t testing.TB, ten engine.Tenant, contents ...string) []string {
	t.Helper()
	return e.observeIn(t, ten, "", contents...)
}

// observeIn stores contents as observations of session (one conversation's
// turns, in order; "" for independent notes).
func (e *env) observeIn(t testing.TB, ten engine.Tenant, session string, contents ...string) []string {
	t.Helper()
	var in []engine.ObservationInput
	for _, c := range contents {
		in = append(in, engine.ObservationInput{Content: c, Metadata: engine.ObservationMeta{SessionID: session}})
	}
	ids, err := e.st.AddObservations(context.Background(), ten, in, engine.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func sreq(workType, query string) SessionRequest {
	return SessionRequest{SessionID: "ses_1", WorkType: workType, Scope: tenA, Identity: agent("org_a"), QueryText: query, Graph: true}
}

func TestRetrievalQueryText(t *testing.T) {
	wi := WorkItem{Identifier: "ENG-42", IssueID: "9b2d", Title: "Null pointer in auth", Description: "Middleware crashes\nwhen the token is empty"}
	cases := []struct {
		q    string
		wi   WorkItem
		want string
	}{
		{"explicit", wi, "explicit"},
		{"", wi, "ENG-42 Null pointer in auth Middleware crashes"},
		{"", WorkItem{Identifier: "ENG-42", IssueID: "9b2d"}, "ENG-42"},
		{"  ", WorkItem{IssueID: "9b2d"}, "9b2d"},
		{"", WorkItem{}, "ses_1"},
		{"", WorkItem{Title: "  ", Description: "\n\n"}, "ses_1"},
	}
	for _, c := range cases {
		if got := RetrievalQueryText(c.q, c.wi, "ses_1"); got != c.want {
			t.Errorf("RetrievalQueryText(%q, %+v) = %q, want %q", c.q, c.wi, got, c.want)
		}
	}
}

func TestSessionBlockFormatAndBudget(t *testing.T) {
	e := newSessionEnv(t)
	e.load(t, tenA, architecture()...)
	long := "Auth middleware " + strings.Repeat("detail ", 80)
	ids := e.observe(t, tenA, "Auth middleware rejects expired tokens", long, "Billing retries twice")
	ctx := context.Background()
	b, err := e.c.SessionBlock(ctx, sreq(WorkBugFix, "auth middleware null pointer"))
	if err != nil {
		t.Fatal(err)
	}
	if b.BudgetTokens != 750 || b.ActualTokens > 750 || b.ActualTokens != Tokens(b.Block) {
		t.Fatalf("budget %d, tokens %d", b.BudgetTokens, b.ActualTokens)
	}
	parts := strings.Split(b.Block, "\n\n")
	if len(parts) != 2 || !strings.HasPrefix(parts[0], ObservationsHeader+"\n- [") || !strings.HasPrefix(parts[1], GraphHeader+"\n- ") {
		t.Fatalf("block shape:\n%s", b.Block)
	}
	for _, l := range strings.Split(parts[0], "\n")[1:] {
		if !strings.HasSuffix(l, "(weight: 0.50)") || !strings.HasPrefix(l, "- [obs_") {
			t.Fatalf("observation line %q", l)
		}
		if ex := l[strings.Index(l, "] ")+2 : strings.LastIndex(l, " (weight:")]; utf8.RuneCountInString(ex) > MaxExcerptRunes {
			t.Fatalf("excerpt of %d runes", utf8.RuneCountInString(ex))
		}
	}
	if !strings.Contains(parts[0], ids[0]) || len(b.ObservationIDs) == 0 || len(b.GraphNodeIDs) == 0 || len(b.GraphEdgeKeys) == 0 {
		t.Fatalf("ids: %+v", b)
	}
	// The log holds exactly what was returned.
	logs, err := e.c.Logs.InjectionLogs("org_a", "ses_1")
	if err != nil || len(logs) != 1 || logs[0].ID != b.LogID || logs[0].ActualTokens != b.ActualTokens ||
		fmt.Sprint(logs[0].ObservationIDs) != fmt.Sprint(b.ObservationIDs) || fmt.Sprint(logs[0].GraphEdgeKeys) != fmt.Sprint(b.GraphEdgeKeys) ||
		logs[0].QueryText != "auth middleware null pointer" || logs[0].WorkType != WorkBugFix {
		t.Fatalf("log: %+v %v", logs, err)
	}
	// Budgets per work type, org overrides win, unknown is 500.
	if err := e.c.Settings.SetBudgets(BudgetConfig{Defaults: map[string]int{WorkBugFix: 750, WorkFeature: 400, WorkRefactor: 600, WorkChore: 300},
		OrgOverrides: map[string]map[string]int{"org_a": {WorkFeature: 60}}}); err != nil {
		t.Fatal(err)
	}
	for wt, want := range map[string]int{WorkFeature: 60, WorkRefactor: 600, WorkChore: 300, "exploration": 500} {
		b, err := e.c.SessionBlock(ctx, sreq(wt, "auth middleware"))
		if err != nil || b.BudgetTokens != want || b.ActualTokens > want {
			t.Fatalf("%s: budget %d tokens %d (%v)", wt, b.BudgetTokens, b.ActualTokens, err)
		}
	}
	// Every budget from tiny to large holds: never over, graph at most its
	// share unless observations leave room.
	for budget := 10; budget <= 900; budget += 37 {
		if err := e.c.Settings.SetBudgets(BudgetConfig{Defaults: map[string]int{WorkBugFix: budget}}); err != nil {
			t.Fatal(err)
		}
		b, err := e.c.SessionBlock(ctx, sreq(WorkBugFix, "auth middleware tokens billing"))
		if err != nil {
			t.Fatal(err)
		}
		if b.ActualTokens > budget {
			t.Fatalf("budget %d: %d tokens", budget, b.ActualTokens)
		}
	}
}

// TestSessionGatesTruthTable walks memoryEnabled x graphEnabled x
// kg_enabled x recall matrix x the request's graph flag.
func TestSessionGatesTruthTable(t *testing.T) {
	e := newSessionEnv(t)
	e.load(t, tenA, architecture()...)
	e.observe(t, tenA, "Auth middleware rejects expired tokens")
	ctx := context.Background()
	n := 0
	for _, memory := range []bool{false, true} {
		for _, graph := range []bool{false, true} {
			for _, kg := range []bool{false, true} {
				for _, wt := range []string{WorkBugFix, WorkChore, "unknown_kind"} {
					for _, asked := range []bool{false, true} {
						if err := e.c.Settings.SetMemoryConfig(tenA, MemoryConfig{MemoryEnabled: memory, GraphEnabled: graph}); err != nil {
							t.Fatal(err)
						}
						if err := e.c.Settings.SetPlan("org_a", OrgPlan{Features: map[string]bool{"kg_enabled": kg}}); err != nil {
							t.Fatal(err)
						}
						req := sreq(wt, "auth middleware")
						req.Graph = asked
						req.SessionID = fmt.Sprintf("ses_%d", n)
						n++
						b, err := e.c.SessionBlock(ctx, req)
						if err != nil {
							t.Fatal(err)
						}
						recall := wt != WorkChore // defaults: chore off, unknown on
						wantGraph := memory && (graph || kg) && recall && asked
						hasGraph := strings.Contains(b.Block, GraphHeader)
						hasObs := strings.Contains(b.Block, ObservationsHeader)
						if hasGraph != wantGraph || b.Gates.GraphIncluded != wantGraph || hasObs != memory || (!memory && b.Block != "") {
							t.Fatalf("memory=%v graph=%v kg=%v work=%s asked=%v: graph %v obs %v block %q", memory, graph, kg, wt, asked, hasGraph, hasObs, b.Block)
						}
						if logs, _ := e.c.Logs.InjectionLogs(req.Scope.Org, req.SessionID); len(logs) != 1 {
							t.Fatalf("not logged: %v", logs)
						}
					}
				}
			}
		}
	}
	// An org override of the recall matrix turns chore on for org_a only.
	e.c.Settings.SetMemoryConfig(tenA, MemoryConfig{MemoryEnabled: true, GraphEnabled: true})
	m := DefaultRecallMatrix()
	m.OrgOverrides["org_a"] = map[string]bool{WorkChore: true}
	if err := e.c.Settings.SetRecallMatrix(m); err != nil {
		t.Fatal(err)
	}
	if b, _ := e.c.SessionBlock(ctx, sreq(WorkChore, "auth middleware")); !b.Gates.GraphIncluded {
		t.Fatal("org override ignored")
	}
}

func TestSessionFeedbackChangesRankings(t *testing.T) {
	e := newSessionEnv(t)
	ctx := context.Background()
	e.load(t, tenA, engine.TripletInput{Source: "Gateway", Relationship: "calls", Target: "AlphaService", Weight: w(0.6)},
		engine.TripletInput{Source: "Gateway", Relationship: "calls", Target: "BetaService", Weight: w(0.5)})
	// Two notes about as relevant (the same words, as long): feedback decides.
	ids := e.observe(t, tenA, "gateway timeout fixed by raising the pool size", "gateway timeout fixed by raising the idle limit")
	first := func() (string, string) {
		b, err := e.c.SessionBlock(ctx, sreq(WorkBugFix, "gateway timeout"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.Block, "\n")
		var obs, trip string
		for _, l := range lines {
			if obs == "" && strings.HasPrefix(l, "- [") {
				obs = l[3:strings.Index(l, "]")]
			}
			if trip == "" && strings.Contains(l, " → ") {
				trip = l
			}
		}
		return obs, trip
	}
	o0, t0 := first()
	if t0 != "- Gateway → calls → AlphaService" {
		t.Fatalf("first triplet %q", t0)
	}
	top := o0
	other := ids[0]
	if top == ids[0] {
		other = ids[1]
	}
	// The session's feedback: misleading, twice (two sessions), for the top
	// observation only; the graph's AlphaService edge goes down too.
	for i := range 3 {
		sess := fmt.Sprintf("ses_fb%d", i)
		l := sessionlog.InjectionLog{SessionID: sess, OrgID: "org_a", ProjectID: "proj_1", ObservationIDs: []string{top}}
		q, _ := e.st.QueryTriplets(tenA, engine.TripletQuery{Object: "AlphaService"})
		l.GraphEdgeKeys = []engine.EdgeKey{{SourceID: q[0].SourceNodeID, TargetID: q[0].TargetNodeID, RelationshipName: "calls"}}
		if _, err := e.c.Logs.PutInjectionLog(l); err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.Logs.ApplyFeedback(ctx, "org_a", sess, sessionlog.OutcomeMisleading, 0.2); err != nil {
			t.Fatal(err)
		}
	}
	o1, t1 := first()
	if o1 != other {
		t.Fatalf("misleading observation %s still first (%s)", top, o1)
	}
	if t1 != "- Gateway → calls → BetaService" {
		t.Fatalf("edge feedback did not change the graph order: %q", t1)
	}
}

func TestCrossProjectTransfer(t *testing.T) {
	e := newSessionEnv(t)
	ctx := context.Background()
	cfg := func(ten engine.Tenant, ts []string) {
		if err := e.c.Settings.SetMemoryConfig(ten, MemoryConfig{MemoryEnabled: true, GraphEnabled: true, TechStack: ts}); err != nil {
			t.Fatal(err)
		}
	}
	// Exact thresholds: |A∩B|/|A∪B| = 7/10 = 0.7 and 9/13 = 0.6923.
	selfStack := []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10"}
	at70 := []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7"}                               // 7/10
	at69 := []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "t1", "t2", "t3"} // 9/13
	if j := Jaccard(selfStack, at70); j != 0.7 {
		t.Fatalf("setup: %v", j)
	}
	if j := Jaccard(selfStack, at69); j >= 0.7 || j < 0.69 {
		t.Fatalf("setup: %v", j)
	}
	tenP70 := engine.Tenant{Org: "org_a", Project: "proj_70"}
	tenP69 := engine.Tenant{Org: "org_a", Project: "proj_69"}
	tenOther := engine.Tenant{Org: "org_b", Project: "proj_twin"}
	cfg(tenA, selfStack)
	cfg(tenP70, at70)
	cfg(tenP69, at69)
	cfg(tenOther, selfStack) // identical stack, another org
	e.observe(t, tenA, "retry budget for flaky deploys")
	p70 := e.observe(t, tenP70, "retry budget lives in deploy config")
	p69 := e.observe(t, tenP69, "retry budget explained in the runbook")
	other := e.observe(t, tenOther, "retry budget secret of org b")
	req := sreq(WorkBugFix, "retry budget")
	req.CrossProjectTransfer = true
	b, err := e.c.SessionBlock(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	has := func(id string) bool { return strings.Contains(b.Block, id) }
	if !has(p70[0]) || has(p69[0]) || has(other[0]) {
		t.Fatalf("transfer: 0.7 peer %v, 0.69 peer %v, other org %v\n%s\ngates %+v", has(p70[0]), has(p69[0]), has(other[0]), b.Block, b.Gates)
	}
	if !strings.Contains(strings.Join(b.Gates.Peers, ","), "org_b/proj_twin") {
		t.Fatalf("the other org's twin should be a candidate peer that Cedar refuses: %v", b.Gates.Peers)
	}
	// Without transfer, only the project's own.
	req.CrossProjectTransfer = false
	b, _ = e.c.SessionBlock(ctx, req)
	if has(p70[0]) {
		t.Fatal("peer observation without transfer")
	}
	// A token limited to proj_1 is denied the peers by the PEP.
	req.CrossProjectTransfer = true
	req.Identity = policy.Identity{AgentID: "a", OrgID: "org_a", Role: policy.RoleAgent, ProjectIDs: []string{"proj_1"}}
	b, _ = e.c.SessionBlock(ctx, req)
	if has(p70[0]) {
		t.Fatal("a project-limited token read a peer's observation")
	}
}

func TestObservationExcerptFromLongContent(t *testing.T) {
	e := newSessionEnv(t)
	long := "retry budget " + strings.Repeat("word ", 2000)
	// A head of whitespace: the excerpt must come from the stored content.
	spaced := "retry budget" + strings.Repeat(" ", 3000) + "tail words after the gap"
	ids := e.observe(t, tenA, long, spaced)
	b, err := e.c.SessionBlock(context.Background(), sreq(WorkBugFix, "retry budget"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.Block, "\n")[1:] {
		ex := l[strings.Index(l, "] ")+2 : strings.LastIndex(l, " (weight:")]
		if n := utf8.RuneCountInString(ex); n > MaxExcerptRunes {
			t.Fatalf("excerpt of %d runes", n)
		}
		if strings.Contains(l, ids[0]) && !strings.HasSuffix(ex, "…") {
			t.Fatalf("long excerpt not cut: %q", ex)
		}
		if strings.Contains(l, ids[1]) && !strings.Contains(ex, "tail words after the gap") {
			t.Fatalf("excerpt lost the text after the head: %q", ex)
		}
	}
}
