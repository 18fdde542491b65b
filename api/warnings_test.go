package api

import (
	"strings"
	"testing"
)

// Probable mistakes get warnings beside an answer that stays 200.
func TestWarnings(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_w", "importer")
	ag := s.token("org_w", "agent")
	limited := s.token("org_w", "agent", "webapp")
	if r := s.do("POST", "/v1/orgs/org_w/projects/api/triplets", imp, "application/json",
		[]byte(`[{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB"}]`)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	var out struct {
		Block    string
		Warnings []string
	}
	graph := func(tok, project string) {
		out.Warnings = nil
		r := s.post("/v1/context/graph", tok, map[string]any{"scope": map[string]string{"orgId": "org_w", "projectId": project}, "queryText": "auth service"})
		if r.status != 200 {
			t.Fatalf("graph block: %d %s", r.status, r.body)
		}
		r.json(t, &out)
	}
	graph(ag, "apj")
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "project apj holds no nodes; did you mean api?") {
		t.Fatalf("unknown project: %q", out.Warnings)
	}
	graph(ag, "api")
	if len(out.Warnings) != 0 || out.Block == "" {
		t.Fatalf("a good request warned: %q", out.Warnings)
	}
	// A token limited to webapp is not told of project api.
	graph(limited, "webapp")
	if len(out.Warnings) != 1 || strings.Contains(out.Warnings[0], "api") {
		t.Fatalf("limited token: %q", out.Warnings)
	}
	session := func(body map[string]any) []string {
		var sb struct{ Warnings []string }
		r := s.post("/v1/context/session", ag, body)
		if r.status != 200 {
			t.Fatalf("session: %d %s", r.status, r.body)
		}
		r.json(t, &sb)
		return sb.Warnings
	}
	w := session(map[string]any{"sessionId": "ses_w", "projectId": "api", "workType": "bugfix", "workItem": map[string]string{"title": "auth fails"}})
	if len(w) != 1 || !strings.Contains(w[0], "workType bugfix is not configured, the default budget 500 applies; did you mean bug_fix?") {
		t.Fatalf("work type: %q", w)
	}
	w = session(map[string]any{"sessionId": "ses_w2", "projectId": "api", "workType": "bug_fix"})
	if len(w) != 1 || !strings.Contains(w[0], "no work item") {
		t.Fatalf("no work item: %q", w)
	}
	if w := session(map[string]any{"sessionId": "ses_w3", "projectId": "api", "workType": "bug_fix", "queryText": "auth"}); len(w) != 0 {
		t.Fatalf("a good session warned: %q", w)
	}
}
