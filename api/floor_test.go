package api

import (
	"strings"
	"testing"
)

// TestRelevanceFloorOverHTTP: minRelevance is taken by the graph and
// session routes, a floor of 1 keeps only the best line's peers, and one
// outside [0,1] is a 400 naming the field.
func TestRelevanceFloorOverHTTP(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_123", "importer")
	ag := s.token("org_123", "agent", "proj_xyz")
	nd := `{"source": "BillingService", "relationship": "depends_on", "target": "PostgresDB"}
{"source": "PaymentsGateway", "relationship": "calls", "target": "BillingService"}
{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB"}
{"source": "UserController", "relationship": "calls", "target": "AuthService"}
`
	if r := s.do("POST", projPath+"/triplets", imp, "application/x-ndjson", []byte(nd)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	lines := func(floor any) (int, string) {
		req := map[string]any{"scope": map[string]any{"orgId": "org_123", "projectId": "proj_xyz"}, "queryText": "billing payments",
			"neighborhoodDepth": 3}
		if floor != nil {
			req["minRelevance"] = floor
		}
		r := s.post("/v1/context/graph", ag, req)
		var gb struct {
			Triplets []struct{ SourceEntity string }
		}
		r.json(t, &gb)
		return len(gb.Triplets), string(r.body)
	}
	all, _ := lines(nil)
	few, body := lines(1)
	if few == 0 || few >= all {
		t.Fatalf("floor 1: %d lines, default %d: want fewer, and some: %s", few, all, body)
	}
	for _, bad := range []any{1.5, -0.2} {
		r := s.post("/v1/context/graph", ag, map[string]any{"scope": map[string]any{"orgId": "org_123", "projectId": "proj_xyz"},
			"queryText": "billing", "minRelevance": bad})
		if r.status != 400 || !strings.Contains(string(r.body), "minRelevance") {
			t.Fatalf("graph minRelevance %v: %d %s", bad, r.status, r.body)
		}
		r = s.post("/v1/context/session", ag, map[string]any{"sessionId": "ses_f", "workType": "bug_fix", "projectId": "proj_xyz",
			"queryText": "billing", "minRelevance": bad})
		if r.status != 400 || !strings.Contains(string(r.body), "minRelevance") {
			t.Fatalf("session minRelevance %v: %d %s", bad, r.status, r.body)
		}
	}
}
