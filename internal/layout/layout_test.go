package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/kgctx/kgctx"

// rank orders the top-level folders: a package may import packages of its
// own folder or of a folder with a lower rank, never upwards or sideways
// (cmd -> api -> compose -> {traverse, policy, index} -> engine; bench
// drives api and everything below it; internal holds shared helpers of
// the lowest rank).
var rank = map[string]int{
	"internal": 0,
	"engine":   1,
	"index":    2, "traverse": 2, "policy": 2,
	"compose": 3,
	"api":     4,
	"bench":   5,
	"cmd":     6,
}

func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

func top(rel string) string {
	return strings.SplitN(filepath.ToSlash(rel), "/", 2)[0]
}

func TestDependencyOrder(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		from := top(rel)
		if _, ok := rank[from]; !ok {
			t.Errorf("%s: Go file outside the folders of DESIGN.md", rel)
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/labstack/echo") && from != "api" {
				t.Errorf("%s imports %s: only api may import Echo", rel, p)
			}
			if !strings.HasPrefix(p, module+"/") {
				continue
			}
			to := top(strings.TrimPrefix(p, module+"/"))
			if to == from {
				continue
			}
			if rank[to] >= rank[from] {
				t.Errorf("%s imports %s: %s may not depend on %s (order: cmd -> bench -> api -> compose -> {traverse, policy, index} -> engine)", rel, p, from, to)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("only %d Go files seen: the walk is not looking at the repository", files)
	}
}

// TestRuleCatchesViolations makes sure the check above can fail.
func TestRuleCatchesViolations(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"compose", "index", true}, {"engine", "index", false}, {"index", "traverse", false},
		{"policy", "compose", false}, {"cmd", "api", true}, {"api", "cmd", false}, {"engine", "engine", true},
	} {
		allowed := c.from == c.to || rank[c.to] < rank[c.from]
		if allowed != c.ok {
			t.Errorf("%s -> %s: allowed=%v, want %v", c.from, c.to, allowed, c.ok)
		}
	}
}
