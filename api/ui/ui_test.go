package ui_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/api/apitest"
	"github.com/kgctx/kgctx/api/ui"
	"github.com/kgctx/kgctx/engine/auth"
)

func get(t *testing.T, method, url, tok string, body any) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

func TestPageAndAssets(t *testing.T) {
	s := apitest.Start(t, api.Config{})
	for path, ctype := range map[string]string{"/ui": "text/html", "/ui/": "text/html", "/ui/index.html": "text/html",
		"/ui/app.js": "text/javascript", "/ui/style.css": "text/css"} {
		res, body := get(t, "GET", s.URL+path, "", nil)
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), ctype) || len(body) == 0 {
			t.Errorf("%s: %d %q", path, res.StatusCode, res.Header.Get("Content-Type"))
		}
		if res.Header.Get("Content-Security-Policy") != ui.CSP || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", path, res.Header)
		}
	}
	for _, path := range []string{"/ui/nope.js", "/ui/static/app.js", "/ui/..%2fui.go", "/ui/ui.go"} {
		if res, _ := get(t, "GET", s.URL+path, "", nil); res.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", path, res.StatusCode)
		}
	}
	if res, _ := get(t, "HEAD", s.URL+"/ui/app.js", "", nil); res.StatusCode != 200 || res.Header.Get("Content-Security-Policy") != ui.CSP {
		t.Errorf("HEAD /ui/app.js: %d", res.StatusCode)
	}
	if res, _ := get(t, "POST", s.URL+"/ui", "", nil); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /ui: %d", res.StatusCode)
	}
	// Nothing inline: the CSP would refuse it.
	_, page := get(t, "GET", s.URL+"/ui", "", nil)
	if regexp.MustCompile(`(?i)<script>|<style|\son[a-z]+=|style=|javascript:|https?://`).Match(page) {
		t.Errorf("inline code, style or another origin in the page:\n%s", page)
	}
}

// TestEndpointsThePageUses: every route app.js calls is served, and
// answers with the fields the page reads.
func TestEndpointsThePageUses(t *testing.T) {
	js, err := os.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, route := range []string{`"/v1/whoami"`, `"/projects"`, `"/v1/context/graph"`, `"/v1/context/session"`, `"/nodes/"`, `"/graph/triplets?"`, `"/graph/stats"`} {
		if !bytes.Contains(js, []byte(route)) {
			t.Errorf("app.js no longer calls %s: update this test", route)
		}
	}
	if bytes.Contains(js, []byte("localStorage")) || bytes.Contains(js, []byte("document.cookie")) || bytes.Contains(js, []byte("innerHTML")) {
		t.Error("app.js keeps the token beyond the tab or writes HTML")
	}
	s := apitest.Start(t, api.Config{})
	tok := s.Token("org_ui", "viewer", auth.RoleImporter, "p1")
	base := s.URL + "/v1/orgs/org_ui/projects/p1"
	if res, b := get(t, "POST", base+"/triplets", tok, []map[string]any{
		{"source": "AuthMiddleware", "relationship": "calls", "target": "AuthService", "targetDescription": "Issues and checks tokens."},
		{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB"},
	}); res.StatusCode != 200 {
		t.Fatalf("import: %d %s", res.StatusCode, b)
	}
	var who struct {
		OrgID, AgentID, Role string
		ProjectIDs           []string
	}
	_, b := get(t, "GET", s.URL+"/v1/whoami", tok, nil)
	json.Unmarshal(b, &who)
	if who.OrgID != "org_ui" || len(who.ProjectIDs) != 1 || who.Role == "" {
		t.Errorf("whoami: %s", b)
	}
	var ps struct {
		Projects []struct {
			ProjectID string
			Nodes     *int
		}
	}
	_, b = get(t, "GET", s.URL+"/v1/orgs/org_ui/projects", tok, nil)
	json.Unmarshal(b, &ps)
	if len(ps.Projects) != 1 || ps.Projects[0].ProjectID != "p1" || ps.Projects[0].Nodes == nil || *ps.Projects[0].Nodes != 3 {
		t.Errorf("projects: %s", b)
	}
	var g struct {
		Block    string
		Triplets []struct {
			SourceEntity, Relationship, TargetEntity, SourceNodeID, TargetNodeID string
			Explain                                                              *struct {
				Importance float64
				SeedNodeID string
				Hop        int
			}
		}
		ActualTokens, Seeds, Candidates, Denied *int
	}
	_, b = get(t, "POST", s.URL+"/v1/context/graph", tok, map[string]any{"scope": map[string]any{"orgId": "org_ui", "projectId": "p1"},
		"queryText": "auth middleware", "budgetTokens": 500, "topK": 10, "neighborhoodDepth": 2, "explain": true})
	json.Unmarshal(b, &g)
	if !strings.Contains(g.Block, "AuthMiddleware → calls → AuthService") || len(g.Triplets) == 0 || g.Triplets[0].Explain == nil ||
		g.Triplets[0].Explain.SeedNodeID == "" || g.ActualTokens == nil || g.Seeds == nil || g.Denied == nil {
		t.Fatalf("graph block: %s", b)
	}
	var sess struct {
		Block, BudgetTokens any
		Explain             *struct{ Triplets []map[string]any }
	}
	_, b = get(t, "POST", s.URL+"/v1/context/session", tok, map[string]any{"sessionId": "explorer-1", "orgId": "org_ui", "projectId": "p1",
		"workType": "bug_fix", "workItem": map[string]any{"title": "auth middleware fails", "description": ""}, "explain": true})
	json.Unmarshal(b, &sess)
	if sess.Explain == nil || len(sess.Explain.Triplets) == 0 {
		t.Errorf("session block: %s", b)
	}
	var n struct {
		Name, Type, Description string
		Weight                  *float64
	}
	_, b = get(t, "GET", base+"/nodes/"+g.Triplets[0].TargetNodeID, tok, nil)
	json.Unmarshal(b, &n)
	if n.Name == "" || n.Weight == nil {
		t.Errorf("node: %s", b)
	}
	var ts struct {
		Triplets []struct {
			Source, Relationship, Target string
			Weight                       *float64
		}
	}
	_, b = get(t, "GET", base+"/graph/triplets?subject=AuthService&limit=50", tok, nil)
	json.Unmarshal(b, &ts)
	if len(ts.Triplets) != 1 || ts.Triplets[0].Weight == nil {
		t.Errorf("triplets: %s", b)
	}
	var st struct {
		Nodes, Triplets int
		Predicates      map[string]int
	}
	_, b = get(t, "GET", base+"/graph/stats", tok, nil)
	json.Unmarshal(b, &st)
	if st.Nodes != 3 || st.Predicates["calls"] != 1 {
		t.Errorf("stats: %s", b)
	}
	// Another org's token reads nothing of it through the same calls.
	other := s.Token("org_other", "viewer", auth.RoleAgent)
	if res, _ := get(t, "GET", base+"/graph/stats", other, nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("another org's stats: %d", res.StatusCode)
	}
}
