package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/api/apitest"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
)

const shapes = "../../compose/codeindex/testdata/shapes"

// copyShapes copies the code indexer's fixture module.
func copyShapes(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	for _, f := range []string{"go.mod", "shapes.go", "shapes_test.go", "shapes_windows.go", "gen.go", "geom/geom.go"} {
		b, err := os.ReadFile(filepath.Join(shapes, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dst, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestIndexOffline(t *testing.T) {
	data, state := filepath.Join(t.TempDir(), "data"), t.TempDir()
	args := []string{"index", shapes, "--org", "o", "--project", "code", "--data", data, "--state-dir", state}
	out, errOut, code := runCLI(t, args...)
	if code != 0 || !strings.Contains(out, "indexed example.com/shapes (full): 2 of 2 packages read") {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = runCLI(t, args...)
	if code != 0 || !strings.Contains(out, "(incremental): 0 of 2 packages read") || !strings.Contains(out, "0 triplets written") {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	out, errOut, code = runCLI(t, "graph", "query", "--data", data, "--org", "o", "--project", "code", "--subject", "shapes.Total")
	if code != 0 || !strings.Contains(out, "calls_via_interface") || !strings.Contains(out, "shapes.Shape.Area") {
		t.Fatalf("query: exit %d\n%s%s", code, out, errOut)
	}
}

func TestIndexThroughServer(t *testing.T) {
	s := apitest.Start(t, api.Config{})
	tok := s.Token("o", "indexer", auth.RoleImporter, "code")
	dir, state := copyShapes(t), t.TempDir()
	args := []string{"index", dir, "--org", "o", "--project", "code", "--server", s.URL, "--token", tok, "--state-dir", state}
	if out, errOut, code := runCLI(t, args...); code != 0 || !strings.Contains(out, "(full)") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	// geom.go goes: its nodes are deleted through the server.
	if err := os.Remove(filepath.Join(dir, "geom", "geom.go")); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, args...)
	if code != 0 || !strings.Contains(out, "(incremental)") || strings.Contains(out, " 0 nodes deleted") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	st, err := s.App.Store.Stats(engine.Tenant{Org: "o", Project: "code"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Predicates["embeds"] != 0 {
		t.Errorf("geom's embeds edge is still there: %+v", st)
	}
	// An agent token may not write: refused, nothing changed.
	agent := s.Token("o", "reader", auth.RoleAgent, "code")
	_, errOut, code = runCLI(t, "index", dir, "--org", "o", "--project", "code", "--server", s.URL, "--token", agent, "--state-dir", t.TempDir())
	if code == 0 || !strings.Contains(errOut, "403") {
		t.Errorf("an agent token indexed: exit %d %s", code, errOut)
	}
}

func TestIndexBadInput(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	for name, tc := range map[string]struct {
		args []string
		want string
		code int
	}{
		"no dir":       {[]string{"index", "--org", "o", "--project", "p", "--data", data}, "name one module directory", 2},
		"no org":       {[]string{"index", shapes, "--project", "p", "--data", data}, "--org", 2},
		"not a module": {[]string{"index", t.TempDir(), "--org", "o", "--project", "p", "--data", data}, "not a Go module", 1},
		"bad flag":     {[]string{"index", shapes, "--org", "o", "--project", "p", "--sinse", "HEAD", "--data", data}, "--since", 2},
		"bad org":      {[]string{"index", shapes, "--org", "o o", "--project", "p", "--data", data}, "--org", 2},
	} {
		t.Run(name, func(t *testing.T) {
			_, errOut, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, want %d; stderr %q lacks %q", code, tc.code, errOut, tc.want)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("a refused command created the store")
			}
		})
	}
}
