package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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

// engineDeps lists, for a package of the engine folder other than engine
// itself, the other packages of the folder its non-test files may import
// besides engine and the leaf. The rule (engineImportAllowed): the core,
// engine, imports none of its sub-packages but the leaf (only its external
// tests, package engine_test, may, being clients); a sub-package imports
// engine, the leaf and only the sub-packages listed here; the leaf imports
// no other package of the folder; the test kit engine/enginetest is
// imported by test files only, anywhere in the repository.
var engineDeps = map[string][]string{
	// Loading files into a store joins the codecs to the store.
	"engine/tripletload": {"engine/tripletio"},
}

const testKit = "engine/enginetest"

// leaf is the engine folder's one leaf package: the value types the store
// takes and gives (TripletInput, Tenant, Limits, ValidateTriplet, ...),
// with no storage, so that api/client links no Badger. The core aliases
// its types, so it is the one sub-package the core imports; every other
// may import it; it imports nothing of the folder.
const leaf = "engine/model"

// engineImportAllowed reports whether a file of the package in folder from
// may import the package in folder to (both relative to the root). test is
// true for a _test.go file, external for a file of an external test
// package (package x_test).
func engineImportAllowed(from, to string, test, external bool) bool {
	if to == testKit {
		return test || from == testKit
	}
	if top(from) != "engine" || top(to) != "engine" || from == to || to == leaf {
		return true
	}
	if from == leaf {
		return external
	}
	if to == "engine" {
		return true
	}
	if from == "engine" {
		return external
	}
	return slices.Contains(engineDeps[from], to)
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
		dir := filepath.ToSlash(filepath.Dir(rel))
		test := strings.HasSuffix(path, "_test.go")
		external := strings.HasSuffix(f.Name.Name, "_test")
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/labstack/echo") && from != "api" {
				t.Errorf("%s imports %s: only api may import Echo", rel, p)
			}
			if !strings.HasPrefix(p, module+"/") {
				continue
			}
			if to := strings.TrimPrefix(p, module+"/"); !engineImportAllowed(dir, to, test, external) {
				t.Errorf("%s imports %s: engine imports none of its sub-packages but engine/model, a sub-package imports engine, engine/model and no other sub-package (unless listed in engineDeps), engine/model imports nothing of engine, and only tests import %s", rel, p, testKit)
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
	// Within engine: the core never imports its sub-packages, they do not
	// import each other, and only tests import the test kit.
	for _, c := range []struct {
		from, to       string
		test, external bool
		ok             bool
	}{
		{"engine/delivery", "engine", false, false, true},
		{"engine", "engine/delivery", false, false, false},
		{"engine", "engine/auth", true, false, false},
		{"engine", "engine/sessionlog", true, true, true},
		{"engine/delivery", "engine/sessionlog", false, false, false},
		{"engine/sessionlog", "engine/enginetest", true, false, true},
		{"engine/auth", "engine/enginetest", false, false, false},
		{"compose", "engine/enginetest", false, false, false},
		{"compose", "engine/delivery", false, false, true},
		{"engine/tripletio", "engine", false, false, true},
		{"engine", "engine/model", false, false, true},
		{"engine/tripletio", "engine/model", false, false, true},
		{"engine/model", "engine", false, false, false},
		{"engine/model", "engine/tripletio", false, false, false},
		{"engine/tripletload", "engine/tripletio", false, false, true},
		{"engine/tripletio", "engine/tripletload", false, false, false},
	} {
		if got := engineImportAllowed(c.from, c.to, c.test, c.external); got != c.ok {
			t.Errorf("%s -> %s (test %v, external %v): allowed=%v, want %v", c.from, c.to, c.test, c.external, got, c.ok)
		}
	}
}
