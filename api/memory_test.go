package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine"
)

// listed is one item of GET .../observations as a test reads it.
type listed struct {
	ID        string   `json:"id"`
	Content   string   `json:"content"`
	Weight    float64  `json:"weight"`
	Score     *float64 `json:"score"`
	Relevance *float64 `json:"relevance"`
	Metadata  engine.ObservationMeta
}

type listPage struct {
	Observations []listed `json:"observations"`
	NextCursor   string   `json:"nextCursor"`
}

func (s *testServer) list(tok, query string) (listPage, resp) {
	s.t.Helper()
	r := s.do("GET", projPath+"/observations?"+query, tok, "", nil)
	var p listPage
	if r.status == 200 {
		r.json(s.t, &p)
	}
	return p, r
}

func ids(p listPage) []string {
	var out []string
	for _, o := range p.Observations {
		out = append(out, o.ID)
	}
	return out
}

// addObs posts observations and returns their ids.
func (s *testServer) addObs(tok string, obs ...map[string]any) []string {
	s.t.Helper()
	r := s.post(projPath+"/observations", tok, obs)
	if r.status != 201 {
		s.t.Fatalf("add observations: %d %s", r.status, r.body)
	}
	var out struct{ IDs []string }
	r.json(s.t, &out)
	return out.IDs
}

