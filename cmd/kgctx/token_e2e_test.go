package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// stop ends a server with SIGTERM and waits for it.
func (s *server) stop() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		s.t.Fatal(err)
	}
	s.cmd.Wait()
}

// The bootstrap operator token is replaced, not added, when serve is
// given another; tokens are 32+ characters; a token file must be private.
func TestBootstrapTokenReplaced(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	s := startServe(t, data) // generated into admin.token
	gen := s.admin
	if code, _, _ := s.do("GET", "/v1/whoami", gen, "", nil); code != 200 {
		t.Fatalf("generated token: %d", code)
	}
	s.stop()

	dir := t.TempDir()
	file := filepath.Join(dir, "admin.secret")
	first := "kgx_first_operator_token_0123456789abcdef"
	if err := os.WriteFile(file, []byte(first+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A token file others can read is refused, before anything is written.
	if _, errOut, err := kgctx(t, nil, "serve", "--data", data, "--addr", "127.0.0.1:0", "--admin-token-file", file); err == nil || !strings.Contains(errOut, "chmod 600") {
		t.Fatalf("readable token file: %v %s", err, errOut)
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	s = startServe(t, data, "--admin-token-file", file)
	if code, _, _ := s.do("GET", "/v1/whoami", first, "", nil); code != 200 {
		t.Fatalf("token from the file: %d", code)
	}
	if code, _, _ := s.do("GET", "/v1/whoami", gen, "", nil); code != 401 {
		t.Fatalf("the generated token still works after another was given: %d", code)
	}
	if _, err := os.Stat(filepath.Join(data, "admin.token")); !os.IsNotExist(err) {
		t.Fatalf("the revoked admin.token is still there: %v", err)
	}
	s.stop()

	second := "kgx_second_operator_token_0123456789abcdef"
	if err := os.WriteFile(file, []byte(second), 0o600); err != nil {
		t.Fatal(err)
	}
	s = startServe(t, data, "--admin-token-file", file)
	if code, _, _ := s.do("GET", "/v1/whoami", first, "", nil); code != 401 {
		t.Fatalf("the old operator token still works: %d", code)
	}
	if code, _, _ := s.do("GET", "/v1/whoami", second, "", nil); code != 200 {
		t.Fatalf("the new operator token: %d", code)
	}
	s.stop()

	// Too short: refused before the data directory is made.
	fresh := filepath.Join(t.TempDir(), "fresh")
	_, errOut, err := kgctx(t, nil, "serve", "--data", fresh, "--addr", "127.0.0.1:0", "--admin-token", "short-token-16ch")
	if err == nil || !strings.Contains(errOut, "at least 32") {
		t.Fatalf("short token: %v %s", err, errOut)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Fatalf("a refused serve made %s", fresh)
	}
}

// kgctx token list and revoke, through a server and offline.
func TestTokenListRevoke(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	s := startServe(t, data)
	ag := s.token("org_t", "agent")
	oa := s.token("org_t", "org_admin")
	other := s.token("org_u", "agent")
	out, errOut, err := kgctx(t, nil, "token", "list", "--server", s.url, "--token", s.admin, "--json")
	if err != nil {
		t.Fatalf("list: %v %s", err, errOut)
	}
	var list struct {
		Tokens []struct{ ID, OrgID, AgentID, Role string }
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Tokens) != 4 {
		t.Fatalf("list: %v %s", err, out)
	}
	for _, sec := range []string{ag, oa, other, s.admin} {
		if strings.Contains(out, sec) {
			t.Fatal("token list shows a secret")
		}
	}
	// The org admin's list is its org's; it revokes its agent's token.
	out, _, err = kgctx(t, nil, "token", "list", "--server", s.url, "--token", oa)
	if err != nil || strings.Contains(out, "org_u") || strings.Count(out, "org_t") != 2 {
		t.Fatalf("org admin list: %v\n%s", err, out)
	}
	var id string
	for _, tk := range list.Tokens {
		if tk.OrgID == "org_t" && tk.Role == "agent" {
			id = tk.ID
		}
	}
	if out, errOut, err := kgctx(t, nil, "token", "revoke", id, "--server", s.url, "--token", oa); err != nil || !strings.Contains(out, "revoked "+id) {
		t.Fatalf("revoke: %v %s %s", err, out, errOut)
	}
	if code, _, _ := s.do("GET", "/v1/whoami", ag, "", nil); code != 401 {
		t.Fatalf("revoked token: %d", code)
	}
	if _, errOut, err := kgctx(t, nil, "token", "revoke", "tok_nope", "--server", s.url, "--token", oa); err == nil || !strings.Contains(errOut, "not a token id") {
		t.Fatalf("bad id: %v %s", err, errOut)
	}
	s.stop()
	// Offline, the server stopped: the revocation held.
	out, errOut, err = kgctx(t, nil, "token", "list", "--data", data, "--org", "org_t")
	if err != nil || strings.Count(out, "\n") != 2 || !strings.Contains(out, "org_admin") {
		t.Fatalf("offline list: %v %s\n%s", err, errOut, out)
	}
}
