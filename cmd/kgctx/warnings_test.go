package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// The CLI prints a block's warnings, and warns of a --project without
// data (an empty answer otherwise looks like a real one).
func TestCLIWarnings(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	in := strings.NewReader("AuthService\tdepends_on\tPostgresDB\n")
	if _, errOut, err := kgctx(t, in, "import", "-", "--format", "tsv", "--data", data, "--org", "o", "--project", "api"); err != nil {
		t.Fatalf("import: %v %s", err, errOut)
	}
	_, errOut, err := kgctx(t, nil, "context", "--data", data, "--org", "o", "--project", "apj", "--query", "auth")
	if err != nil || !strings.Contains(errOut, "warning: project apj holds no nodes; did you mean api?") {
		t.Fatalf("context: %v %q", err, errOut)
	}
	_, errOut, err = kgctx(t, nil, "graph", "stats", "--data", data, "--org", "o", "--project", "apj")
	if err != nil || !strings.Contains(errOut, "warning: project apj holds no nodes or observations") {
		t.Fatalf("stats: %v %q", err, errOut)
	}
	if _, errOut, err := kgctx(t, nil, "graph", "stats", "--data", data, "--org", "o", "--project", "api"); err != nil || strings.Contains(errOut, "warning") {
		t.Fatalf("stats of a project with data: %v %q", err, errOut)
	}
}