// GET /v1/orgs/{org}/projects: exactly {"projects": [{projectId, nodes,
// edges, observations}]}, sorted, only projects with data or a stored
// configuration; a limited token sees its projects; another org's token
// is refused.
func TestListProjects(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_123", "importer")
	oa := s.token("org_123", "org_admin")
	if r := s.do("POST", "/v1/orgs/org_123/projects/api/triplets", imp, "application/json", []byte(`[{"source": "A", "relationship": "calls", "target": "B"}, {"source": "B", "relationship": "calls", "target": "C"}]`)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	r := s.post("/v1/orgs/org_123/projects/web/observations", imp, map[string]any{"content": "one note"})
	if r.status != 201 {
		t.Fatalf("observation: %d %s", r.status, r.body)
	}
	if r := s.do("PUT", "/v1/orgs/org_123/projects/configured/memory-config", oa, "application/json", []byte(`{"memoryEnabled": true, "graphEnabled": true, "runtimeInjectEnabled": true, "techStack": ["go"]}`)); r.status != 200 {
		t.Fatalf("memory config: %d %s", r.status, r.body)
	}
	if r := s.do("POST", "/v1/orgs/org_other/projects/secret/triplets", s.admin, "application/json", []byte(`[{"source": "X", "relationship": "calls", "target": "Y"}]`)); r.status != 200 {
		t.Fatalf("other org: %d %s", r.status, r.body)
	}
	ag := s.token("org_123", "agent")
	r = s.do("GET", "/v1/orgs/org_123/projects", ag, "", nil)
	want := `{"projects":[{"projectId":"api","nodes":3,"edges":2,"observations":0},{"projectId":"configured","nodes":0,"edges":0,"observations":0},{"projectId":"web","nodes":0,"edges":0,"observations":1}]}`
	if r.status != 200 || string(bytes.TrimSpace(r.body)) != want {
		t.Fatalf("projects: %d %s\nwant %s", r.status, r.body, want)
	}
	limited := s.token("org_123", "agent", "web", "nope")
	r = s.do("GET", "/v1/orgs/org_123/projects", limited, "", nil)
	if r.status != 200 || string(bytes.TrimSpace(r.body)) != `{"projects":[{"projectId":"web","nodes":0,"edges":0,"observations":1}]}` {
		t.Fatalf("limited token: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/v1/orgs/org_other/projects", ag, "", nil); r.status != 403 {
		t.Fatalf("another org: %d %s", r.status, r.body)
	}
	r = s.do("GET", "/v1/orgs/org_other/projects", s.admin, "", nil)
	if r.status != 200 || !strings.Contains(string(r.body), `"projectId":"secret"`) {
		t.Fatalf("operator: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/v1/orgs/org_empty/projects", s.admin, "", nil); r.status != 200 || string(bytes.TrimSpace(r.body)) != `{"projects":[]}` {
		t.Fatalf("empty org: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/v1/orgs/bad%20org/projects", s.admin, "", nil); r.status != 400 {
		t.Fatalf("bad org: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/v1/orgs/org_123/projects", "", "", nil); r.status != 401 {
		t.Fatalf("no token: %d", r.status)
	}
}

// GET .../observations: newest first, paged by cursor within the limit's
// bounds, each filter, another org and other projects refused, a
// policy-forbidden observation left out (and 404 alone).
func TestListObservationsRoute(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_123", "importer")
	ag := s.token("org_123", "agent")
	first := s.addObs(imp,
		map[string]any{"content": "auth middleware rejects expired tokens", "metadata": map[string]any{"paths": []string{"pkg/auth/mw.go"}, "tags": []string{"auth"}, "sessionId": "ses_1", "workType": "bug_fix"}},
		map[string]any{"content": "authz rules live elsewhere", "metadata": map[string]any{"paths": []string{"pkg/authz/rules.go"}, "tags": []string{"authz"}, "sessionId": "ses_1"}},
	)
	time.Sleep(5 * time.Millisecond)
	mid := time.Now().UTC()
	time.Sleep(5 * time.Millisecond)
	second := s.addObs(imp,
		map[string]any{"content": "postgres pool capped at 20", "metadata": map[string]any{"paths": []string{"deploy/staging.yaml"}, "tags": []string{"db"}, "sessionId": "ses_2", "workType": "feature"}},
		map[string]any{"content": "auth cookie is http only", "metadata": map[string]any{"paths": []string{"pkg/auth"}, "tags": []string{"auth", "web"}, "sessionId": "ses_2", "workType": "bug_fix"}},
		map[string]any{"content": "billing retries twice"},
	)
	newestFirst := []string{second[2], second[1], second[0], first[1], first[0]}

	p, r := s.list(ag, "")
	if r.status != 200 || !slices.Equal(ids(p), newestFirst) || p.NextCursor != "" {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	for _, o := range p.Observations {
		if o.Content == "" || o.Score != nil {
			t.Fatalf("a listed observation: %+v", o)
		}
	}
	// Paging: pages of two, joined, are the list; the last has no cursor.
	var got []string
	q := "limit=2"
	for pages := 0; ; pages++ {
		p, r := s.list(ag, q)
		if r.status != 200 || pages > 3 {
			t.Fatalf("page %d: %d %s", pages, r.status, r.body)
		}
		got = append(got, ids(p)...)
		if p.NextCursor == "" {
			break
		}
		q = "limit=2&cursor=" + url.QueryEscape(p.NextCursor)
	}
	if !slices.Equal(got, newestFirst) {
		t.Fatalf("pages %v, want %v", got, newestFirst)
	}
	if p, _ := s.list(ag, "limit=1000"); len(p.Observations) != 5 {
		t.Fatalf("limit 1000: %v", ids(p))
	}

	for name, c := range map[string]struct {
		query string
		want  []string
	}{
		"tag":           {"tag=auth", []string{second[1], first[0]}},
		"path file":     {"path=pkg/auth/mw.go", []string{first[0]}},
		"path dir":      {"path=pkg/auth", []string{second[1], first[0]}},
		"path dir /":    {"path=pkg/auth/", []string{second[1], first[0]}},
		"path parent":   {"path=pkg", []string{second[1], first[1], first[0]}},
		"session":       {"sessionId=ses_1", []string{first[1], first[0]}},
		"work type":     {"workType=bug_fix", []string{second[1], first[0]}},
		"since":         {"since=" + url.QueryEscape(mid.Format(time.RFC3339Nano)), second[:3:3]},
		"until":         {"until=" + url.QueryEscape(mid.Format(time.RFC3339Nano)), []string{first[1], first[0]}},
		"combined":      {"tag=auth&workType=bug_fix&since=" + url.QueryEscape(mid.Format(time.RFC3339Nano)), []string{second[1]}},
		"nothing":       {"tag=none", nil},
		"empty q lists": {"q=", newestFirst},
	} {
		want := c.want
		if name == "since" {
			want = []string{second[2], second[1], second[0]}
		}
		p, r := s.list(ag, c.query)
		if r.status != 200 || !slices.Equal(ids(p), want) {
			t.Errorf("%s: %d %v, want %v (%s)", name, r.status, ids(p), want, r.body)
		}
	}

	// Bad input: a clear 400 each.
	for name, query := range map[string]string{
		"limit 0":         "limit=0",
		"limit 1001":      "limit=1001",
		"limit word":      "limit=ten",
		"bad cursor":      "cursor=not-a-cursor",
		"foreign cursor":  "tag=auth&cursor=" + url.QueryEscape(func() string { p, _ := s.list(ag, "limit=1"); return p.NextCursor }()),
		"bad since":       "since=yesterday",
		"bad until":       "until=2026-13-01T00:00:00Z",
		"empty window":    "since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z",
		"unknown param":   "sessionid=ses_1",
		"repeated param":  "tag=a&tag=b",
		"bad session id":  "sessionId=a%20b",
		"long path":       "path=" + strings.Repeat("p", 5000),
		"long q":          "q=" + strings.Repeat("q", 9000),
		"unknown typo q2": "query=auth",
	} {
		if _, r := s.list(ag, query); r.status != 400 || r.errCode() != "invalid_field" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	if _, r := s.list(ag, "sessionid=x"); !strings.Contains(string(r.body), `did you mean \"sessionId\"`) {
		t.Errorf("no suggestion: %s", r.body)
	}

	// Tenancy: another org's token is refused; a token limited to another
	// project is refused; one limited to this project lists.
	for name, tok := range map[string]string{"other org": s.token("org_456", "agent"), "other project": s.token("org_123", "agent", "proj_other")} {
		if _, r := s.list(tok, ""); r.status != 403 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	if p, r := s.list(s.token("org_123", "agent", "proj_xyz"), ""); r.status != 200 || len(p.Observations) != 5 {
		t.Fatalf("project token: %d %s", r.status, r.body)
	}

	// A policy that forbids one observation: left out of the list and of
	// a search, 404 alone and to PATCH; the page is filled from the next.
	old := s.do("GET", "/v1/admin/policies", s.admin, "", nil)
	forbid := string(old.body) + fmt.Sprintf("\nforbid (principal, action, resource == Observation::%q);\n", second[1])
	if r := s.do("PUT", "/v1/admin/policies", s.admin, "text/plain", []byte(forbid)); r.status != 200 {
		t.Fatalf("policy: %d %s", r.status, r.body)
	}
	p, _ = s.list(ag, "limit=2")
	if !slices.Equal(ids(p), []string{second[2], second[0]}) || p.NextCursor == "" {
		t.Fatalf("with the forbid: %v", ids(p))
	}
	if p, _ := s.list(ag, "tag=auth"); !slices.Equal(ids(p), []string{first[0]}) {
		t.Fatalf("tag auth with the forbid: %v", ids(p))
	}
	if p, _ := s.list(ag, "q=cookie+http"); slices.Contains(ids(p), second[1]) {
		t.Fatalf("a search shows the forbidden observation: %v", ids(p))
	}
	if r := s.do("GET", projPath+"/observations/"+second[1], ag, "", nil); r.status != 404 {
		t.Fatalf("forbidden observation alone: %d", r.status)
	}
	if r := s.do("PATCH", projPath+"/observations/"+second[1], imp, "application/json", []byte(`{"content": "overwritten"}`)); r.status != 404 {
		t.Fatalf("PATCH of a forbidden observation: %d %s", r.status, r.body)
	}
	if o, err := s.app.Store.Observation(engine.Tenant{Org: "org_123", Project: "proj_xyz"}, second[1]); err != nil || o.Content != "auth cookie is http only" {
		t.Fatalf("the forbidden observation changed: %+v %v", o, err)
	}
}

// q= ranks like a session block: relevance × (0.5 + weight), each item
// with its score, ordered by score (a heavier twin first), not by time.
func TestSearchObservationsRoute(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_123", "importer")
	ag := s.token("org_123", "agent")
	got := s.addObs(imp,
		map[string]any{"content": "postgres pool exhausted under load", "weight": 0.9},
		map[string]any{"content": "billing retries twice"},
		map[string]any{"content": "postgres connection string in the vault", "metadata": map[string]any{"tags": []string{"db"}}},
	)
	later := s.addObs(imp, map[string]any{"content": "postgres pool exhausted under load", "weight": 0.2})
	p, r := s.list(ag, "q="+url.QueryEscape("postgres pool"))
	if r.status != 200 || len(p.Observations) < 3 {
		t.Fatalf("search: %d %s", r.status, r.body)
	}
	if p.Observations[0].ID != got[0] || p.Observations[1].ID != later[0] {
		t.Fatalf("order %v: the heavier twin first, then the lighter (newer) one", ids(p))
	}
	for i, o := range p.Observations {
		if o.Score == nil || o.Relevance == nil || *o.Score != *o.Relevance*(0.5+o.Weight) {
			t.Fatalf("item %d without its score: %+v", i, o)
		}
		if i > 0 && *o.Score > *p.Observations[i-1].Score {
			t.Fatalf("not by score: %s", r.body)
		}
		if o.ID == got[1] {
			t.Fatalf("billing matched postgres pool: %s", r.body)
		}
	}
	if *p.Observations[0].Relevance != 1 {
		t.Fatalf("the best relevance is %v, want 1", *p.Observations[0].Relevance)
	}
	// Filters narrow a search; paging cuts the same ranking.
	if p, _ := s.list(ag, "q=postgres&tag=db"); !slices.Equal(ids(p), []string{got[2]}) {
		t.Fatalf("q with tag: %v", ids(p))
	}
	all, _ := s.list(ag, "q=postgres")
	var paged []string
	q := "q=postgres&limit=1"
	for range 10 {
		p, r := s.list(ag, q)
		if r.status != 200 {
			t.Fatalf("search page: %d %s", r.status, r.body)
		}
		paged = append(paged, ids(p)...)
		if p.NextCursor == "" {
			break
		}
		q = "q=postgres&limit=1&cursor=" + url.QueryEscape(p.NextCursor)
	}
	if !slices.Equal(paged, ids(all)) {
		t.Fatalf("paged %v, at once %v", paged, ids(all))
	}
	// A search's cursor is refused by a listing and by another q.
	p, _ = s.list(ag, "q=postgres&limit=1")
	for _, query := range []string{"cursor=", "q=billing&cursor="} {
		if _, r := s.list(ag, query+url.QueryEscape(p.NextCursor)); r.status != 400 {
			t.Fatalf("%s a search cursor: %d %s", query, r.status, r.body)
		}
	}
}

// PATCH .../observations/{id}: new content is what a search finds (the old
// words no more), the weight is kept unless given, metadata is replaced;
// bad input is a 4xx and changes nothing.
func TestPatchObservation(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_123", "importer")
	ag := s.token("org_123", "agent")
	id := s.addObs(imp, map[string]any{"content": "wombat burrows collapse in spring", "weight": 0.8,
		"metadata": map[string]any{"tags": []string{"fauna"}, "paths": []string{"zoo/wombat.go"}, "sessionId": "ses_1"}})[0]
	path := projPath + "/observations/" + id
	patch := func(tok, body string) resp { return s.do("PATCH", path, tok, "application/json", []byte(body)) }
	get := func() engine.Observation {
		r := s.do("GET", path, ag, "", nil)
		var o engine.Observation
		r.json(t, &o)
		return o
	}
	before := get()

	// Refused, each with the store unchanged.
	for name, c := range map[string]struct {
		tok, body string
		status    int
		code      string
	}{
		"unknown field":  {imp, `{"text": "x"}`, 400, "unknown_field"},
		"malformed":      {imp, `{"content": `, 400, "malformed_json"},
		"wrong type":     {imp, `{"weight": "heavy"}`, 400, "invalid_field"},
		"empty content":  {imp, `{"content": "  "}`, 422, "invalid_observation"},
		"weight 2":       {imp, `{"weight": 2}`, 422, "invalid_observation"},
		"nothing":        {imp, `{}`, 422, "invalid_observation"},
		"bad tag":        {imp, `{"metadata": {"tags": [""]}}`, 422, "invalid_observation"},
		"agent role":     {ag, `{"content": "x"}`, 403, "forbidden"},
		"other org":      {s.token("org_456", "importer"), `{"content": "x"}`, 403, "forbidden"},
		"other project":  {s.token("org_123", "importer", "proj_other"), `{"content": "x"}`, 403, "forbidden"},
		"no token":       {"", `{"content": "x"}`, 401, "unauthorized"},
		"content 65 KiB": {imp, `{"content": "` + strings.Repeat("x", 65<<10) + `"}`, 422, "invalid_observation"},
	} {
		if r := patch(c.tok, c.body); r.status != c.status || r.errCode() != c.code {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	if r := s.do("PATCH", projPath+"/observations/obs_nope", imp, "application/json", []byte(`{"content": "x"}`)); r.status != 404 {
		t.Fatalf("unknown id: %d %s", r.status, r.body)
	}
	if r := s.do("PATCH", "/v1/orgs/org_123/projects/proj_else/observations/"+id, imp, "application/json", []byte(`{"content": "x"}`)); r.status != 404 {
		t.Fatalf("another project's path: %d %s", r.status, r.body)
	}
	if now := get(); !now.CreatedAt.Equal(before.CreatedAt) || now.Content != before.Content || now.Weight != 0.8 || !slices.Equal(now.Metadata.Tags, []string{"fauna"}) {
		t.Fatalf("a refused PATCH changed %+v", now)
	}

	// Content: a search finds the new words, not the old; weight and
	// metadata kept.
	r := patch(imp, `{"content": "quokka habitats shrink near Perth"}`)
	var o engine.Observation
	r.json(t, &o)
	if r.status != 200 || o.Content != "quokka habitats shrink near Perth" || o.Weight != 0.8 || o.ID != id || !slices.Equal(o.Metadata.Tags, []string{"fauna"}) {
		t.Fatalf("patch content: %d %s", r.status, r.body)
	}
	if p, _ := s.list(ag, "q=quokka+Perth"); !slices.Equal(ids(p), []string{id}) {
		t.Fatalf("search for the new words: %v", ids(p))
	}
	if p, _ := s.list(ag, "q=wombat+burrows"); len(p.Observations) != 0 {
		t.Fatalf("search for the old words: %v", ids(p))
	}
	// The session block shows the new content too.
	sr := s.post("/v1/context/session", ag, map[string]any{"sessionId": "ses_q", "projectId": "proj_xyz", "queryText": "quokka habitats"})
	if sr.status != 200 || !strings.Contains(string(sr.body), "quokka habitats shrink") || strings.Contains(string(sr.body), "wombat") {
		t.Fatalf("session block: %d %s", sr.status, sr.body)
	}

	// Metadata replaced whole; weight given.
	r = patch(imp, `{"metadata": {"tags": ["marsupial"]}, "weight": 0.3}`)
	o = engine.Observation{}
	r.json(t, &o)
	if r.status != 200 || o.Weight != 0.3 || !slices.Equal(o.Metadata.Tags, []string{"marsupial"}) || len(o.Metadata.Paths) != 0 || o.Metadata.SessionID != "" || o.Content != "quokka habitats shrink near Perth" {
		t.Fatalf("patch metadata and weight: %d %s", r.status, r.body)
	}
	if p, _ := s.list(ag, "tag=marsupial"); !slices.Equal(ids(p), []string{id}) {
		t.Fatalf("tag after the patch: %v", ids(p))
	}
	if p, _ := s.list(ag, "tag=fauna"); len(p.Observations) != 0 {
		t.Fatalf("old tag after the patch: %v", ids(p))
	}
	// null keeps.
	if r := patch(imp, `{"content": null, "weight": 0.4}`); r.status != 200 {
		t.Fatalf("null content: %d %s", r.status, r.body)
	}
	if now := get(); now.Content != "quokka habitats shrink near Perth" || now.Weight != 0.4 {
		t.Fatalf("after null content: %+v", now)
	}
	// DELETE still ends it.
	if r := s.do("DELETE", path, imp, "", nil); r.status != 204 {
		t.Fatalf("delete: %d", r.status)
	}
	if r := patch(imp, `{"content": "back again"}`); r.status != 404 {
		t.Fatalf("PATCH after DELETE: %d %s", r.status, r.body)
	}
}

// GET .../nodes?q=: the identity match first, then text hits, each with
// id, name, type, description, weight; bad input refused.
func TestSearchNodesRoute(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_123", "importer")
	ag := s.token("org_123", "agent")
	nd := `{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB", "sourceType": "service", "sourceDescription": "issues and checks tokens"}
{"source": "AuthServiceClient", "relationship": "calls", "target": "AuthService"}
{"source": "BillingService", "relationship": "calls", "target": "AuthService"}
`
	if r := s.do("POST", projPath+"/triplets", imp, "application/x-ndjson", []byte(nd)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	r := s.do("GET", projPath+"/nodes?q=auth_service", ag, "", nil)
	var out struct {
		Nodes []struct {
			ID, Name, Type, Description, Match string
			Weight, Score                      float64
		}
	}
	r.json(t, &out)
	if r.status != 200 || len(out.Nodes) < 2 || out.Nodes[0].Name != "AuthService" || out.Nodes[0].Match != "exact" ||
		out.Nodes[0].Type != "service" || out.Nodes[0].Description != "issues and checks tokens" || out.Nodes[0].Weight != 0.5 || out.Nodes[0].ID == "" {
		t.Fatalf("search: %d %s", r.status, r.body)
	}
	for _, n := range out.Nodes[1:] {
		if n.Match != "text" || n.Name == "AuthService" {
			t.Fatalf("text hits: %s", r.body)
		}
	}
	if r := s.do("GET", projPath+"/nodes?q=Billing&limit=1", ag, "", nil); r.status != 200 || !strings.Contains(string(r.body), `"name":"BillingService"`) || strings.Count(string(r.body), `"id"`) != 1 {
		t.Fatalf("Billing: %d %s", r.status, r.body)
	}
	for name, q := range map[string]string{"no q": "", "empty q": "q=", "limit 0": "q=a&limit=0", "limit 101": "q=a&limit=101", "unknown": "q=a&name=b"} {
		if r := s.do("GET", projPath+"/nodes?"+q, ag, "", nil); r.status != 400 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	if r := s.do("GET", projPath+"/nodes?q=AuthService", s.token("org_456", "agent"), "", nil); r.status != 403 {
		t.Fatalf("other org: %d", r.status)
	}
	if r := s.do("GET", "/v1/orgs/org_123/projects/proj_other/nodes?q=AuthService", ag, "", nil); r.status != 200 || string(bytes.TrimSpace(r.body)) != `{"nodes":[]}` {
		t.Fatalf("another project: %d %s", r.status, r.body)
	}
	var check map[string]any
	if err := json.Unmarshal(r.body, &check); err != nil {
		t.Fatal(err)
	}
}
