package api

import (
	"context"
	"github.com/kgctx/kgctx/compose/service"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/index/embed"
)

// Item 15: a field the route does not know is refused with 400 naming it
// (and the nearest known field), not dropped for the default.
func TestUnknownFieldsRefused(t *testing.T) {
	s := startServer(t)
	ag, imp := s.token("org_a", "agent"), s.token("org_a", "importer")
	for _, c := range []struct {
		path, tok, body, field, hint string
	}{
		{"/v1/context/graph", ag, `{"scope": {"orgId": "org_a"}, "queryText": "x", "budget": 100}`, "budget", "budgetTokens"},
		{"/v1/context/graph", ag, `{"scope": {"orgId": "org_a", "projectID2": "p"}, "queryText": "x"}`, "projectID2", ""},
		{"/v1/context/session", ag, `{"sessionId": "s1", "orgId": "org_a", "projectId": "p", "workTyp": "bug_fix"}`, "workTyp", "workType"},
		{"/v1/context/rag", ag, `{"scope": {"orgId": "org_a"}, "queryText": "x", "maxDepth": 1}`, "maxDepth", ""},
		{"/v1/sessions/s1/claim", ag, `{"workerId": "w", "orgId": "org_a", "projectId": "p", "lease": 30}`, "lease", "leaseSeconds"},
		{"/v1/orgs/org_a/projects/p/observations", imp, `{"content": "x", "meta": {}}`, "meta", "metadata"},
		{"/v1/orgs/org_a/projects/p/observations", imp, `[{"content": "x", "metadata": {"path": ["a"]}}]`, "path", "paths"},
		// Right name, wrong level: where it goes, not "did you mean" itself.
		{"/v1/context/graph", ag, `{"orgId": "org_a", "queryText": "x"}`, "orgId", "has it as identity.orgId, scope.orgId"},
	} {
		r := s.do("POST", c.path, c.tok, "application/json", []byte(c.body))
		if r.status != 400 || r.errCode() != "unknown_field" || !strings.Contains(string(r.body), `\"`+c.field+`\"`) ||
			(c.hint != "" && !strings.Contains(string(r.body), c.hint)) || strings.Contains(string(r.body), `mean \"`+c.field+`\"`) {
			t.Errorf("%s %s: %d %s", c.path, c.body, r.status, r.body)
		}
	}
	if st := s.stats("org_a", "p"); st.Nodes != 0 {
		t.Fatalf("written: %+v", st)
	}
	r := s.do("GET", "/v1/sessions/s1/injection-logs", ag, "", nil)
	if strings.Contains(string(r.body), "log_") {
		t.Fatalf("a refused session request was logged: %s", r.body)
	}
	// The references' spelling of the graph switch is understood.
	if r := s.post("/v1/context/session", ag, map[string]any{"sessionId": "s2", "orgId": "org_a", "projectId": "p",
		"graph": map[string]any{"graphEnabled": true, "identity": map[string]string{"orgId": "org_a", "agentId": "a"}}}); r.status != 200 {
		t.Fatalf("reference graph fields: %d %s", r.status, r.body)
	}
}

// Item 16: an unreachable embedding server makes an import 503 with
// Retry-After and a message naming the embedder; nothing is written.
func TestEmbedderDownIs503(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	emb, err := embed.NewHTTP(embed.HTTPOptions{BaseURL: dead, Model: "m", Dim: 8, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	app, err := service.Open(context.Background(), service.Config{DataDir: filepath.Join(t.TempDir(), "data"), Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	s := serveApp(t, app, nil)
	imp := s.token("org_a", "importer")
	r := s.do("POST", "/v1/orgs/org_a/projects/p/triplets", imp, "application/json", []byte(`[{"source": "A", "relationship": "calls", "target": "B"}]`))
	if r.status != 503 || r.header.Get("Retry-After") == "" || r.errCode() != "embedder_unavailable" || !strings.Contains(string(r.body), ln.Addr().String()) {
		t.Fatalf("import with the embedder down: %d %v %s", r.status, r.header, r.body)
	}
	r = s.do("POST", "/v1/orgs/org_a/projects/p/observations", imp, "application/json", []byte(`{"content": "x"}`))
	if r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Fatalf("observation with the embedder down: %d %s", r.status, r.body)
	}
	if st := s.stats("org_a", "p"); st.Nodes != 0 || st.Triplets != 0 {
		t.Fatalf("written: %+v", st)
	}
	if err := app.Store.Check(); err != nil {
		t.Fatal(err)
	}
}

// Item 20: rows that parse but are not triplets are 422 naming their line;
// 400 is for bodies that cannot be read at all.
func TestImportRowErrorsAre422(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_a", "importer")
	for _, c := range []struct {
		name, ctype, body string
		status            int
		line              string
	}{
		{"TSV row with two fields", "text/tab-separated-values", "A\tcalls\tB\nC\tcalls\n", 422, `"line":2`},
		{"CSV row with one field", "text/csv", "A,calls,B\nlonely\n", 422, `"line":2`},
		{"pipe line with two parts", "text/plain", "A|calls|B\nA|calls\n", 422, `"line":2`},
		{"N-Triples without the final dot", "application/n-triples", "<a> <calls> <b> .\n<c> <calls> <d>\n", 422, `"line":2`},
		{"JSON line that is a number", "application/x-ndjson", `{"source": "A", "relationship": "calls", "target": "B"}` + "\n42\n", 422, `"line":2`},
		{"malformed JSON array", "application/json", `[{"source": "A", "relationship": "calls", "target": "B"}, {"source": `, 400, ""},
		{"truncated gzip", "application/x-ndjson", "\x1f\x8b\x08\x00\x00\x00", 400, ""},
	} {
		r := s.do("POST", "/v1/orgs/org_a/projects/p/triplets", imp, c.ctype, []byte(c.body))
		if r.status != c.status || !strings.Contains(string(r.body), c.line) {
			t.Errorf("%s: %d %s (want %d naming %s)", c.name, r.status, r.body, c.status, c.line)
		}
	}
	if st := s.stats("org_a", "p"); st.Triplets != 0 {
		t.Fatalf("written: %+v", st)
	}
}
