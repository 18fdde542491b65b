package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/sessionlog"
	"github.com/kgctx/kgctx/policy"
)

// isolationEnv is org_a's graph with everything a read path could leak:
// a node of type secret under a forbid, an edge into project web, an edge
// into org_b (an operator's cross-org link), and a token limited to
// project api.
type isolationEnv struct {
	*testServer
	agentAPI string // org_a agent limited to project api
	agentAll string // org_a agent, every project
	ids      map[string]string
}

const isoPolicies = policy.DefaultPolicies + `
@id("no-secrets")
forbid (principal, action, resource) when { resource.type == "secret" };
`

func newIsolationEnv(t *testing.T) *isolationEnv {
	s := startServer(t)
	if r := s.do("PUT", "/v1/admin/policies", s.admin, "text/plain", []byte(isoPolicies)); r.status != 200 {
		t.Fatalf("policies: %d %s", r.status, r.body)
	}
	imp := s.token("org_a", "importer")
	for _, body := range []string{
		`[{"source": "Alpha", "relationship": "calls", "target": "Beta"},
		  {"source": "Alpha", "relationship": "reads", "target": "Vault", "targetType": "secret"},
		  {"source": "Alpha", "relationship": "serves", "target": "WebUI", "targetProjectId": "web"}]`,
	} {
		if r := s.do("POST", "/v1/orgs/org_a/projects/api/triplets", imp, "application/json", []byte(body)); r.status != 200 {
			t.Fatalf("import: %d %s", r.status, r.body)
		}
	}
	// The operator links Alpha to a node of org_b (a shared catalogue).
	if r := s.do("POST", "/v1/orgs/org_a/projects/api/triplets", s.admin, "application/json",
		[]byte(`[{"source": "Alpha", "relationship": "uses", "target": "Catalogue", "targetOrgId": "org_b", "targetProjectId": "cat"}]`)); r.status != 200 {
		t.Fatalf("cross-org import: %d %s", r.status, r.body)
	}
	e := &isolationEnv{testServer: s, agentAPI: s.token("org_a", "agent", "api"), agentAll: s.token("org_a", "agent"), ids: map[string]string{}}
	// Node ids, read from the store (no API route shows them all).
	ts, err := s.app.Store.QueryTriplets(engine.Tenant{Org: "org_a", Project: "api"}, engine.TripletQuery{Subject: "Alpha"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		e.ids[tr.Target] = tr.TargetNodeID
		e.ids["Alpha"] = tr.SourceNodeID
	}
	for _, n := range []string{"Alpha", "Beta", "Vault", "WebUI", "Catalogue"} {
		if e.ids[n] == "" {
			t.Fatalf("no id for %s in %+v", n, ts)
		}
	}
	return e
}

// Item 1: the triplet query lists exactly what the graph block lets
// through; the other endpoint's id never appears.
func TestTripletQueryGoesThroughPEP(t *testing.T) {
	e := newIsolationEnv(t)
	for _, q := range []string{"?subject=Alpha", "", "?predicate=reads", "?object=Vault", "?subject=Alpha&limit=1", "?object=WebUI"} {
		r := e.do("GET", "/v1/orgs/org_a/projects/api/graph/triplets"+q, e.agentAPI, "", nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", q, r.status, r.body)
		}
		for _, leak := range []string{"Vault", "WebUI", "Catalogue", e.ids["Vault"], e.ids["WebUI"], e.ids["Catalogue"]} {
			if leak != "" && strings.Contains(string(r.body), leak) {
				t.Errorf("%s leaks %q: %s", q, leak, r.body)
			}
		}
		var out struct {
			Triplets []struct{ Source, Relationship, Target string }
		}
		r.json(t, &out)
		want := 0
		if q == "?subject=Alpha" || q == "" || q == "?subject=Alpha&limit=1" {
			want = 1 // Alpha calls Beta, even with limit 1: the limit counts what may be read
		}
		if len(out.Triplets) != want {
			t.Errorf("%s: %d triplets, want %d: %s", q, len(out.Triplets), want, r.body)
		}
	}
	// The same set as the graph block shows for the same token.
	r := e.post("/v1/context/graph", e.agentAPI, map[string]any{"scope": map[string]string{"orgId": "org_a", "projectId": "api"},
		"queryText": "Alpha", "budgetTokens": 2000})
	var gb compose.GraphBlock
	r.json(t, &gb)
	if len(gb.Triplets) != 1 || gb.Triplets[0].TargetEntity != "Beta" {
		t.Fatalf("graph block: %s", r.body)
	}
	// A token of every project sees WebUI (project web) but still not the
	// secret nor org_b's node.
	r = e.do("GET", "/v1/orgs/org_a/projects/api/graph/triplets?subject=Alpha", e.agentAll, "", nil)
	if !strings.Contains(string(r.body), "WebUI") || strings.Contains(string(r.body), "Vault") || strings.Contains(string(r.body), "Catalogue") {
		t.Fatalf("all-projects token: %s", r.body)
	}
}

// Item 2: a node the policy forbids is not found (its existence is not
// revealed); so is an observation.
func TestNodeReadGoesThroughPEP(t *testing.T) {
	e := newIsolationEnv(t)
	if r := e.do("GET", "/v1/orgs/org_a/projects/api/nodes/"+e.ids["Vault"], e.agentAll, "", nil); r.status != 404 || strings.Contains(string(r.body), "Vault") {
		t.Fatalf("forbidden node: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/orgs/org_a/projects/api/nodes/"+e.ids["Vault"], e.admin, "", nil); r.status != 404 {
		t.Fatalf("forbidden node, operator: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/orgs/org_a/projects/api/nodes/"+e.ids["Beta"], e.agentAPI, "", nil); r.status != 200 || !strings.Contains(string(r.body), "Beta") {
		t.Fatalf("allowed node: %d %s", r.status, r.body)
	}
	// Observations: a forbid on observations of project api hides them.
	imp := e.token("org_a", "importer")
	r := e.do("POST", "/v1/orgs/org_a/projects/api/observations", imp, "application/json", []byte(`{"content": "the vault key rotates monthly"}`))
	var ids struct{ IDs []string }
	r.json(t, &ids)
	if r := e.do("GET", "/v1/orgs/org_a/projects/api/observations/"+ids.IDs[0], e.agentAPI, "", nil); r.status != 200 {
		t.Fatalf("allowed observation: %d %s", r.status, r.body)
	}
	if r := e.do("PUT", "/v1/admin/policies", e.admin, "text/plain", []byte(isoPolicies+`
forbid (principal, action, resource is Observation) when { resource.projectId == "api" };`)); r.status != 200 {
		t.Fatalf("policies: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/orgs/org_a/projects/api/observations/"+ids.IDs[0], e.agentAPI, "", nil); r.status != 404 || strings.Contains(string(r.body), "vault") {
		t.Fatalf("forbidden observation: %d %s", r.status, r.body)
	}
}

// Item 3: a posted injection log names only ids the poster may read in
// the log's scope (else 422 and nothing stored), and a session's logs
// show each reader only the ids it may read.
func TestInjectionLogsFiltered(t *testing.T) {
	e := newIsolationEnv(t)
	imp := e.token("org_a", "importer")
	r := e.do("POST", "/v1/orgs/org_a/projects/web/observations", imp, "application/json", []byte(`{"content": "web note"}`))
	var web struct{ IDs []string }
	r.json(t, &web)
	r = e.do("POST", "/v1/orgs/org_a/projects/api/observations", imp, "application/json", []byte(`{"content": "api note"}`))
	var api struct{ IDs []string }
	r.json(t, &api)
	// Foreign, forbidden, missing and other-project ids: each refused by
	// name, the same answer whether the item exists or not.
	for _, c := range []struct {
		name, project, field string
		ids                  []string
	}{
		{"forbidden by policy", "api", "graphNodeIds", []string{e.ids["Alpha"], e.ids["Vault"]}},
		{"another org", "", "graphNodeIds", []string{e.ids["Catalogue"]}},
		{"missing", "api", "observationIds", []string{"obs_gone"}},
		{"another project", "api", "observationIds", []string{api.IDs[0], web.IDs[0]}},
		{"a summary of another project", "api", "sessionSummaryIds", []string{web.IDs[0]}},
		{"garbage", "", "graphNodeIds", []string{"00000000-0000-0000-0000-000000000000"}},
	} {
		log := map[string]any{"sessionId": "ses_bad", "orgId": "org_a", "projectId": c.project, c.field: c.ids}
		r := e.post("/v1/injection-logs", e.agentAll, log)
		last := c.ids[len(c.ids)-1]
		if r.status != 422 || !strings.Contains(string(r.body), last) || !strings.Contains(string(r.body), c.field) {
			t.Errorf("%s: %d %s", c.name, r.status, r.body)
		}
	}
	edge := map[string]any{"sessionId": "ses_bad", "orgId": "org_a", "projectId": "api",
		"graphEdgeKeys": []map[string]string{{"sourceId": e.ids["Alpha"], "targetId": e.ids["Vault"], "relationshipName": "reads"}}}
	if r := e.post("/v1/injection-logs", e.agentAll, edge); r.status != 422 {
		t.Errorf("an edge to a forbidden node: %d %s", r.status, r.body)
	}
	// The project-limited token may not name project web's note, even in
	// an org-wide log.
	if r := e.post("/v1/injection-logs", e.agentAPI, map[string]any{"sessionId": "ses_bad", "observationIds": []string{web.IDs[0]}}); r.status != 422 {
		t.Errorf("another project's note, limited token: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/v1/sessions/ses_bad/injection-logs", e.agentAll, "", nil); r.status != 200 || strings.Contains(string(r.body), "ses_bad") {
		t.Fatalf("a refused log was stored: %d %s", r.status, r.body)
	}

	// An org-wide log of what the all-projects agent may read: the
	// project-limited reader sees only its project's part.
	log := map[string]any{"sessionId": "ses_1", "orgId": "org_a", "workType": "bug_fix",
		"observationIds":    []string{api.IDs[0], web.IDs[0]},
		"sessionSummaryIds": []string{web.IDs[0]},
		"graphNodeIds":      []string{e.ids["Alpha"], e.ids["Beta"], e.ids["WebUI"]},
		"graphEdgeKeys": []map[string]string{
			{"sourceId": e.ids["Alpha"], "targetId": e.ids["Beta"], "relationshipName": "calls"},
			{"sourceId": e.ids["Alpha"], "targetId": e.ids["WebUI"], "relationshipName": "serves"},
		}}
	if r := e.post("/v1/injection-logs", e.agentAll, log); r.status != 201 {
		t.Fatalf("log: %d %s", r.status, r.body)
	}
	r = e.do("GET", "/v1/sessions/ses_1/injection-logs", e.agentAPI, "", nil)
	for _, leak := range []string{web.IDs[0], e.ids["WebUI"]} {
		if strings.Contains(string(r.body), leak) {
			t.Errorf("log leaks %q: %s", leak, r.body)
		}
	}
	for _, keep := range []string{api.IDs[0], e.ids["Alpha"], e.ids["Beta"]} {
		if !strings.Contains(string(r.body), keep) {
			t.Errorf("log lost readable %q: %s", keep, r.body)
		}
	}
	var logs struct {
		Logs []struct {
			GraphEdgeKeys []map[string]string
		}
	}
	r.json(t, &logs)
	if len(logs.Logs) != 1 || len(logs.Logs[0].GraphEdgeKeys) != 1 {
		t.Fatalf("edge keys: %s", r.body)
	}
	// Feedback reaches everything the session was shown (the stored log
	// is whole), and counts only what moved.
	if r := e.post("/v1/sessions/ses_1/feedback", e.agentAll, map[string]string{"outcome": "helpful"}); r.status != 200 ||
		!strings.Contains(string(r.body), `"edges":2`) || !strings.Contains(string(r.body), `"observations":2`) || !strings.Contains(string(r.body), `"nodes":3`) {
		t.Fatalf("feedback: %d %s", r.status, r.body)
	}
}

// Feedback never moves another tenant's weights, even from a log stored
// before ids were checked (defence in depth in MoveWeights).
func TestFeedbackStaysInScope(t *testing.T) {
	e := newIsolationEnv(t)
	// A log naming org_b's node and project web's node, in project api,
	// written past the API's check (as an older store may hold).
	if _, err := e.app.Logs.PutInjectionLog(sessionlogOf("ses_old", "org_a", "api", e.ids["Alpha"], e.ids["Catalogue"], e.ids["WebUI"])); err != nil {
		t.Fatal(err)
	}
	before, _ := e.app.Store.Node(engine.Tenant{Org: "org_b", Project: "cat"}, e.ids["Catalogue"])
	r := e.post("/v1/sessions/ses_old/feedback", e.agentAll, map[string]string{"outcome": "misleading"})
	if r.status != 200 || !strings.Contains(string(r.body), `"nodes":1`) {
		t.Fatalf("feedback: %d %s", r.status, r.body)
	}
	after, _ := e.app.Store.Node(engine.Tenant{Org: "org_b", Project: "cat"}, e.ids["Catalogue"])
	web, _ := e.app.Store.Node(engine.Tenant{Org: "org_a", Project: "web"}, e.ids["WebUI"])
	if before.Weight != after.Weight || web.Weight != 0.5 {
		t.Fatalf("weights moved out of scope: catalogue %v -> %v, web %v", before.Weight, after.Weight, web.Weight)
	}
}

// Item 4: every project a write touches must be one the token may write.
func TestImportRefusesOtherProjects(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_a", "importer", "api")
	for _, body := range []string{
		`[{"source": "A", "relationship": "calls", "target": "B"}, {"source": "A", "relationship": "calls", "target": "W", "targetProjectId": "web"}]`,
		`[{"source": "W", "relationship": "calls", "target": "A", "sourceProjectId": "web"}]`,
		`{"source": "A", "relationship": "calls", "target": "B"}` + "\n" + `{"source": "A", "relationship": "calls", "target": "W", "targetProjectId": "web"}`,
	} {
		ct := "application/json"
		if !strings.HasPrefix(body, "[") {
			ct = "application/x-ndjson"
		}
		r := s.do("POST", "/v1/orgs/org_a/projects/api/triplets", imp, ct, []byte(body))
		if r.status != 403 || !strings.Contains(string(r.body), "web") {
			t.Fatalf("%s: %d %s", body, r.status, r.body)
		}
	}
	for _, p := range []string{"api", "web"} {
		if st := s.stats("org_a", p); st.Nodes != 0 || st.Triplets != 0 {
			t.Fatalf("project %s written: %+v", p, st)
		}
	}
	// The token's own project across projects it lists is fine.
	imp2 := s.token("org_a", "importer", "api", "web")
	if r := s.do("POST", "/v1/orgs/org_a/projects/api/triplets", imp2, "application/json",
		[]byte(`[{"source": "A", "relationship": "calls", "target": "W", "targetProjectId": "web"}]`)); r.status != 200 {
		t.Fatalf("listed project: %d %s", r.status, r.body)
	}
}

// Item 7: session ids are scoped by org; an operator names the org.
func TestSessionIDsScopedByOrg(t *testing.T) {
	s := startServer(t)
	a, b := s.token("org_a", "agent"), s.token("org_b", "agent")
	claim := func(tok, org, worker string) resp {
		return s.post("/v1/sessions/ses_1/claim", tok, map[string]any{"workerId": worker, "orgId": org, "projectId": "p", "leaseSeconds": 60})
	}
	if r := claim(a, "org_a", "wa"); r.status != 200 {
		t.Fatalf("org_a claim: %d %s", r.status, r.body)
	}
	// org_b uses the same id first-come or not: its own session, its own lease.
	if r := claim(b, "org_b", "wb"); r.status != 200 {
		t.Fatalf("org_b squatted out: %d %s", r.status, r.body)
	}
	if r := s.post("/v1/sessions/ses_1/refresh", b, map[string]any{"workerId": "wa"}); r.status != 409 {
		t.Fatalf("org_b refreshed org_a's lease: %d %s", r.status, r.body)
	}
	if r := s.post("/v1/sessions/ses_1/refresh", a, map[string]any{"workerId": "wa"}); r.status != 200 {
		t.Fatalf("org_a refresh: %d %s", r.status, r.body)
	}
	logs := func(tok, q string) (int, []map[string]any) {
		r := s.do("GET", "/v1/sessions/ses_1/injection-logs"+q, tok, "", nil)
		var out struct{ Logs []map[string]any }
		json.Unmarshal(r.body, &out)
		return r.status, out.Logs
	}
	for tok, org := range map[string]string{a: "org_a", b: "org_b"} {
		st, ls := logs(tok, "")
		if st != 200 || len(ls) != 1 || ls[0]["orgId"] != org {
			t.Fatalf("%s's logs: %d %v", org, st, ls)
		}
	}
	// An operator must say which org's ses_1 it means.
	if r := s.do("GET", "/v1/sessions/ses_1/injection-logs", s.admin, "", nil); r.status != 400 || !strings.Contains(string(r.body), "orgId") {
		t.Fatalf("operator, ambiguous: %d %s", r.status, r.body)
	}
	if st, ls := logs(s.admin, "?orgId=org_b"); st != 200 || len(ls) != 1 || ls[0]["orgId"] != "org_b" {
		t.Fatalf("operator, org_b: %d %v", st, ls)
	}
	// A body naming another org than the token's is refused.
	if r := s.post("/v1/sessions/ses_1/injects", b, map[string]any{"orgId": "org_a", "text": "x"}); r.status != 403 {
		t.Fatalf("org_b enqueued for org_a: %d %s", r.status, r.body)
	}
}

// Item 8: refresh renews for the claim's leaseSeconds unless it names
// another.
func TestRefreshRenewsForClaimedLength(t *testing.T) {
	s := startServer(t)
	ag := s.token("org_a", "agent")
	if r := s.post("/v1/sessions/ses_r/claim", ag, map[string]any{"workerId": "w", "orgId": "org_a", "projectId": "p", "leaseSeconds": 600}); r.status != 200 {
		t.Fatalf("claim: %d %s", r.status, r.body)
	}
	expires := func(r resp) time.Duration {
		t.Helper()
		var out struct{ ExpiresAt time.Time }
		r.json(t, &out)
		return time.Until(out.ExpiresAt)
	}
	if d := expires(s.post("/v1/sessions/ses_r/refresh", ag, map[string]any{"workerId": "w"})); d < 590*time.Second || d > 600*time.Second {
		t.Fatalf("refresh without leaseSeconds renewed for %s, want the claim's 600 s", d)
	}
	if d := expires(s.post("/v1/sessions/ses_r/refresh", ag, map[string]any{"workerId": "w", "leaseSeconds": 45})); d < 35*time.Second || d > 45*time.Second {
		t.Fatalf("refresh with 45 s renewed for %s", d)
	}
	if r := s.post("/v1/sessions/ses_r/refresh", ag, map[string]any{"workerId": "w", "leaseSeconds": 0}); r.status != 400 {
		t.Fatalf("leaseSeconds 0: %d %s", r.status, r.body)
	}
}

// Item 9: projectId is optional for org and session scopes, required (and
// named) for project scope.
func TestVerbEventProjectOptional(t *testing.T) {
	s := startServer(t)
	imp, ag := s.token("org_a", "importer"), s.token("org_a", "agent")
	s.do("POST", "/v1/orgs/org_a/projects/p1/observations", imp, "application/json", []byte(`{"content": "deploys need the canary flag set in deploy.yaml"}`))
	for _, scope := range []string{"org", "session"} {
		r := s.post("/v1/sessions/ses_v/verb-events", ag, map[string]any{"phase": "pre-verb", "tool": "Edit",
			"paths": []string{"deploy.yaml"}, "query": "canary flag", "memoryScope": scope})
		if r.status != 200 {
			t.Fatalf("scope %s without projectId: %d %s", scope, r.status, r.body)
		}
		if scope == "org" && !strings.Contains(string(r.body), "canary") {
			t.Fatalf("org scope found nothing: %s", r.body)
		}
	}
	for _, scope := range []string{"", "project"} {
		body := map[string]any{"phase": "pre-verb", "tool": "Edit", "query": "canary"}
		if scope != "" {
			body["memoryScope"] = scope
		}
		r := s.post("/v1/sessions/ses_v/verb-events", ag, body)
		if r.status != 400 || !strings.Contains(string(r.body), "projectId") {
			t.Fatalf("scope %q without projectId: %d %s", scope, r.status, r.body)
		}
	}
}

// One session-ownership rule on every session route: a token limited to
// project p1 cannot act on a session bound to project p2 of its own org,
// by its lease or its injection logs.
func TestSessionOwnershipOneRule(t *testing.T) {
	s := startServer(t)
	p1, p2 := s.token("org_a", "agent", "p1"), s.token("org_a", "agent", "p2")
	if r := s.post("/v1/sessions/ses_p2/claim", p2, map[string]any{"workerId": "w", "projectId": "p2", "leaseSeconds": 60}); r.status != 200 {
		t.Fatalf("claim: %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		method, path string
		body         map[string]any
	}{
		{"POST", "/v1/sessions/ses_p2/refresh", map[string]any{"workerId": "w"}},
		{"POST", "/v1/sessions/ses_p2/injects", map[string]any{"text": "- x"}},
		{"POST", "/v1/sessions/ses_p2/injects/claim", map[string]any{"workerId": "w"}},
		{"POST", "/v1/sessions/ses_p2/injects/del_x/ack", map[string]any{}},
		{"POST", "/v1/sessions/ses_p2/verb-events", map[string]any{"phase": "pre-verb", "tool": "Edit", "memoryScope": "session"}},
		{"POST", "/v1/sessions/ses_p2/pending/drain", map[string]any{}},
		{"POST", "/v1/sessions/ses_p2/feedback", map[string]any{"outcome": "helpful"}},
		{"GET", "/v1/sessions/ses_p2/injection-logs", nil},
		{"DELETE", "/v1/sessions/ses_p2", nil},
	} {
		var body []byte
		if c.body != nil {
			body, _ = json.Marshal(c.body)
		}
		if r := s.do(c.method, c.path, p1, "application/json", body); r.status != 403 {
			t.Errorf("p1 token, %s %s: %d %s, want 403", c.method, c.path, r.status, r.body)
		}
	}
	// The session's own project still may.
	if r := s.post("/v1/sessions/ses_p2/refresh", p2, map[string]any{"workerId": "w"}); r.status != 200 {
		t.Fatalf("p2 refresh: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/v1/sessions/ses_p2/injection-logs", p2, "", nil); r.status != 200 {
		t.Fatalf("p2 logs: %d %s", r.status, r.body)
	}
}

func sessionlogOf(session, org, project string, nodes ...string) sessionlog.InjectionLog {
	return sessionlog.InjectionLog{SessionID: session, OrgID: org, ProjectID: project, GraphNodeIDs: nodes, Timestamp: time.Now()}
}

// A node or observation the policy hides from the caller cannot be
// deleted by it either (404, as for GET), and stays.
func TestDeleteGoesThroughPEP(t *testing.T) {
	e := newIsolationEnv(t)
	imp := e.token("org_a", "importer")
	if r := e.do("DELETE", "/v1/orgs/org_a/projects/api/nodes/"+e.ids["Vault"], imp, "", nil); r.status != 404 {
		t.Fatalf("delete a forbidden node: %d %s", r.status, r.body)
	}
	if _, err := e.app.Store.Node(engine.Tenant{Org: "org_a", Project: "api"}, e.ids["Vault"]); err != nil {
		t.Fatalf("the forbidden node went: %v", err)
	}
	r := e.do("POST", "/v1/orgs/org_a/projects/api/observations", imp, "application/json", []byte(`{"content": "the vault key rotates monthly"}`))
	var ids struct{ IDs []string }
	r.json(t, &ids)
	if r := e.do("PUT", "/v1/admin/policies", e.admin, "text/plain", []byte(isoPolicies+`
forbid (principal, action, resource is Observation) when { resource.projectId == "api" };`)); r.status != 200 {
		t.Fatalf("policies: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", "/v1/orgs/org_a/projects/api/observations/"+ids.IDs[0], imp, "", nil); r.status != 404 {
		t.Fatalf("delete a forbidden observation: %d %s", r.status, r.body)
	}
	if _, err := e.app.Store.Observation(engine.Tenant{Org: "org_a", Project: "api"}, ids.IDs[0]); err != nil {
		t.Fatalf("the forbidden observation went: %v", err)
	}
	// A readable one goes.
	if r := e.do("DELETE", "/v1/orgs/org_a/projects/api/nodes/"+e.ids["Beta"], imp, "", nil); r.status != 204 {
		t.Fatalf("delete a readable node: %d %s", r.status, r.body)
	}
}
