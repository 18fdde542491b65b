package api

import (
	"strings"
	"testing"
)

func TestDeliveryEndToEnd(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_123", "importer")
	ag := s.token("org_123", "agent")
	other := s.token("org_999", "agent")
	s.do("POST", projPath+"/triplets", imp, "application/json", []byte(`[{"source": "Router", "relationship": "calls", "target": "AuthMiddleware"}]`))
	s.do("POST", projPath+"/observations", imp, "application/json", []byte(`[{"content": "The router retries twice on 503", "metadata": {"paths": ["pkg/http/router.go"]}}, {"content": "router timeouts live in config.yaml"}]`))
	claim := func(worker string, lease int) resp {
		return s.post("/v1/sessions/ses_d/claim", ag, map[string]any{"workerId": worker, "leaseSeconds": lease, "orgId": "org_123",
			"projectId": "proj_xyz", "agentId": "agent_dev", "workType": "bug_fix", "queryText": "router retries",
			"capability": map[string]any{"supportsMessageInjection": true}})
	}
	r := claim("w1", 30)
	var cl struct {
		WorkerID, ExpiresAt string
		Enqueued            bool
		Inject              *injectJSON
	}
	r.json(t, &cl)
	if r.status != 200 || cl.WorkerID != "w1" || !cl.Enqueued || cl.Inject == nil || !strings.Contains(cl.Inject.Text, "## Relevant Past Observations") {
		t.Fatalf("claim: %d %s", r.status, r.body)
	}
	if r := claim("w2", 30); r.status != 409 {
		t.Fatalf("second worker: %d %s", r.status, r.body)
	}
	// Refresh re-delivers the unacked inject to the holder only.
	r = s.post("/v1/sessions/ses_d/refresh", ag, map[string]any{"workerId": "w1"})
	var rf struct{ Inject *injectJSON }
	r.json(t, &rf)
	if r.status != 200 || rf.Inject == nil || rf.Inject.DeliveryID != cl.Inject.DeliveryID || rf.Inject.Attempts != 2 {
		t.Fatalf("refresh: %d %s", r.status, r.body)
	}
	if r := s.post("/v1/sessions/ses_d/refresh", ag, map[string]any{"workerId": "w2"}); r.status != 409 {
		t.Fatalf("non-holder refresh: %d", r.status)
	}
	if r := s.post("/v1/sessions/ses_d/injects/claim", ag, map[string]any{"workerId": "w2"}); r.status != 409 {
		t.Fatalf("non-holder claim: %d", r.status)
	}
	if r := s.do("POST", "/v1/sessions/ses_d/injects/dlv_nope/ack", ag, "", nil); r.status != 409 {
		t.Fatalf("wrong ack: %d", r.status)
	}
	if r := s.do("POST", "/v1/sessions/ses_d/injects/"+cl.Inject.DeliveryID+"/ack", ag, "", nil); r.status != 204 {
		t.Fatalf("ack: %d %s", r.status, r.body)
	}
	if r := s.post("/v1/sessions/ses_d/injects/claim", ag, map[string]any{"workerId": "w1"}); r.status != 204 {
		t.Fatalf("empty queue: %d %s", r.status, r.body)
	}
	// Enqueue: 201, then 200 duplicate.
	if r := s.post("/v1/sessions/ses_d/injects", ag, map[string]any{"orgId": "org_123", "text": "extra block", "observationIds": []string{}}); r.status != 201 {
		t.Fatalf("enqueue: %d %s", r.status, r.body)
	}
	if r := s.post("/v1/sessions/ses_d/injects", ag, map[string]any{"orgId": "org_123", "text": "extra block"}); r.status != 200 || !strings.Contains(string(r.body), `"duplicate":true`) {
		t.Fatalf("duplicate: %d %s", r.status, r.body)
	}
	// A verb event: injected onto the durable queue (the lease says the
	// runtime supports it).
	r = s.post("/v1/sessions/ses_d/verb-events", ag, map[string]any{"phase": "pre-verb", "orgId": "org_123", "projectId": "proj_xyz",
		"agentId": "agent_dev", "tool": "Edit", "paths": []string{"pkg/http/router.go"}, "query": "router timeouts", "emittedAt": 1})
	var vr struct {
		Outcome   string
		ElapsedMs float64
		Block     string
	}
	r.json(t, &vr)
	if r.status != 200 || (vr.Outcome != "injected" && vr.Outcome != "no-match") {
		t.Fatalf("verb event: %d %s", r.status, r.body)
	}
	if r := s.post("/v1/sessions/ses_d/verb-events", ag, map[string]any{"phase": "pre-verb", "projectId": "proj_xyz", "tool": "TodoWrite"}); !strings.Contains(string(r.body), `"outcome":"skipped"`) {
		t.Fatalf("skip: %s", r.body)
	}
	if r := s.do("POST", "/v1/sessions/ses_d/pending/drain", ag, "", nil); r.status != 200 || !strings.Contains(string(r.body), `"pending":[]`) {
		t.Fatalf("drain: %d %s", r.status, r.body)
	}
	if r := s.do("DELETE", "/v1/sessions/ses_d", ag, "", nil); r.status != 204 {
		t.Fatalf("forget: %d", r.status)
	}
	// Another org using the same session id has a session of its own:
	// none of its calls sees or moves org_123's lease, queue, logs or
	// in-session state.
	before := s.do("GET", "/v1/sessions/ses_d/injection-logs", ag, "", nil)
	for _, p := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1/sessions/ses_d/refresh", `{"workerId": "w1"}`, 409},
		{"POST", "/v1/sessions/ses_d/injects/claim", `{"workerId": "w1"}`, 409},
		{"POST", "/v1/sessions/ses_d/injects/x/ack", ``, 409},
		{"POST", "/v1/sessions/ses_d/pending/drain", ``, 200},
		{"DELETE", "/v1/sessions/ses_d", ``, 204},
		{"GET", "/v1/sessions/ses_d/injection-logs", ``, 200},
		{"POST", "/v1/sessions/ses_d/feedback", `{"outcome": "helpful"}`, 404},
		{"POST", "/v1/sessions/ses_d/claim", `{"workerId": "x", "orgId": "org_999", "projectId": "p"}`, 200},
		{"POST", "/v1/sessions/ses_d/injects", `{"orgId": "org_999", "text": "t"}`, 201},
		{"POST", "/v1/sessions/ses_d/verb-events", `{"phase": "pre-verb", "orgId": "org_999", "projectId": "p", "tool": "Edit"}`, 200},
		{"POST", "/v1/sessions/ses_d/claim", `{"workerId": "x", "orgId": "org_123", "projectId": "p"}`, 403},
		{"POST", "/v1/sessions/ses_d/injects", `{"orgId": "org_123", "text": "t"}`, 403},
	} {
		r := s.do(p.method, p.path, other, "application/json", []byte(p.body))
		if r.status != p.status || (r.status < 300 && strings.Contains(string(r.body), "org_123")) {
			t.Errorf("other org %s %s: %d %s (want %d)", p.method, p.path, r.status, r.body, p.status)
		}
	}
	if after := s.do("GET", "/v1/sessions/ses_d/injection-logs", ag, "", nil); string(after.body) != string(before.body) {
		t.Fatalf("org_123's logs changed: %s -> %s", before.body, after.body)
	}
	if r := s.post("/v1/sessions/ses_d/refresh", ag, map[string]any{"workerId": "w1"}); r.status != 200 {
		t.Fatalf("org_123's lease was disturbed: %d %s", r.status, r.body)
	}
	// Bad input: clear 4xx, nothing changed.
	for name, body := range map[string]string{
		"unknown phase": `{"phase": "during", "projectId": "proj_xyz", "tool": "Edit"}`,
		"tool over 256": `{"phase": "pre-verb", "projectId": "proj_xyz", "tool": "` + strings.Repeat("t", 257) + `"}`,
		"10k paths":     `{"phase": "pre-verb", "projectId": "proj_xyz", "tool": "Edit", "paths": [` + strings.TrimSuffix(strings.Repeat(`"a.go",`, 10_000), ",") + `]}`,
		"bad scope":     `{"phase": "pre-verb", "projectId": "proj_xyz", "tool": "Edit", "memoryScope": "world"}`,
	} {
		if r := s.do("POST", "/v1/sessions/ses_d/verb-events", ag, "application/json", []byte(body)); r.status != 400 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	for _, lease := range []int{-5, 0, 3601} {
		if r := claim("w1", lease); r.status != 400 {
			t.Errorf("lease %d: %d %s", lease, r.status, r.body)
		}
	}
	if r := s.do("PUT", "/v1/admin/in-session-config", s.admin, "application/json", []byte(`{"enabled": true, "latencyBudgetMs": 80, "maxSuggestionsPerEvent": 2}`)); r.status != 200 || !strings.Contains(string(r.body), `"latencyBudgetMs":80`) {
		t.Fatalf("in-session config: %d %s", r.status, r.body)
	}
	if r := s.do("PUT", "/v1/admin/in-session-config", s.admin, "application/json", []byte(`{"minRelevanceScore": 7}`)); r.status != 400 {
		t.Fatalf("bad in-session config: %d %s", r.status, r.body)
	}
}
