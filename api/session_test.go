package api

import (
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/sessionlog"
)

func TestSessionMemoryEndToEnd(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_123", "importer")
	adm := s.token("org_123", "org_admin")
	ag := s.token("org_123", "agent")
	other := s.token("org_999", "agent")
	s.do("POST", projPath+"/triplets", imp, "application/json", []byte(`[{"source": "AuthMiddleware", "relationship": "calls", "target": "TokenValidator"}]`))
	// Configs.
	r := s.do("PUT", projPath+"/memory-config", adm, "application/json", []byte(`{"memoryEnabled": true, "graphEnabled": true, "runtimeInjectEnabled": false, "techStack": ["go", "postgres"]}`))
	if r.status != 200 || !strings.Contains(string(r.body), `"techStack":["go","postgres"]`) {
		t.Fatalf("memory-config: %d %s", r.status, r.body)
	}
	if r := s.do("PUT", projPath+"/memory-config", ag, "application/json", []byte(`{}`)); r.status != 403 {
		t.Fatalf("agent changed memory-config: %d", r.status)
	}
	if r := s.do("PUT", "/v1/admin/budgets", s.admin, "application/json", []byte(`{"defaults": {"bug_fix": 750}, "orgOverrides": {"org_123": {"feature": 600}}}`)); r.status != 200 {
		t.Fatalf("budgets: %d %s", r.status, r.body)
	}
	if r := s.do("PUT", "/v1/admin/budgets", s.admin, "application/json", []byte(`{"defaults": {"bug_fix": 0}}`)); r.status != 400 {
		t.Fatalf("budget 0: %d %s", r.status, r.body)
	}
	if r := s.do("PUT", "/v1/admin/recall-matrix", s.admin, "application/json", []byte(`{"defaults": {"bug_fix": true, "chore": false}, "orgOverrides": {"org_abc": {"chore": true}}}`)); r.status != 200 {
		t.Fatalf("recall: %d %s", r.status, r.body)
	}
	if r := s.do("PUT", "/v1/admin/orgs/org_123/plan", s.admin, "application/json", []byte(`{"features": {"kg_enabled": true}}`)); r.status != 200 {
		t.Fatalf("plan: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/v1/admin/orgs/org_123/plan", ag, "", nil); r.status != 403 {
		t.Fatalf("agent read plan: %d", r.status)
	}
	// Observations: one, many, bad ones.
	r = s.do("POST", projPath+"/observations", imp, "application/json", []byte(`{"content": "Auth middleware rejects expired tokens", "metadata": {"paths": ["pkg/auth/mw.go"], "sessionId": "ses_0", "namespace": "backend", "tags": ["auth"], "workType": "bug_fix"}}`))
	var created struct{ IDs []string }
	r.json(t, &created)
	if r.status != 201 || len(created.IDs) != 1 {
		t.Fatalf("observation: %d %s", r.status, r.body)
	}
	r = s.do("POST", projPath+"/observations", imp, "application/json", []byte(`[{"content": "Token validator caches keys for an hour"}, {"content": "Billing retries twice", "weight": 0.9}]`))
	if r.status != 201 {
		t.Fatalf("observations: %d %s", r.status, r.body)
	}
	countObs := func() int {
		n := 0
		_ = s.app.Store.View(func(v *engine.View) error {
			if b := v.ScopeObservations(engine.Tenant{Org: "org_123", Project: "proj_xyz"}); b != nil {
				n = int(b.GetCardinality())
			}
			return nil
		})
		return n
	}
	before := countObs()
	for name, body := range map[string]string{
		"over 64 KiB":       `{"content": "` + strings.Repeat("x", 64<<10+1) + `"}`,
		"empty":             `{"content": ""}`,
		"invalid utf8":      "{\"content\": \"a\xffb\"}",
		"namespace control": `{"content": "x", "metadata": {"namespace": "a\u0007b"}}`,
		"second of array":   `[{"content": "fine"}, {"content": "  "}]`,
		"malformed":         `{"content": `,
		"wrong type":        `{"content": 5}`,
	} {
		r := s.do("POST", projPath+"/observations", imp, "application/json", []byte(body))
		if r.status < 400 || r.status >= 500 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
		if n := countObs(); n != before {
			t.Fatalf("%s changed the store: %d -> %d", name, before, n)
		}
	}
	if r := s.do("GET", projPath+"/observations/"+created.IDs[0], ag, "", nil); r.status != 200 || !strings.Contains(string(r.body), "rejects expired") {
		t.Fatalf("get observation: %d %s", r.status, r.body)
	}
	if r := s.do("GET", projPath+"/observations/"+created.IDs[0], other, "", nil); r.status != 403 {
		t.Fatalf("other org read an observation: %d", r.status)
	}
	// The session block.
	body := map[string]any{"sessionId": "ses_abc", "workType": "bug_fix", "orgId": "org_123", "projectId": "proj_xyz",
		"workItem": map[string]any{"identifier": "ENG-42", "title": "Auth middleware rejects valid tokens", "description": "first line\nsecond"}}
	r = s.post("/v1/context/session", ag, body)
	var sb struct {
		Block                        string
		ObservationIDs, GraphNodeIDs []string
		GraphEdgeKeys                []engine.EdgeKey
		BudgetTokens, ActualTokens   int
		QueryText, LogID             string
	}
	r.json(t, &sb)
	if r.status != 200 || sb.BudgetTokens != 750 || sb.QueryText != "ENG-42 Auth middleware rejects valid tokens first line" ||
		!strings.Contains(sb.Block, "## Relevant Past Observations") || !strings.Contains(sb.Block, "## Knowledge Graph Triplets") || sb.LogID == "" || len(sb.GraphEdgeKeys) != 1 {
		t.Fatalf("session: %d %s", r.status, r.body)
	}
	blockLog := sb.LogID
	// Another org's ses_abc is its own session (ids are scoped by org).
	if r := s.post("/v1/context/session", other, map[string]any{"sessionId": "ses_abc", "orgId": "org_999", "projectId": "p"}); r.status != 200 {
		t.Fatalf("another org's session of the same id: %d %s", r.status, r.body)
	}
	if r := s.post("/v1/context/session", ag, map[string]any{"sessionId": "ses_x", "orgId": "org_999", "projectId": "p"}); r.status != 403 {
		t.Fatalf("body org differs from token: %d", r.status)
	}
	// Unknown work type: the fallback budget.
	r = s.post("/v1/context/session", ag, map[string]any{"sessionId": "ses_u", "workType": "exploration", "orgId": "org_123", "projectId": "proj_xyz", "queryText": "tokens"})
	r.json(t, &sb)
	if sb.BudgetTokens != 500 {
		t.Fatalf("unknown work type budget %d", sb.BudgetTokens)
	}
	// Logs, newest first; another org may neither read, log nor give feedback.
	if r := s.post("/v1/injection-logs", ag, map[string]any{"sessionId": "ses_abc", "orgId": "org_123", "workType": "bug_fix", "observationIds": []string{created.IDs[0]}}); r.status != 201 {
		t.Fatalf("post log: %d %s", r.status, r.body)
	}
	r = s.do("GET", "/v1/sessions/ses_abc/injection-logs", ag, "", nil)
	var logs struct{ Logs []sessionlog.InjectionLog }
	r.json(t, &logs)
	if r.status != 200 || len(logs.Logs) != 2 || logs.Logs[1].ID != blockLog {
		t.Fatalf("logs: %d %s", r.status, r.body)
	}
	// Another org sees only its own ses_abc, and may not log for org_123.
	if r := s.do("GET", "/v1/sessions/ses_abc/injection-logs", other, "", nil); r.status != 200 || strings.Contains(string(r.body), blockLog) || strings.Contains(string(r.body), "org_123") {
		t.Errorf("other org read org_123's logs: %d %s", r.status, r.body)
	}
	if r := s.do("POST", "/v1/injection-logs", other, "application/json", []byte(`{"sessionId": "ses_abc", "orgId": "org_123"}`)); r.status != 403 {
		t.Errorf("other org logged for org_123: %d %s", r.status, r.body)
	}
	// Feedback: helpful once per log.
	r = s.post("/v1/sessions/ses_abc/feedback", ag, map[string]string{"outcome": "helpful"})
	var fb struct{ Updated sessionlog.FeedbackResult }
	r.json(t, &fb)
	if r.status != 200 || fb.Updated.Observations == 0 || fb.Updated.Edges != 1 {
		t.Fatalf("feedback: %d %s", r.status, r.body)
	}
	r = s.post("/v1/sessions/ses_abc/feedback", ag, map[string]string{"outcome": "helpful"})
	r.json(t, &fb)
	if fb.Updated.Logs != 0 || fb.Updated.Observations != 0 {
		t.Fatalf("second helpful applied again: %s", r.body)
	}
	if r := s.post("/v1/sessions/ses_abc/feedback", ag, map[string]string{"outcome": "great"}); r.status != 400 {
		t.Fatalf("bad outcome: %d", r.status)
	}
	o := s.do("GET", projPath+"/observations/"+created.IDs[0], ag, "", nil)
	var ob engine.Observation
	o.json(t, &ob)
	if ob.Weight <= 0.5 {
		t.Fatalf("helpful did not raise the weight: %v", ob.Weight)
	}
}
