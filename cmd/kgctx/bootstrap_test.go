package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/compose/service"
)

// The generated operator token goes into a new private file: a stale
// DIR/admin.token left readable by others (a store removed by hand, a
// copy) is not reused with its mode, and a symbolic link there is not
// followed (the secret would land wherever it points).
func TestBootstrapWritesAPrivateFile(t *testing.T) {
	for _, c := range []struct {
		name  string
		plant func(t *testing.T, path string) (outside string)
	}{
		{"stale readable file", func(t *testing.T, path string) string {
			if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
			return ""
		}},
		{"symbolic link", func(t *testing.T, path string) string {
			outside := filepath.Join(t.TempDir(), "catch")
			if err := os.WriteFile(outside, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, path); err != nil {
				t.Fatal(err)
			}
			return outside
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			app, err := service.Open(context.Background(), service.Config{DataDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			defer app.Close()
			path := filepath.Join(dir, "admin.token")
			outside := c.plant(t, path)
			if err := bootstrap(app, dir, "", &bytes.Buffer{}); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Errorf("admin.token: mode %v, want a regular file of mode 0600", fi.Mode())
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			secret := strings.TrimSpace(string(b))
			if _, err := app.Tokens.LookupToken(secret); err != nil {
				t.Errorf("the token in admin.token does not work: %v", err)
			}
			if outside != "" {
				if b, _ := os.ReadFile(outside); strings.Contains(string(b), secret) {
					t.Errorf("the secret was written through the link to %s", outside)
				}
			}
		})
	}
}
