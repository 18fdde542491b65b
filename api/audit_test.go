package api

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
)

// A triplet whose endpoint the policy hides from the caller cannot be
// deleted by it (404, the answer of a triplet that does not exist, so the
// route tells nothing of the hidden node), and stays; as for DELETE of a
// node or an observation (TestDeleteGoesThroughPEP).
func TestDeleteTripletGoesThroughPEP(t *testing.T) {
	e := newIsolationEnv(t)
	imp := e.token("org_a", "importer")
	del := func(src, rel, dst string) resp {
		b, _ := json.Marshal(map[string]string{"source": src, "relationship": rel, "target": dst})
		return e.do("DELETE", "/v1/orgs/org_a/projects/api/triplets", imp, "application/json", b)
	}
	hidden := del("Alpha", "reads", "Vault")
	missing := del("Alpha", "reads", "Nothing")
	if hidden.status != 404 || missing.status != 404 {
		t.Fatalf("delete of a triplet to a forbidden node: %d %s; of a missing one: %d %s; want 404 both", hidden.status, hidden.body, missing.status, missing.body)
	}
	if hidden.errCode() != missing.errCode() {
		t.Fatalf("a hidden triplet answers %q, a missing one %q", hidden.errCode(), missing.errCode())
	}
	ts, err := e.app.Store.QueryTriplets(engine.Tenant{Org: "org_a", Project: "api"}, engine.TripletQuery{Subject: "Alpha", Predicate: "reads"})
	if err != nil || len(ts) != 1 {
		t.Fatalf("the triplet to the forbidden node went: %v %+v", err, ts)
	}
	// A readable one goes.
	if r := del("Alpha", "calls", "Beta"); r.status != 204 {
		t.Fatalf("delete a readable triplet: %d %s", r.status, r.body)
	}
}

// The session-ownership rule holds on the routes that name a session in
// their body too: a token limited to project p1 may not record an
// injection log, nor a start-of-session block (which records one), into
// a session bound to project p2 of its org. Before, it could, and the
// log it left bound the session to p1 as well, so that the p2 token was
// refused its own session from then on.
func TestSessionOwnershipInBodies(t *testing.T) {
	s := startServer(t)
	p1, p2 := s.token("org_a", "agent", "p1"), s.token("org_a", "agent", "p2")
	if r := s.post("/v1/sessions/ses_p2/claim", p2, map[string]any{"workerId": "w", "projectId": "p2", "leaseSeconds": 60}); r.status != 200 {
		t.Fatalf("claim: %d %s", r.status, r.body)
	}
	logs := func() int {
		t.Helper()
		ls, err := s.app.Logs.InjectionLogs("org_a", "ses_p2")
		if err != nil {
			t.Fatal(err)
		}
		return len(ls)
	}
	before := logs()
	if r := s.post("/v1/injection-logs", p1, map[string]any{"sessionId": "ses_p2", "projectId": "p1", "workType": "bug_fix"}); r.status != 403 || strings.Contains(string(r.body), `\"p2\"`) {
		t.Errorf("p1 token logs into p2's session: %d %s, want 403 not naming p2 (the token may not know it)", r.status, r.body)
	}
	if r := s.post("/v1/context/session", p1, map[string]any{"sessionId": "ses_p2", "projectId": "p1", "queryText": "x"}); r.status != 403 {
		t.Errorf("p1 token composes p2's session: %d %s, want 403", r.status, r.body)
	}
	if n := logs(); n != before {
		t.Errorf("%d injection logs stored in p2's session by the p1 token", n-before)
	}
	// p2 keeps its session.
	if r := s.post("/v1/sessions/ses_p2/refresh", p2, map[string]any{"workerId": "w"}); r.status != 200 {
		t.Fatalf("p2 refresh after p1's attempts: %d %s", r.status, r.body)
	}
	// p1 may still use a session of its own, and p2 log into its own.
	if r := s.post("/v1/context/session", p1, map[string]any{"sessionId": "ses_p1", "projectId": "p1", "queryText": "x"}); r.status != 200 {
		t.Fatalf("p1's own session: %d %s", r.status, r.body)
	}
	if r := s.post("/v1/injection-logs", p2, map[string]any{"sessionId": "ses_p2", "projectId": "p2", "workType": "bug_fix"}); r.status != 201 {
		t.Fatalf("p2 logs into its session: %d %s", r.status, r.body)
	}
}

