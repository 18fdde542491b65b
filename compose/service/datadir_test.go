package service

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The data directory holds every org's triplets and observations and the
// token hashes: Open makes it (0700) or keeps it private, so that another
// user of the machine reads none of it, whatever the umask.
func TestDataDirIsPrivate(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "a", "data")
	open := func(dir string) {
		t.Helper()
		a, err := Open(context.Background(), Config{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
	mode := func(dir string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	open(fresh)
	if m := mode(fresh); m != 0o700 {
		t.Errorf("a new data directory has mode %04o, want 0700", m)
	}
	// One made open by hand (or an older release) is closed at the next
	// open; its data is kept.
	if err := os.Chmod(fresh, 0o755); err != nil {
		t.Fatal(err)
	}
	open(fresh)
	if m := mode(fresh); m != 0o700 {
		t.Errorf("an open data directory kept mode %04o, want 0700", m)
	}
	// A file where the directory should be is refused.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if a, err := Open(context.Background(), Config{DataDir: file}); err == nil {
		a.Close()
		t.Error("a file as the data directory was accepted")
	}
}
