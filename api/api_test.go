package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/kgctx/kgctx/api/internal/oascheck"
	"github.com/kgctx/kgctx/compose/service"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/engine/enginetest"
)

// testServer runs the real server on a loopback port over a temporary data
// directory.
type testServer struct {
	t     testing.TB
	app   *service.App
	srv   *Server
	url   string
	admin string
	// oas checks every answer do receives against the OpenAPI document.
	oas *oascheck.Checker
}

func startServer(t testing.TB) *testServer {
	t.Helper()
	return startServerWith(t, nil)
}

// startServerWith is startServer with a hook to change the Config.
func startServerWith(t testing.TB, tune func(*Config)) *testServer {
	t.Helper()
	app, err := service.Open(context.Background(), service.Config{DataDir: filepath.Join(t.TempDir(), "data")})
	if err != nil {
		t.Fatal(err)
	}
	return serveApp(t, app, tune)
}

// serveApp serves app (which it closes at cleanup) on a loopback port,
// with an operator token.
func serveApp(t testing.TB, app *service.App, tune func(*Config)) *testServer {
	t.Helper()
	admin := auth.NewTokenSecret()
	if err := app.Tokens.PutToken(admin, auth.Token{AgentID: "bootstrap", Role: auth.RoleOperator}); err != nil {
		t.Fatal(err)
	}
	cfg := Config{App: app, MaxBodyBytes: 1 << 20, MaxImportBytes: 4 << 20}
	if tune != nil {
		tune(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	ts := &testServer{t: t, app: app, srv: srv, url: "http://" + ln.Addr().String(), admin: admin}
	ts.oas = checker(t, srv, ts.url)
	t.Cleanup(func() {
		srv.Shutdown(context.Background())
		enginetest.Check(t, app.Store)
		app.Close()
	})
	return ts
}

type resp struct {
	status int
	body   []byte
	header http.Header
}

func (r resp) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

func (r resp) errCode() string {
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	json.Unmarshal(r.body, &e)
	return e.Error.Code
}

func (s *testServer) do(method, path, tok, ctype string, body []byte) resp {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if err := s.oas.Check(req, res.StatusCode, res.Header, b); err != nil {
		s.t.Errorf("openapi: %v", err)
	}
	return resp{status: res.StatusCode, body: b, header: res.Header}
}

// checker builds the OpenAPI checker of srv served at url.
func checker(t testing.TB, srv *Server, url string) *oascheck.Checker {
	t.Helper()
	doc, err := json.Marshal(srv.openAPI(url))
	if err != nil {
		t.Fatal(err)
	}
	c, err := oascheck.New(doc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (s *testServer) post(path, tok string, v any) resp {
	s.t.Helper()
	b, _ := json.Marshal(v)
	return s.do(http.MethodPost, path, tok, "application/json", b)
}

func (s *testServer) token(org, role string, projects ...string) string {
	s.t.Helper()
	r := s.post("/v1/admin/tokens", s.admin, map[string]any{"orgId": org, "agentId": "agent_" + role, "role": role, "projectIds": projects})
	if r.status != 201 {
		s.t.Fatalf("create token: %d %s", r.status, r.body)
	}
	var out struct{ Token string }
	r.json(s.t, &out)
	return out.Token
}

func (s *testServer) stats(org, project string) engine.Stats {
	s.t.Helper()
	r := s.do(http.MethodGet, "/v1/orgs/"+org+"/projects/"+project+"/graph/stats", s.admin, "", nil)
	if r.status != 200 {
		s.t.Fatalf("stats: %d %s", r.status, r.body)
	}
	var st engine.Stats
	r.json(s.t, &st)
	return st
}

const projPath = "/v1/orgs/org_123/projects/proj_xyz"

func TestEndToEndGraphBlock(t *testing.T) {
	s := startServer(t)
	if r := s.do("GET", "/healthz", "", "", nil); r.status != 200 || string(bytes.TrimSpace(r.body)) != `{"status":"ok"}` {
		t.Fatalf("healthz: %d %s", r.status, r.body)
	}
	imp := s.token("org_123", "importer")
	ag := s.token("org_123", "agent", "proj_xyz")
	nd := `{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB", "sourceType": "service", "targetType": "database", "weight": 0.7, "provenance": {"observationId": "obs_1", "sessionId": "ses_1", "timestamp": "2026-11-20T10:00:00Z"}}
{"source": "UserController", "relationship": "calls", "target": "AuthService"}

{"source": "AuthMiddleware", "relationship": "calls", "target": "AuthService", "sourceDescription": "checks tokens; guards against null pointer dereference"}
`
	r := s.do("POST", projPath+"/triplets", imp, "application/x-ndjson", []byte(nd))
	if r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	var ir engine.ImportResult
	r.json(t, &ir)
	if ir != (engine.ImportResult{Accepted: 3, NodesCreated: 4, EdgesCreated: 3, EdgesMerged: 0}) {
		t.Fatalf("import result %+v", ir)
	}
	// Same triplets again as a JSON array: nothing new.
	arr := `[{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB"}]`
	r = s.do("POST", projPath+"/triplets", imp, "application/json", []byte(arr))
	r.json(t, &ir)
	if r.status != 200 || ir.NodesCreated != 0 || ir.EdgesCreated != 0 || ir.EdgesMerged != 1 {
		t.Fatalf("re-import: %d %s", r.status, r.body)
	}
	req := map[string]any{
		"identity":  map[string]any{"agentId": "agent_dev", "orgId": "org_123", "projectId": "proj_xyz", "sessionId": "ses_1"},
		"scope":     map[string]any{"orgId": "org_123", "projectId": "proj_xyz"},
		"queryText": "fix null pointer in auth middleware", "budgetTokens": 500, "topK": 10, "neighborhoodDepth": 2,
	}
	r = s.post("/v1/context/graph", ag, req)
	if r.status != 200 {
		t.Fatalf("context: %d %s", r.status, r.body)
	}
	var gb struct {
		Block    string
		Triplets []struct {
			SourceEntity, Relationship, TargetEntity, SourceNodeID, TargetNodeID string
			RelevanceScore                                                       float64
			Provenance                                                           *engine.Provenance
		}
		ActualTokens int
		Timings      map[string]float64
	}
	r.json(t, &gb)
	if !strings.HasPrefix(gb.Block, "## Knowledge Graph Triplets\n- ") || len(gb.Triplets) != 3 || gb.ActualTokens != (len([]rune(gb.Block))+3)/4 {
		t.Fatalf("block: %+v", gb)
	}
	if !strings.Contains(gb.Block, "- AuthMiddleware → calls → AuthService") {
		t.Fatalf("block lacks the expected line:\n%s", gb.Block)
	}
	for _, k := range []string{"seedMs", "expandMs", "policyMs", "renderMs"} {
		if _, ok := gb.Timings[k]; !ok {
			t.Fatalf("timings lack %s: %v", k, gb.Timings)
		}
	}
	var sawProv bool
	for _, tr := range gb.Triplets {
		if tr.Provenance != nil && tr.Provenance.ObservationID == "obs_1" {
			sawProv = true
		}
	}
	if !sawProv {
		t.Fatalf("provenance missing: %s", r.body)
	}
	// Query, stats, node, delete.
	r = s.do("GET", projPath+"/graph/triplets?subject=auth_service&predicate=depends_on", ag, "", nil)
	var q struct{ Triplets []engine.Triplet }
	r.json(t, &q)
	if r.status != 200 || len(q.Triplets) != 1 || q.Triplets[0].Weight != 0.7 {
		t.Fatalf("query: %d %s", r.status, r.body)
	}
	if st := s.stats("org_123", "proj_xyz"); st.Nodes != 4 || st.Triplets != 3 || st.Predicates["calls"] != 2 {
		t.Fatalf("stats: %+v", st)
	}
	r = s.do("GET", projPath+"/nodes/"+q.Triplets[0].SourceNodeID, ag, "", nil)
	var node engine.Node
	r.json(t, &node)
	if r.status != 200 || node.Name != "AuthService" || node.Type != "service" {
		t.Fatalf("node: %d %s", r.status, r.body)
	}
	if r := s.do("DELETE", projPath+"/nodes/"+q.Triplets[0].SourceNodeID, ag, "", nil); r.status != 403 {
		t.Fatalf("agent deleted a node: %d", r.status)
	}
	if r := s.do("DELETE", projPath+"/nodes/"+q.Triplets[0].SourceNodeID, imp, "", nil); r.status != 204 {
		t.Fatalf("delete node: %d %s", r.status, r.body)
	}
	if st := s.stats("org_123", "proj_xyz"); st.Nodes != 3 || st.Triplets != 0 {
		t.Fatalf("stats after delete: %+v", st)
	}
	r = s.post("/v1/context/graph", ag, req)
	r.json(t, &gb)
	if strings.Contains(gb.Block, "AuthService") {
		t.Fatalf("deleted node still in a block: %s", gb.Block)
	}
	if r := s.do("GET", projPath+"/nodes/"+q.Triplets[0].SourceNodeID, ag, "", nil); r.status != 404 || r.errCode() != "not_found" {
		t.Fatalf("deleted node readable: %d %s", r.status, r.body)
	}
	// Triplet delete and clear.
	s.do("POST", projPath+"/triplets", imp, "application/x-ndjson", []byte(nd))
	del, _ := json.Marshal(map[string]string{"source": "UserController", "relationship": "calls", "target": "AuthService"})
	if r := s.do("DELETE", projPath+"/triplets", imp, "application/json", del); r.status != 204 {
		t.Fatalf("delete triplet: %d %s", r.status, r.body)
	}
	if r := s.do("DELETE", projPath+"/triplets", imp, "application/json", del); r.status != 404 {
		t.Fatalf("delete absent triplet: %d %s", r.status, r.body)
	}
	if r := s.do("DELETE", projPath+"/graph", imp, "", nil); r.status != 400 {
		t.Fatalf("clear without confirm: %d", r.status)
	}
	if r := s.do("DELETE", projPath+"/graph?confirm=true", imp, "", nil); r.status != 204 {
		t.Fatalf("clear: %d %s", r.status, r.body)
	}
	if st := s.stats("org_123", "proj_xyz"); st.Nodes != 0 || st.Triplets != 0 {
		t.Fatalf("stats after clear: %+v", st)
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_123", "importer")
	ag := s.token("org_123", "agent")
	other := s.token("org_999", "importer")
	var lines []string
	for i := 1; i <= 100; i++ {
		lines = append(lines, fmt.Sprintf(`{"source": "S%d", "relationship": "calls", "target": "T%d"}`, i, i))
	}
	good := strings.Join(lines, "\n")
	if r := s.do("POST", projPath+"/triplets", imp, "application/x-ndjson", []byte(good)); r.status != 200 {
		t.Fatalf("seed import: %d %s", r.status, r.body)
	}
	before := s.stats("org_123", "proj_xyz")
	line := func(i int, l string) string {
		ls := append([]string(nil), lines...)
		ls[i-1] = l
		return strings.Join(ls, "\n")
	}
	bad := []struct {
		name, ctype, body, tok string
		status                 int
		code                   string
	}{
		{"malformed json", "application/json", `[{"source": "a", "relationship": "r", "target": `, imp, 400, "malformed_body"},
		{"missing field on line 57", "application/x-ndjson", line(57, `{"source": "X", "relationship": "calls"}`), imp, 422, "invalid_triplets"},
		{"whitespace name", "application/x-ndjson", line(3, `{"source": "   ", "relationship": "calls", "target": "T"}`), imp, 422, "invalid_triplets"},
		{"name over 1KiB", "application/x-ndjson", line(4, `{"source": "`+strings.Repeat("n", 1025)+`", "relationship": "calls", "target": "T"}`), imp, 422, "invalid_triplets"},
		{"invalid utf8", "application/x-ndjson", line(5, "{\"source\": \"a\xffb\", \"relationship\": \"calls\", \"target\": \"T\"}"), imp, 422, "invalid_triplets"},
		{"relationship newline", "application/x-ndjson", line(6, `{"source": "a", "relationship": "calls\nx", "target": "T"}`), imp, 422, "invalid_triplets"},
		{"vector wrong dimension", "application/x-ndjson", line(7, `{"source": "a", "relationship": "calls", "target": "T", "sourceVector": [1, 2, 3]}`), imp, 422, "invalid_triplets"},
		{"targetOrgId from importer", "application/x-ndjson", line(8, `{"source": "a", "relationship": "calls", "target": "T", "targetOrgId": "org_999"}`), imp, 403, "forbidden"},
		{"other org's token", "application/x-ndjson", good, other, 403, "forbidden"},
		{"agent may not import", "application/x-ndjson", good, ag, 403, "forbidden"},
		{"unknown token", "application/x-ndjson", good, "kgx_nope_nope_nope_nope", 401, "unauthorized"},
		{"no token", "application/x-ndjson", good, "", 401, "unauthorized"},
		{"body over limit", "application/x-ndjson", strings.Repeat(lines[0]+"\n", (4<<20)/len(lines[0])+10), imp, 413, "body_too_large"},
	}
	for _, b := range bad {
		r := s.do("POST", projPath+"/triplets", b.tok, b.ctype, []byte(b.body))
		if r.status != b.status || r.errCode() != b.code {
			t.Errorf("%s: %d %s, want %d %s", b.name, r.status, r.body, b.status, b.code)
		}
		if b.name == "missing field on line 57" && !strings.Contains(string(r.body), `"line":57`) {
			t.Errorf("line 57 not named: %s", r.body)
		}
		if after := s.stats("org_123", "proj_xyz"); after.Nodes != before.Nodes || after.Triplets != before.Triplets {
			t.Fatalf("%s changed the store: %+v -> %+v", b.name, before, after)
		}
	}
	ctx := func(mut func(m map[string]any)) map[string]any {
		m := map[string]any{"scope": map[string]any{"orgId": "org_123", "projectId": "proj_xyz"}, "queryText": "S1"}
		mut(m)
		return m
	}
	for name, c := range map[string]struct {
		body   any
		status int
	}{
		"budget 0":         {ctx(func(m map[string]any) { m["budgetTokens"] = 0 }), 400},
		"budget negative":  {ctx(func(m map[string]any) { m["budgetTokens"] = -5 }), 400},
		"budget 10^9":      {ctx(func(m map[string]any) { m["budgetTokens"] = 1_000_000_000 }), 400},
		"topK 0":           {ctx(func(m map[string]any) { m["topK"] = 0 }), 400},
		"topK 1000":        {ctx(func(m map[string]any) { m["topK"] = 1000 }), 400},
		"depth 9":          {ctx(func(m map[string]any) { m["neighborhoodDepth"] = 9 }), 400},
		"budget string":    {ctx(func(m map[string]any) { m["budgetTokens"] = "lots" }), 400},
		"other org scope":  {ctx(func(m map[string]any) { m["scope"] = map[string]any{"orgId": "org_999"} }), 403},
		"other org ident":  {ctx(func(m map[string]any) { m["identity"] = map[string]any{"orgId": "org_999"} }), 403},
		"query over 8 KiB": {ctx(func(m map[string]any) { m["queryText"] = strings.Repeat("q", 8193) }), 400},
	} {
		r := s.post("/v1/context/graph", ag, c.body)
		if r.status != c.status {
			t.Errorf("%s: %d %s, want %d", name, r.status, r.body, c.status)
		}
	}
	if r := s.do("POST", "/v1/context/graph", ag, "application/json", []byte(`{"scope": `)); r.status != 400 || r.errCode() != "malformed_json" {
		t.Errorf("malformed context body: %d %s", r.status, r.body)
	}
	if r := s.do("POST", "/v1/context/graph", ag, "application/json", bytes.Repeat([]byte(" "), 2<<20)); r.status != 413 {
		t.Errorf("huge context body: %d %s", r.status, r.body)
	}
	if after := s.stats("org_123", "proj_xyz"); after.Nodes != before.Nodes || after.Triplets != before.Triplets {
		t.Fatalf("store changed: %+v -> %+v", before, after)
	}
}

func TestPoliciesAdmin(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_123", "importer")
	ag := s.token("org_123", "agent")
	s.do("POST", projPath+"/triplets", imp, "application/json", []byte(`[{"source": "Vault", "relationship": "contains", "target": "ApiKey", "sourceType": "secret"}]`))
	ask := func() int {
		var gb struct{ Triplets []any }
		r := s.post("/v1/context/graph", ag, map[string]any{"scope": map[string]any{"orgId": "org_123", "projectId": "proj_xyz"}, "queryText": "vault api key"})
		r.json(t, &gb)
		return len(gb.Triplets)
	}
	if ask() != 1 {
		t.Fatal("default policy should allow")
	}
	old := s.do("GET", "/v1/admin/policies", s.admin, "", nil)
	if r := s.do("PUT", "/v1/admin/policies", s.admin, "text/plain", []byte("permit (principal, action, resource) when { nonsense")); r.status != 422 || r.errCode() != "invalid_policy" {
		t.Fatalf("invalid policy: %d %s", r.status, r.body)
	}
	if now := s.do("GET", "/v1/admin/policies", s.admin, "", nil); !bytes.Equal(now.body, old.body) {
		t.Fatal("invalid policy replaced the set")
	}
	if r := s.do("PUT", "/v1/admin/policies", ag, "text/plain", []byte(string(old.body))); r.status != 403 {
		t.Fatalf("agent replaced policies: %d", r.status)
	}
	forbid := string(old.body) + "\nforbid (principal, action, resource is GraphNode) when { resource.type == \"secret\" };\n"
	if r := s.do("PUT", "/v1/admin/policies", s.admin, "text/plain", []byte(forbid)); r.status != 200 {
		t.Fatalf("valid policy: %d %s", r.status, r.body)
	}
	if ask() != 0 {
		t.Fatal("forbid policy not in force")
	}
}

func TestPoliciesSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	app, err := service.Open(context.Background(), service.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	text := "permit (principal, action == Action::\"read\", resource) when { principal.orgId == resource.orgId };"
	if err := app.SetPolicies("forbid ("); err == nil {
		t.Fatal("invalid text accepted")
	}
	if err := app.SetPolicies(text); err != nil {
		t.Fatal(err)
	}
	app.Close()
	app, err = service.Open(context.Background(), service.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	if app.PEP.Text() != text {
		t.Fatalf("policies after restart: %q", app.PEP.Text())
	}
}

func TestOpenAPIAndMetrics(t *testing.T) {
	s := startServer(t)
	ag := s.token("org_123", "agent")
	r := s.do("GET", "/openapi.json", ag, "", nil)
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	r.json(t, &doc)
	if r.status != 200 || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi: %d", r.status)
	}
	for _, rt := range s.srv.routes {
		p := pathParam.ReplaceAllString(rt.path, "{$1}")
		if _, ok := doc.Paths[p][strings.ToLower(rt.method)]; !ok {
			t.Errorf("openapi lacks %s %s", rt.method, p)
		}
	}
	s.post("/v1/context/graph", ag, map[string]any{"scope": map[string]any{"orgId": "org_123"}, "queryText": "x"})
	if r := s.do("GET", "/metrics", ag, "", nil); r.status != 403 {
		t.Fatalf("agent read metrics: %d", r.status)
	}
	m := s.do("GET", "/metrics", s.admin, "", nil)
	for _, want := range []string{`kgctx_http_request_duration_seconds_bucket{code="200",method="POST",route="/v1/context/graph"`,
		`kgctx_block_stage_duration_seconds_count{block="graph",stage="seed"}`,
		`kgctx_blocks_total{block="graph",outcome="`, "kgctx_nodes ", "kgctx_edges ", "kgctx_observations ", "kgctx_leases_held ",
		"kgctx_inject_queue_depth ", "kgctx_embedder_calls_total ", "kgctx_embedder_errors_total ", "kgctx_store_scrape_ok 1", "kgctx_index_behind 0",
		"go_goroutines ", "process_resident_memory_bytes "} {
		if !strings.Contains(string(m.body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}
