package workload

import (
	"errors"
	"github.com/kgctx/kgctx/engine"
	"os"
	"path/filepath"
	"testing"
)

func TestFindDatasetsWalksUp(t *testing.T) {
	t.Setenv(EnvDatasets, "")
	root := t.TempDir()
	want := filepath.Join(root, "shared", "datasets")
	deep := filepath.Join(root, "main", "bench", "workload")
	for _, d := range []string{want, deep} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, start := range []string{deep, filepath.Join(root, "main"), root} {
		got, err := FindDatasets(start)
		if err != nil || got != want {
			t.Errorf("FindDatasets(%s) = %q, %v; want %q", start, got, err, want)
		}
	}
}

func TestFindDatasetsEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvDatasets, dir)
	got, err := FindDatasets(t.TempDir())
	if err != nil || got != dir {
		t.Errorf("with %s=%s: got %q, %v", EnvDatasets, dir, got, err)
	}
	t.Setenv(EnvDatasets, filepath.Join(dir, "missing"))
	if _, err := FindDatasets(""); !errors.Is(err, ErrDatasetsNotFound) {
		t.Errorf("missing env dir: err = %v, want ErrDatasetsNotFound", err)
	}
}

func TestFindDatasetsNotFound(t *testing.T) {
	t.Setenv(EnvDatasets, "")
	// A temp dir normally has no shared/datasets above it; skip if the
	// machine happens to have one at /shared/datasets or similar.
	start := t.TempDir()
	got, err := FindDatasets(start)
	if err == nil {
		t.Skipf("found %s above %s; cannot test the negative case here", got, start)
	}
	if !errors.Is(err, ErrDatasetsNotFound) {
		t.Errorf("err = %v, want ErrDatasetsNotFound", err)
	}
}

// TestIdentityAssumption pins the kgctx identity rule the loaders and
// generators rely on: case and separators fold ("Washington County" and
// "washington_county" are one node), but a separator is not deleted ("a b"
// and "ab" stay two), and '/' and '.' are kept.
func TestIdentityAssumption(t *testing.T) {
	if engine.NormalizeName("Washington County") != engine.NormalizeName("washington_county") {
		t.Error("engine.NormalizeName no longer folds case and separators; revisit the disambiguation docs")
	}
	if engine.NormalizeName("a b") == engine.NormalizeName("ab") {
		t.Error("engine.NormalizeName drops separators again; revisit the disambiguation counts in fb15k.go")
	}
	if engine.NormalizeName("pkg/auth") == engine.NormalizeName("pkg.auth") {
		t.Error("engine.NormalizeName merges '/' and '.'")
	}
}
