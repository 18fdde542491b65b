package api

import (
	"strings"
	"testing"
)

// TestCodeMapOverHTTP: a code graph's block carries a code map by default,
// codeMap false leaves it out, and the session block's graph part has one
// too; the symbols come back beside the block.
func TestCodeMapOverHTTP(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_123", "importer")
	ag := s.token("org_123", "agent", "proj_xyz")
	nd := `{"source": "conn.go", "relationship": "defines", "target": "nats.Conn.doReconnect", "sourceExact": true, "targetExact": true, "sourceLocation": {"file": "conn.go", "line": 1, "endLine": 400}, "targetLocation": {"file": "conn.go", "line": 100, "endLine": 190}, "targetSignature": "func (nc *Conn) doReconnect(err error)"}
{"source": "nats.Conn.doReconnect", "relationship": "calls", "target": "nats.Conn.processConnectInit", "sourceExact": true, "targetExact": true, "targetLocation": {"file": "conn.go", "line": 250, "endLine": 320}, "targetSignature": "func (nc *Conn) processConnectInit() error"}
`
	if r := s.do("POST", projPath+"/triplets", imp, "application/x-ndjson", []byte(nd)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	req := map[string]any{"scope": map[string]any{"orgId": "org_123", "projectId": "proj_xyz"}, "queryText": "race in doReconnect"}
	var gb struct {
		Block   string
		CodeMap []struct {
			NodeID, Name, File, Signature string
			Line                          int
		}
	}
	r := s.post("/v1/context/graph", ag, req)
	r.json(t, &gb)
	if r.status != 200 || !strings.Contains(gb.Block, "\n\n## Code Map\nconn.go:\n  100│ func (nc *Conn) doReconnect(err error)") ||
		len(gb.CodeMap) == 0 || gb.CodeMap[0].Name != "nats.Conn.doReconnect" || gb.CodeMap[0].Line != 100 || gb.CodeMap[0].NodeID == "" {
		t.Fatalf("graph block: %d %s", r.status, r.body)
	}
	req["codeMap"] = false
	gb.CodeMap = nil
	r = s.post("/v1/context/graph", ag, req)
	r.json(t, &gb)
	if r.status != 200 || strings.Contains(gb.Block, "## Code Map") || len(gb.CodeMap) != 0 {
		t.Fatalf("codeMap false: %d %s", r.status, r.body)
	}
	r = s.post("/v1/context/session", ag, map[string]any{"sessionId": "ses_cm", "workType": "bug_fix", "projectId": "proj_xyz",
		"queryText": "race in doReconnect"})
	var sb struct {
		Block        string
		GraphNodeIDs []string
		CodeMap      []struct{ NodeID string }
	}
	r.json(t, &sb)
	if r.status != 200 || !strings.Contains(sb.Block, "## Code Map\nconn.go:") || len(sb.CodeMap) == 0 ||
		!strings.Contains(strings.Join(sb.GraphNodeIDs, " "), sb.CodeMap[0].NodeID) {
		t.Fatalf("session block: %d %s", r.status, r.body)
	}
}
