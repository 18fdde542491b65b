package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGraphExportImportRoundTrip: graph export writes NDJSON that graph
// import turns back into the same graph (same stats, triplets, weights).
func TestGraphExportImportRoundTrip(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	dir := t.TempDir()
	src := filepath.Join(dir, "g.jsonl")
	os.WriteFile(src, []byte(`{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB", "sourceType": "service", "targetType": "database", "sourceDescription": "Issues tokens.", "weight": 0.7, "provenance": {"observationId": "obs_1", "sessionId": "ses_1", "timestamp": "2026-11-20T10:00:00Z"}}
{"source": "auth_service", "relationship": "implements", "target": "IAuthProvider"}
{"source": "UserController", "relationship": "calls", "target": "AuthService", "weight": 0.25}
{"source": "AuthService", "relationship": "calls", "target": "BillingAPI", "targetProjectId": "billing"}
`), 0o644)
	nt := filepath.Join(dir, "g.nt")
	os.WriteFile(nt, []byte("<http://ex.org/svc#Gateway> <http://ex.org/rel/calls> <http://ex.org/svc#AuthService> .\n"), 0o644)
	args := func(data string, more ...string) []string {
		return append(more, "--data", data, "--org", "o", "--project", "p", "--json")
	}
	if _, errOut, err := kgctx(t, nil, append([]string{"graph", "import", src, nt}, args(a)...)...); err != nil {
		t.Fatalf("import: %v %s", err, errOut)
	}
	if out, errOut, err := kgctx(t, nil, append([]string{"graph", "add", "--subject", "Gateway", "--predicate", "calls", "--object", "AuthService", "--weight", "0.9"}, args(a)...)...); err != nil || !strings.Contains(out, `"edgesMerged": 1`) {
		t.Fatalf("add: %v %s %s", err, out, errOut)
	}
	exp := filepath.Join(dir, "export.jsonl")
	if out, errOut, err := kgctx(t, nil, append([]string{"graph", "export", exp}, args(a)...)...); err != nil || !strings.Contains(out, `"exported": 5`) {
		t.Fatalf("export: %v %s %s", err, out, errOut)
	}
	if _, errOut, err := kgctx(t, nil, append([]string{"graph", "import", exp}, args(b)...)...); err != nil {
		t.Fatalf("re-import: %v %s", err, errOut)
	}
	snapshot := func(data string) (string, []string) {
		stats, _, err := kgctx(t, nil, append([]string{"graph", "stats"}, args(data)...)...)
		if err != nil {
			t.Fatal(err)
		}
		out, _, err := kgctx(t, nil, append([]string{"graph", "query", "--limit", "100"}, args(data)...)...)
		if err != nil {
			t.Fatal(err)
		}
		var q struct {
			Triplets []struct {
				Source, Relationship, Target string
				Weight                       float64
			}
		}
		json.Unmarshal([]byte(out), &q)
		var lines []string
		for _, x := range q.Triplets {
			b, _ := json.Marshal(x)
			lines = append(lines, string(b))
		}
		slices.Sort(lines)
		return stats, lines
	}
	sa, ta := snapshot(a)
	sb, tb := snapshot(b)
	if sa != sb || !slices.Equal(ta, tb) || len(ta) != 5 {
		t.Fatalf("round trip differs:\n%s\n%v\nvs\n%s\n%v", sa, ta, sb, tb)
	}
	// The export of the copy is the export of the original, line for line.
	exp2 := filepath.Join(dir, "export2.jsonl")
	kgctx(t, nil, append([]string{"graph", "export", exp2}, args(b)...)...)
	e1, _ := os.ReadFile(exp)
	e2, _ := os.ReadFile(exp2)
	l1, l2 := strings.Split(string(e1), "\n"), strings.Split(string(e2), "\n")
	slices.Sort(l1)
	slices.Sort(l2)
	if !slices.Equal(l1, l2) {
		t.Fatalf("exports differ:\n%s\n---\n%s", e1, e2)
	}
	if !strings.Contains(string(e1), `"sourceAliases":["http://ex.org/svc#Gateway"]`) || !strings.Contains(string(e1), `"targetProjectId":"billing"`) {
		t.Fatalf("export lacks aliases or the cross-project target:\n%s", e1)
	}
}
