package api

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOpenAPIFromTypes: the document is generated from the handlers' Go
// types: the import lists every format it reads, bodies are closed
// objects with their required fields and bounds, the errors a route can
// answer are listed, and the servers entry is the address asked.
func TestOpenAPIFromTypes(t *testing.T) {
	s := startServer(t)
	r := s.do("GET", "/openapi.json", s.admin, "", nil)
	var doc struct {
		Servers []struct{ URL string }
		Paths   map[string]map[string]struct {
			RequestBody struct{ Content map[string]any }
			Responses   map[string]any
		}
		Components struct{ Schemas map[string]map[string]any }
	}
	r.json(t, &doc)
	if len(doc.Servers) != 1 || doc.Servers[0].URL != s.url {
		t.Errorf("servers %+v, want %s", doc.Servers, s.url)
	}
	imp := doc.Paths["/v1/orgs/{org}/projects/{project}/triplets"]["post"]
	for _, ct := range []string{"application/json", "application/x-ndjson", "text/tab-separated-values", "text/csv", "application/n-triples", "text/plain", "application/gzip"} {
		if _, ok := imp.RequestBody.Content[ct]; !ok {
			t.Errorf("import lacks %s", ct)
		}
	}
	for _, st := range []string{"200", "400", "401", "403", "408", "413", "422", "503"} {
		if _, ok := imp.Responses[st]; !ok {
			t.Errorf("import lacks the %s answer", st)
		}
	}
	if _, ok := doc.Paths["/v1/sessions/{sessionId}/injects/claim"]["post"].Responses["204"]; !ok {
		t.Error("injects/claim lacks its 204")
	}
	in := doc.Components.Schemas["TripletInput"]
	if in["additionalProperties"] != false || !strings.Contains(jsonOf(in["required"]), `"relationship"`) {
		t.Errorf("TripletInput: %s", jsonOf(in))
	}
	g := doc.Components.Schemas["GraphContextRequest"]
	if got := jsonOf(g["properties"].(map[string]any)["budgetTokens"]); !strings.Contains(got, `"maximum":32000`) || !strings.Contains(got, `"default":500`) {
		t.Errorf("budgetTokens: %s", got)
	}
	if got := jsonOf(doc.Components.Schemas["GraphTriplet"]); !strings.Contains(got, `"explain"`) || !strings.Contains(got, "ScoreParts") {
		t.Errorf("GraphTriplet: %s", got)
	}
	// Every component a $ref names exists.
	all := jsonOf(doc)
	for _, part := range strings.Split(all, `"$ref":"#/components/schemas/`)[1:] {
		name := part[:strings.IndexByte(part, '"')]
		if _, ok := doc.Components.Schemas[name]; !ok {
			t.Errorf("dangling $ref %s", name)
		}
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRoutesAnswerAsDocumented calls the routes no other test of this
// package calls, so that every operation's answer is checked against the
// document (do checks each).
func TestRoutesAnswerAsDocumented(t *testing.T) {
	s := startServer(t)
	org := s.token("org_doc", "org_admin", "p")
	for _, p := range []string{"/v1/admin/budgets", "/v1/admin/in-session-config", "/v1/admin/recall-matrix"} {
		if r := s.do("GET", p, s.admin, "", nil); r.status != 200 {
			t.Errorf("GET %s: %d %s", p, r.status, r.body)
		}
	}
	if r := s.do("GET", "/v1/orgs/org_doc/projects/p/memory-config", org, "", nil); r.status != 200 {
		t.Errorf("memory-config: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/v1/whoami", org, "", nil); r.status != 200 {
		t.Errorf("whoami: %d %s", r.status, r.body)
	}
	// The cluster routes of a server that runs alone (cmd/kgctx's cluster
	// test calls them on a cluster).
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/admin/cluster", ""}, {"GET", "/v1/admin/orgs/org_doc/shard", ""}, {"PUT", "/v1/admin/orgs/org_doc/shard", `{"shard": "s1"}`},
	} {
		if r := s.do(c.method, c.path, s.admin, "application/json", []byte(c.body)); r.status != 404 || !strings.Contains(string(r.body), "runs alone") {
			t.Errorf("%s %s alone: %d %s", c.method, c.path, r.status, r.body)
		}
	}
	r := s.post("/v1/orgs/org_doc/projects/p/observations", org, map[string]any{"content": "the build broke on go 1.26"})
	var ids idsResponse
	r.json(t, &ids)
	if r := s.do("DELETE", "/v1/orgs/org_doc/projects/p/observations/"+ids.IDs[0], org, "", nil); r.status != 204 {
		t.Errorf("delete observation: %d %s", r.status, r.body)
	}
	if r := s.do("DELETE", "/v1/orgs/org_doc/projects/p/observations/"+ids.IDs[0], org, "", nil); r.status != 404 {
		t.Errorf("delete it again: %d %s", r.status, r.body)
	}
	for _, ok := range []bool{false, true} {
		r := s.post("/v1/sessions/ses_doc/tool-results", org, map[string]any{"projectId": "p", "tool": "go_build", "success": ok, "error": "undefined: Foo", "fix": "import foo"})
		if r.status != 200 {
			t.Errorf("tool-results: %d %s", r.status, r.body)
		}
	}
	if r := s.post("/v1/sessions/ses_doc/tool-results", org, map[string]any{"projectId": "p", "tool": "go_build"}); r.status != 400 {
		t.Errorf("tool-results without success: %d %s", r.status, r.body)
	}
}
