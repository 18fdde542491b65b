package api

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/api.md from the route table")

// TestAPIReference keeps docs/api.md, the reference users read in the
// repository, equal to what the route table generates.
func TestAPIReference(t *testing.T) {
	s := startServer(t)
	got := s.srv.Reference()
	file := filepath.Join("..", "docs", "api.md")
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (write it with go test ./api -run TestAPIReference -update)", err)
	}
	if string(want) != got {
		t.Fatal("docs/api.md is stale: go test ./api -run TestAPIReference -update")
	}
}
