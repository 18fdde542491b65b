package layout

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	modzip "golang.org/x/mod/zip"
)

// TestModuleZipValid checks the tree the way `go mod download` and `go
// install` do: a file name the module zip format refuses (a Windows
// reserved name such as aux.go, a case-folding collision, an invalid
// character) makes the whole module impossible to fetch, so no one could
// install the CLI or import api/client. It checks what the module would
// ship: the files git tracks (a module is zipped from a commit), not the
// data directory or the examples a README session leaves beside them;
// outside a git checkout, the whole directory.
func TestModuleZipValid(t *testing.T) {
	root := repoRoot(t)
	var cf modzip.CheckedFiles
	var err error
	if files, ok := trackedFiles(t, root); ok {
		cf, err = modzip.CheckFiles(files)
	} else {
		cf, err = modzip.CheckDir(root)
	}
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

// trackedFiles lists the files git tracks under root (false when root is
// not a git checkout or git is missing).
func trackedFiles(t *testing.T, root string) ([]modzip.File, bool) {
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Logf("not a git checkout (%v): checking the whole directory", err)
		return nil, false
	}
	var files []modzip.File
	for _, p := range bytes.Split(bytes.TrimRight(out, "\x00"), []byte{0}) {
		if len(p) == 0 {
			continue
		}
		rel := string(p)
		if _, err := os.Lstat(filepath.Join(root, rel)); os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		files = append(files, diskFile{root: root, rel: rel})
	}
	return files, true
}

// diskFile is a tracked file as modzip reads it.
type diskFile struct{ root, rel string }

func (f diskFile) Path() string                 { return strings.ReplaceAll(f.rel, string(filepath.Separator), "/") }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(filepath.Join(f.root, f.rel)) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(filepath.Join(f.root, f.rel)) }

// TestModuleZipIgnoresUntracked: a big untracked file (a data directory's
// sparse files) does not count.
func TestModuleZipIgnoresUntracked(t *testing.T) {
	root := repoRoot(t)
	if _, ok := trackedFiles(t, root); !ok {
		t.Skip("not a git checkout")
	}
	dir, err := os.MkdirTemp(root, "kgctx-data-test-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	big, err := os.Create(filepath.Join(dir, "000001.vlog"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(600 << 20); err != nil { // over the 500 MB module limit, sparse
		t.Fatal(err)
	}
	big.Close()
	files, _ := trackedFiles(t, root)
	cf, err := modzip.CheckFiles(files)
	if err != nil || cf.SizeError != nil {
		t.Fatalf("an untracked file counted: %v %v", err, cf.SizeError)
	}
}