// A principal one node forwards is good on the node it was sent to only:
// each node keeps its own record of the nonces used, so a principal seen
// on the way from A to B (the nodes speak plain HTTP on their network)
// was good, before, at any other node of the cluster for its ten
// seconds, for the caller's org and route: a write's method and path
// with any body.
func TestForwardedPrincipalBoundToItsNode(t *testing.T) {
	key := []byte("cluster-principal-key")
	fb, _, rec, bURL := recordedNode(t, key)
	fb.self = bURL.URL
	fc := &fakeCluster{key: key}
	c := startServerWith(t, func(cfg *Config) { cfg.Cluster = fc })
	fc.self = c.url
	fa := &fakeCluster{key: key, routes: map[string]string{"org_b": bURL.URL}}
	a := startServerWith(t, func(c *Config) { c.Cluster = fa })
	imp := auth.NewTokenSecret()
	if err := a.app.Tokens.PutToken(imp, auth.Token{OrgID: "org_b", AgentID: "imp_b", Role: auth.RoleImporter}); err != nil {
		t.Fatal(err)
	}
	path := "/v1/orgs/org_b/projects/p/triplets"
	h := map[string]string{"Authorization": "Bearer " + imp, "Content-Type": "application/json"}
	if code, body := rawDo(t, "POST", a.url+path, h, `[{"source": "A", "relationship": "calls", "target": "B"}]`); code != 200 {
		t.Fatalf("proxied import: %d %s", code, body)
	}
	seen := rec.take()
	if len(seen) != 1 || seen[0].Get(PrincipalHeader) == "" {
		t.Fatalf("B saw %d requests, want 1 with a principal", len(seen))
	}
	sealed := seen[0].Get(PrincipalHeader)
	// Replayed at C, with another body.
	code, body := rawDo(t, "POST", c.url+path, map[string]string{PrincipalHeader: sealed, "Content-Type": "application/json"},
		`[{"source": "Mallory", "relationship": "owns", "target": "Everything"}]`)
	if code != 401 {
		t.Errorf("B's principal replayed at C: %d %s, want 401", code, body)
	}
	if st := c.stats("org_b", "p"); st.Triplets != 0 {
		t.Errorf("the replay wrote %d triplets at C", st.Triplets)
	}
	// A principal made for C is good there.
	p := NewPrincipal(auth.Token{OrgID: "org_b", AgentID: "imp_b", Role: auth.RoleImporter}, httptest.NewRequest("GET", "/v1/orgs/org_b/projects/p/graph/stats", nil))
	p.To = c.url
	if code, body := rawDo(t, "GET", c.url+"/v1/orgs/org_b/projects/p/graph/stats", map[string]string{PrincipalHeader: p.Seal(fc.PrincipalMAC)}, ""); code != 200 {
		t.Errorf("a principal for C: %d %s", code, body)
	}
}

// An id in the path that no item can have (over 128 bytes, or with
// characters ids never hold) is a 400 that does not repeat it, on every
// route of one node or observation; it was a 404 echoing the whole id
// (100 KB in, 100 KB out).
func TestPathItemIDsBounded(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_b", "importer")
	long := strings.Repeat("a", 100_000)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/nodes/" + long, ""},
		{"DELETE", "/nodes/" + long, ""},
		{"GET", "/observations/" + long, ""},
		{"DELETE", "/observations/" + long, ""},
		{"PATCH", "/observations/" + long, `{"weight": 0.5}`},
		{"GET", "/nodes/bad%20id", ""},
	} {
		r := s.do(c.method, "/v1/orgs/org_b/projects/p"+c.path, imp, "application/json", []byte(c.body))
		if r.status != 400 || len(r.body) > 1024 {
			t.Errorf("%s %.40s...: %d, %d bytes, want 400 in a short answer", c.method, c.path, r.status, len(r.body))
		}
	}
}
