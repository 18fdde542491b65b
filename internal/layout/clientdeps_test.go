package layout

import (
	"errors"
	"go/build"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// storageModules are the modules of the store: a client links none of
// them (STYLE 13: a client package links no storage).
var storageModules = []string{"github.com/dgraph-io/badger", "github.com/RoaringBitmap/roaring"}

// clientPackages link no storage.
var clientPackages = []string{"api/client"}

func isStorage(path string) bool {
	return slices.ContainsFunc(storageModules, func(m string) bool { return strings.HasPrefix(path, m) })
}

// TestClientLinksNoStorage follows the imports of the client's non-test
// files, through every package of this module they reach, with go/build
// (build constraints as for this platform; no go command needed), and
// fails on an import of a storage module, naming the chain that leads to
// it. It also lists the third-party packages the closure reaches, which
// the walk does not enter; TestClientLinksNoStorageGoList checks those
// when the go command is at hand.
func TestClientLinksNoStorage(t *testing.T) {
	root := repoRoot(t)
	for _, pkg := range clientPackages {
		via := map[string]string{module + "/" + pkg: ""} // package -> the package that imports it
		queue := []string{module + "/" + pkg}
		var external []string
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			bp, err := build.Default.ImportDir(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(p, module+"/"))), 0)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			for _, imp := range bp.Imports {
				if _, seen := via[imp]; seen {
					continue
				}
				via[imp] = p
				switch {
				case isStorage(imp):
					chain := []string{imp}
					for q := p; q != ""; q = via[q] {
						chain = append(chain, q)
					}
					slices.Reverse(chain)
					t.Errorf("%s links storage: %s", pkg, strings.Join(chain, " -> "))
				case strings.HasPrefix(imp, module+"/"):
					queue = append(queue, imp)
				case strings.Contains(strings.SplitN(imp, "/", 2)[0], "."):
					external = append(external, imp)
				}
			}
		}
		if len(via) < 3 {
			t.Fatalf("%s: only %d imports seen: the walk is not looking at the package", pkg, len(via))
		}
		if len(external) > 0 {
			slices.Sort(external)
			t.Logf("%s reaches third-party packages (checked by the go list test): %v", pkg, external)
		}
	}
}

// TestClientLinksNoStorageGoList asks the go command for the client's
// whole dependency closure, third-party modules included, as `go list
// -deps ./api/client` shows it. It is skipped where go is not on PATH.
func TestClientLinksNoStorageGoList(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	root := repoRoot(t)
	for _, pkg := range clientPackages {
		cmd := exec.Command(gobin, "list", "-deps", "./"+pkg)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
				t.Fatalf("go list -deps ./%s: %v\n%s", pkg, err, ee.Stderr)
			}
			t.Fatalf("go list -deps ./%s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, module+"/"+pkg) {
			t.Fatalf("go list -deps ./%s does not list the package itself:\n%s", pkg, out)
		}
		for _, d := range deps {
			if isStorage(d) {
				t.Errorf("%s links storage: %s (go list -deps ./%s)", pkg, d, pkg)
			}
		}
	}
}
