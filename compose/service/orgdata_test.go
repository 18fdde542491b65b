package service

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/delivery"
	"github.com/kgctx/kgctx/engine/sessionlog"
)

// orgWrites are writes of every kind an org owns records of, into two
// projects: imports, observations, configurations, a plan, a lease, an
// inject, an injection log and a tool result.
func orgWrites(org string) []Write {
	t1, t2 := engine.Tenant{Org: org, Project: "p1"}, engine.Tenant{Org: org, Project: "p2"}
	doc := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	return []Write{
		{Kind: WriteImport, Org: org, Project: "p1", Triplets: []engine.TripletInput{{Source: "AuthService", Relationship: "calls", Target: "TokenStore"},
			{Source: "TokenStore", Relationship: "depends_on", Target: "Redis", TargetDescription: "cache"}}},
		{Kind: WriteImport, Org: org, Project: "p2", Triplets: []engine.TripletInput{{Source: "Billing", Relationship: "calls", Target: "Ledger"}}},
		{Kind: WriteObservations, Org: org, Project: "p1", Observations: []engine.ObservationInput{{Content: "tokens expire after an hour"}}},
		{Kind: WriteMemoryConfig, Org: org, Project: "p2", Doc: doc(compose.MemoryConfig{MemoryEnabled: true, GraphEnabled: true, TechStack: []string{"go"}})},
		{Kind: WritePlan, Org: org, Doc: doc(compose.OrgPlan{Features: map[string]bool{"kg_enabled": true}})},
		{Kind: WriteLeaseClaim, Org: org, Session: "ses_1", Seconds: 60, Lease: &delivery.Lease{SessionID: "ses_1", WorkerID: "w1", OrgID: org}},
		{Kind: WriteEnqueue, Org: org, Session: "ses_1", Inject: &InjectEntry{OrgID: org, SessionID: "ses_1", Text: "a block"}},
		{Kind: WriteInjectionLog, Org: org, Session: "ses_1", Log: &sessionlog.InjectionLog{SessionID: "ses_1", OrgID: org, WorkType: "bug_fix"}},
		{Kind: WriteToolResult, Org: org, Project: "p1", ToolResult: &compose.ToolResult{SessionID: "ses_1", Scope: t1, Tool: "go test", Error: "undefined: Foo"}},
		{Kind: WriteDeleteTriplet, Org: org, Project: "p2", Source: "Billing", Relationship: "calls", Target: "Ledger"},
		{Kind: WriteImport, Org: org, Project: "p2", Triplets: []engine.TripletInput{{Source: "Billing", Relationship: "calls", Target: "Invoices"}}},
		{Kind: WriteFeedback, Org: org, Session: "ses_1", Outcome: "helpful"},
		{Kind: WriteObservations, Org: t2.Org, Project: t2.Project, Observations: []engine.ObservationInput{{Content: "ledger rows are immutable"}}},
	}
}

// applyAll applies ws to a with ids and times drawn from seed, as a
// replica of a log applies them.
func applyAll(t *testing.T, a *App, seed string, ws []Write) {
	t.Helper()
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for i, w := range ws {
		if _, err := a.Apply(context.Background(), w, ApplyOptions{Now: at.Add(time.Duration(i) * time.Second), IDs: engine.NewIDSource([]byte(fmt.Sprintf("%s/%d", seed, i)))}); err != nil {
			t.Fatalf("write %d (%s): %v", i, w.Kind, err)
		}
	}
}

// TestOrgRecordsAndDrop: two stores that applied the same writes list the
// same records; DropOrg removes every record of the org, and nothing of
// an org whose id starts alike; the org's writes applied again after the
// drop give the same records as before (what a move back does).
func TestOrgRecordsAndDrop(t *testing.T) {
	a, b := open(t), open(t)
	for _, app := range []*App{a, b} {
		applyAll(t, app, "org_a", orgWrites("org_a"))
		applyAll(t, app, "org_ab", orgWrites("org_ab"))
	}
	recs := func(app *App, org string) []string {
		t.Helper()
		r, err := app.OrgRecords(org)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	want := recs(a, "org_a")
	if got := recs(b, "org_a"); !slices.Equal(got, want) {
		t.Fatalf("two stores of the same writes differ:\n%s\n--\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	kinds := map[string]bool{}
	for _, l := range want {
		kinds[strings.Fields(l)[0]] = true
	}
	for _, k := range []string{"node", "edge", "observation", "config", "plan", "s", "inject", "hash", "l", "session"} {
		if !kinds[k] {
			t.Errorf("no %q record listed:\n%s", k, strings.Join(want, "\n"))
		}
	}
	other := recs(a, "org_ab")
	if orgs, err := a.Orgs(); err != nil || !slices.Equal(orgs, []string{"org_a", "org_ab"}) {
		t.Fatalf("Orgs: %v %v", orgs, err)
	}
	for _, org := range []string{"org_a", "org_ab"} {
		if ok, err := a.OrgHasData(org); !ok || err != nil {
			t.Fatalf("OrgHasData(%s): %v %v", org, ok, err)
		}
	}
	if err := a.DropOrg(context.Background(), "org_a"); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.OrgHasData("org_a"); ok || err != nil {
		t.Fatalf("OrgHasData after the drop: %v %v", ok, err)
	}
	if got := recs(a, "org_a"); !slices.Equal(got, []string{`plan {"features":{}}`}) {
		t.Fatalf("records after the drop:\n%s", strings.Join(got, "\n"))
	}
	if got := recs(a, "org_ab"); !slices.Equal(got, other) {
		t.Fatalf("the other org's records changed:\n%s", strings.Join(got, "\n"))
	}
	applyAll(t, a, "org_a", orgWrites("org_a"))
	if got := recs(a, "org_a"); !slices.Equal(got, want) {
		t.Fatalf("the writes applied again after the drop:\n%s\n--want\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := a.Apply(context.Background(), Write{Kind: WriteOrgDrop, Org: "org_a"}, ApplyOptions{}); !Refused(err) {
		t.Fatalf("a move step applied by the service: %v", err)
	}
}
