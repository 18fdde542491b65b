package secretfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s")
	if err := os.WriteFile(p, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(p, 100); err != nil || string(b) != "secret\n" {
		t.Fatalf("%q %v", b, err)
	}
	if _, err := Read(p, 3); err == nil || !strings.Contains(err.Error(), "over 3 bytes") {
		t.Fatalf("too long: %v", err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o644} {
		os.Chmod(p, mode)
		if _, err := Read(p, 100); !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("mode %o: %v", mode, err)
		}
	}
	if _, err := Read(dir, 100); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "none"), 100); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}
