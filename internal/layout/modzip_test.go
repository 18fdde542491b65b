package layout

import (
	"testing"

	modzip "golang.org/x/mod/zip"
)

// TestModuleZipValid checks the tree the way `go mod download` and `go
// install` do: a file name the module zip format refuses (a Windows
// reserved name such as aux.go, a case-folding collision, an invalid
// character) makes the whole module impossible to fetch, so no one could
// install the CLI or import api/client.
func TestModuleZipValid(t *testing.T) {
	cf, err := modzip.CheckDir(repoRoot(t))
	for _, f := range cf.Invalid {
		t.Errorf("%s: %v", f.Path, f.Err)
	}
	if cf.SizeError != nil {
		t.Errorf("module size: %v", cf.SizeError)
	}
	if err != nil && len(cf.Invalid) == 0 && cf.SizeError == nil {
		t.Fatal(err)
	}
}
