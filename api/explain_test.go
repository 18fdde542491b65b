package api

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// Every block route explains its lines on request ("explain": true), and
// only then: the score parts multiply to the importance (unless a longer
// path lent it), 1 - importance is the line's relevanceScore, and a
// second hop names the path before it.
func TestExplainEveryBlock(t *testing.T) {
	s := startServer(t)
	imp, ag := s.token("org_a", "importer"), s.token("org_a", "agent")
	if r := s.do("POST", "/v1/orgs/org_a/projects/p/triplets", imp, "application/json", []byte(`[
		{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB"},
		{"source": "PostgresDB", "relationship": "hosted_on", "target": "DatabaseCluster"},
		{"source": "Gateway", "relationship": "calls", "target": "AuthService"},
		{"source": "error:timeout", "relationship": "resolved_by", "target": "fix:retry"}]`)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	s.do("POST", "/v1/orgs/org_a/projects/p/observations", imp, "application/json", []byte(`{"content": "AuthService timeouts come from the database cluster"}`))
	type parts struct {
		Importance, SeedScore, QueryMatch, HopDecay, Hub, Weight, Spread float64
		Seed                                                             string
		Hop                                                              int
		Lent                                                             bool
		Path                                                             []string
	}
	type triplet struct {
		SourceEntity, TargetEntity string
		RelevanceScore             float64
		Explain                    *parts
	}
	check := func(where string, ts []triplet) {
		t.Helper()
		if len(ts) == 0 {
			t.Fatalf("%s: no triplets", where)
		}
		hop2 := false
		for _, x := range ts {
			p := x.Explain
			if p == nil {
				t.Fatalf("%s: %s→%s not explained", where, x.SourceEntity, x.TargetEntity)
			}
			if math.Abs(1-p.Importance-x.RelevanceScore) > 1e-9 {
				t.Errorf("%s: relevanceScore %v but importance %v", where, x.RelevanceScore, p.Importance)
			}
			own := p.SeedScore * p.QueryMatch * p.HopDecay * p.Hub * p.Weight * p.Spread
			if !p.Lent && math.Abs(own-p.Importance) > 1e-6 {
				t.Errorf("%s: parts multiply to %v, importance %v: %+v", where, own, p.Importance, p)
			}
			if p.Lent && own > p.Importance+1e-9 {
				t.Errorf("%s: lent importance %v below its own %v", where, p.Importance, own)
			}
			if p.Seed == "" || p.Hop < 1 || len(p.Path) != p.Hop-1 {
				t.Errorf("%s: seed %q hop %d path %v", where, p.Seed, p.Hop, p.Path)
			}
			hop2 = hop2 || p.Hop == 2
		}
		if where == "graph" && !hop2 {
			t.Errorf("graph: no second hop explained: %+v", ts)
		}
	}
	var gb struct{ Triplets []triplet }
	r := s.post("/v1/context/graph", ag, map[string]any{"scope": map[string]string{"orgId": "org_a", "projectId": "p"},
		"queryText": "which cluster hosts the database AuthService depends on", "explain": true})
	r.json(t, &gb)
	check("graph", gb.Triplets)
	if r := s.post("/v1/context/graph", ag, map[string]any{"scope": map[string]string{"orgId": "org_a", "projectId": "p"},
		"queryText": "AuthService"}); strings.Contains(string(r.body), `"explain"`) {
		t.Fatalf("explained without asking: %s", r.body)
	}
	var sb struct {
		Explain struct {
			Observations []struct {
				ID                       string
				Relevance, Weight, Score float64
			}
			Triplets []triplet
		}
	}
	r = s.post("/v1/context/session", ag, map[string]any{"sessionId": "s1", "orgId": "org_a", "projectId": "p", "workType": "bug_fix",
		"queryText": "AuthService timeouts database cluster", "explain": true})
	r.json(t, &sb)
	check("session", sb.Explain.Triplets)
	if len(sb.Explain.Observations) != 1 || math.Abs(sb.Explain.Observations[0].Score-sb.Explain.Observations[0].Relevance*(0.5+sb.Explain.Observations[0].Weight)) > 1e-9 {
		t.Fatalf("session observations: %s", r.body)
	}
	var rag struct {
		Expanded []struct {
			Node    string
			Score   float64
			Explain *parts
		}
	}
	r = s.post("/v1/context/rag", ag, map[string]any{"scope": map[string]string{"orgId": "org_a", "projectId": "p"},
		"queryText": "error timeout", "explain": true})
	r.json(t, &rag)
	if len(rag.Expanded) == 0 || rag.Expanded[0].Explain == nil || math.Abs(rag.Expanded[0].Explain.Importance-rag.Expanded[0].Score) > 1e-9 {
		t.Fatalf("rag: %s", r.body)
	}
	var ev struct{ Triplets []triplet }
	r = s.post("/v1/sessions/s1/verb-events", ag, map[string]any{"phase": "pre-verb", "projectId": "p", "tool": "Edit",
		"query": "AuthService database", "explain": true})
	json.Unmarshal(r.body, &ev)
	check("verb event", ev.Triplets)
}
