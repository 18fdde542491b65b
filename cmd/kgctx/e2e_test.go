package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"github.com/kgctx/kgctx/api/apitest"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The end-to-end tests run the real binary: built once, started as a
// server on a loopback port over a temporary data directory.

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kgctx-e2e-*")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "kgctx")
	out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build kgctx: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type server struct {
	t     *testing.T
	cmd   *exec.Cmd
	url   string
	admin string
	out   *bytes.Buffer
	mu    *sync.Mutex
	lines []string // stdout after the listening line
	http  *http.Client
	data  string
	extra []string
	early chan string // stdout lines until the listening line
}

// stdout is what the server printed after its listening line.
func (s *server) stdout() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

var listenRE = regexp.MustCompile(`listening on (http://\S+)`)

// startServe runs `kgctx serve` on a free port and waits until it listens.
func startServe(t *testing.T, data string, extra ...string) *server {
	t.Helper()
	s := launchServe(t, data, extra...)
	if err := s.waitListening(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	return s
}

// launchServe starts `kgctx serve` without waiting for it (the nodes of a
// cluster start together); waitListening then waits.
func launchServe(t *testing.T, data string, extra ...string) *server {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"}, extra...)...)
	cmd.Env = append(os.Environ(), "KGCTX_ADMIN_TOKEN=")
	stdout, _ := cmd.StdoutPipe()
	var errBuf bytes.Buffer
	mu := &sync.Mutex{}
	cmd.Stderr = &lockedWriter{mu: mu, w: &errBuf}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, out: &errBuf, mu: mu, data: data, extra: extra, early: make(chan string, 16)}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.early <- sc.Text()
		}
		close(s.early)
	}()
	return s
}

// waitListening waits until the server prints its listening line, then
// sets up its client.
func (s *server) waitListening(timeout time.Duration) error {
	deadline := time.After(timeout)
	for s.url == "" {
		select {
		case l, ok := <-s.early:
			if !ok {
				return fmt.Errorf("server exited before listening: %s", s.stderr())
			}
			if m := listenRE.FindStringSubmatch(l); m != nil {
				s.url = m[1]
			}
		case <-deadline:
			return fmt.Errorf("server did not start within %s: %s", timeout, s.stderr())
		}
	}
	go func() {
		for l := range s.early {
			s.mu.Lock()
			s.lines = append(s.lines, l)
			s.mu.Unlock()
		}
	}()
	if b, err := os.ReadFile(filepath.Join(s.data, "admin.token")); err == nil {
		s.admin = strings.TrimSpace(string(b))
	}
	for i, a := range s.extra {
		if a == "--admin-token" && i+1 < len(s.extra) {
			s.admin = s.extra[i+1]
		}
		if a == "--admin-token-file" && i+1 < len(s.extra) {
			if b, err := os.ReadFile(s.extra[i+1]); err == nil {
				s.admin = strings.TrimSpace(string(b))
			}
		}
	}
	s.http = http.DefaultClient
	if s.admin != "" {
		s.http = apitest.CheckedClient(s.t, s.url, s.admin) // every answer checked against the served OpenAPI document
	}
	return nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (s *server) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

func (s *server) do(method, path, tok, ctype string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func (s *server) token(org, role string) string {
	s.t.Helper()
	b, _ := json.Marshal(map[string]any{"orgId": org, "agentId": "a_" + role, "role": role})
	code, body, err := s.do("POST", "/v1/admin/tokens", s.admin, "application/json", b)
	if err != nil || code != 201 {
		s.t.Fatalf("token: %d %s %v", code, body, err)
	}
	var out struct{ Token string }
	json.Unmarshal(body, &out)
	return out.Token
}

func kgctx(t *testing.T, stdin io.Reader, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func TestServeBootstrapAndGracefulShutdown(t *testing.T) {
	data := t.TempDir()
	s := startServe(t, data)
	if s.admin == "" {
		t.Fatal("no admin.token written")
	}
	if st, err := os.Stat(filepath.Join(data, "admin.token")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("admin.token mode: %v %v", st.Mode(), err)
	}
	imp := s.token("org_1", "importer")
	code, body, _ := s.do("POST", "/v1/orgs/org_1/projects/p/triplets", imp, "application/json",
		[]byte(`[{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB"}]`))
	if code != 200 {
		t.Fatalf("import: %d %s", code, body)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("server did not exit cleanly on SIGTERM: %v\n%s", err, s.stderr())
	}
	out, errOut, err := kgctx(t, nil, "graph", "status", "--data", data, "--check", "--json")
	if err != nil {
		t.Fatalf("status after shutdown: %v %s", err, errOut)
	}
	var st struct {
		Nodes, Triplets int
		Check           string
	}
	json.Unmarshal([]byte(out), &st)
	if st.Nodes != 2 || st.Triplets != 1 || st.Check != "ok" {
		t.Fatalf("status: %s", out)
	}
	// A second start keeps the tokens and does not write a new admin token.
	s2 := startServe(t, data)
	if s2.admin != s.admin {
		t.Fatal("admin token changed on restart")
	}
	code, body, _ = s2.do("GET", "/v1/orgs/org_1/projects/p/graph/stats", imp, "", nil)
	if code != 200 || !strings.Contains(string(body), `"triplets":1`) {
		t.Fatalf("after restart: %d %s", code, body)
	}
}

// TestDurabilityUnderSIGKILL streams import requests at a server, kills it
// with SIGKILL in the middle, restarts it and finds every triplet whose
// request was answered 200, in a store that passes Check.
func TestDurabilityUnderSIGKILL(t *testing.T) {
	data := t.TempDir()
	s := startServe(t, data)
	imp := s.token("org_k", "importer")
	var (
		mu       sync.Mutex
		acked    []string // source names of acknowledged triplets
		requests atomic.Int64
	)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var lines []string
				var names []string
				for j := range 50 {
					name := fmt.Sprintf("w%d_r%d_n%d", w, i, j)
					names = append(names, name)
					lines = append(lines, fmt.Sprintf(`{"source": %q, "relationship": "calls", "target": "Hub%d", "sourceDescription": "node %d of batch %d"}`, name, j%7, j, i))
				}
				code, _, err := s.do("POST", "/v1/orgs/org_k/projects/p/triplets", imp, "application/x-ndjson", []byte(strings.Join(lines, "\n")))
				if err != nil {
					return // the server died mid-request: not acknowledged
				}
				requests.Add(1)
				if code == 200 {
					mu.Lock()
					acked = append(acked, names...)
					mu.Unlock()
				}
			}
		}()
	}
	for requests.Load() < 40 {
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.cmd.Wait()
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d requests sent, %d triplets acknowledged before SIGKILL", requests.Load(), len(acked))
	// Offline: the store opens, passes Check and holds every acked triplet.
	out, errOut, err := kgctx(t, nil, "graph", "status", "--data", data, "--check", "--json")
	if err != nil {
		t.Fatalf("status after SIGKILL: %v %s %s", err, out, errOut)
	}
	s2 := startServe(t, data)
	ag := s2.token("org_k", "agent")
	for _, name := range acked {
		code, body, err := s2.do("GET", "/v1/orgs/org_k/projects/p/graph/triplets?subject="+name, ag, "", nil)
		if err != nil || code != 200 || !strings.Contains(string(body), `"source":"`+name+`"`) {
			t.Fatalf("acknowledged triplet %s lost after SIGKILL: %d %s %v", name, code, body, err)
		}
	}
	// The indexes caught up too: a search finds an acknowledged node.
	last := acked[len(acked)-1]
	b, _ := json.Marshal(map[string]any{"scope": map[string]string{"orgId": "org_k", "projectId": "p"}, "queryText": last, "topK": 3, "neighborhoodDepth": 1})
	code, body, _ := s2.do("POST", "/v1/context/graph", ag, "application/json", b)
	if code != 200 || !strings.Contains(string(body), last) {
		t.Fatalf("search after restart does not find %s: %d %s", last, code, body)
	}
}

func TestCLIImportAndGraph(t *testing.T) {
	data := t.TempDir()
	dir := t.TempDir()
	tsv := filepath.Join(dir, "g.tsv")
	os.WriteFile(tsv, []byte("source\trelationship\ttarget\nAuthService\tdepends_on\tPostgresDB\t0.9\nUserController\tcalls\tAuthService\n"), 0o644)
	gz := filepath.Join(dir, "g.csv.gz")
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte("AuthService,implements,IAuthProvider\n\"Billing, Inc\",calls,AuthService\n"))
	zw.Close()
	os.WriteFile(gz, zb.Bytes(), 0o644)
	out, errOut, err := kgctx(t, nil, "import", tsv, gz, "--org", "o", "--project", "p", "--data", data)
	if err != nil || !strings.Contains(out, "imported 4 triplets") {
		t.Fatalf("import: %v\n%s\n%s", err, out, errOut)
	}
	nd := `{"source": "PostgresDB", "relationship": "contains", "target": "users"}` + "\n"
	if out, errOut, err := kgctx(t, strings.NewReader(nd), "import", "-", "--org", "o", "--project", "p", "--data", data); err != nil || !strings.Contains(out, "imported 1 triplets") {
		t.Fatalf("stdin import: %v %s %s", err, out, errOut)
	}
	// A bad line names itself and nothing is written.
	var lines []string
	for i := 1; i <= 100; i++ {
		lines = append(lines, fmt.Sprintf(`{"source": "S%d", "relationship": "calls", "target": "T%d"}`, i, i))
	}
	lines[56] = `{"source": "S57", "relationship": "calls"}`
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o644)
	_, errOut, err = kgctx(t, nil, "import", bad, "--org", "o", "--project", "p", "--data", data)
	if err == nil || !strings.Contains(errOut, "line 57") {
		t.Fatalf("bad import: %v %s", err, errOut)
	}
	out, _, err = kgctx(t, nil, "graph", "stats", "--data", data, "--org", "o", "--project", "p", "--json")
	var st struct {
		Nodes, Triplets int
		Predicates      map[string]int
	}
	json.Unmarshal([]byte(out), &st)
	if err != nil || st.Triplets != 5 || st.Nodes != 6 || st.Predicates["calls"] != 2 {
		t.Fatalf("stats: %v %s", err, out)
	}
	out, _, _ = kgctx(t, nil, "graph", "stats", "--data", data, "--org", "o", "--project", "p")
	if !strings.Contains(out, "Total Triples: 5") || !strings.Contains(out, "PREDICATE") {
		t.Fatalf("stats text: %s", out)
	}
	out, _, err = kgctx(t, nil, "graph", "query", "--data", data, "--org", "o", "--project", "p", "--subject", "auth_service", "--json")
	if err != nil || strings.Count(out, `"relationship"`) != 2 {
		t.Fatalf("query: %v %s", err, out)
	}
	out, _, err = kgctx(t, nil, "context", "--data", data, "--org", "o", "--project", "p", "--query", "auth service")
	if err != nil || !strings.HasPrefix(out, "## Knowledge Graph Triplets\n- ") {
		t.Fatalf("context: %v %q", err, out)
	}
	tok, _, err := kgctx(t, nil, "token", "create", "--data", data, "--org", "o", "--agent", "dev", "--role", "agent")
	if err != nil || !strings.HasPrefix(tok, "kgx_") {
		t.Fatalf("token: %v %s", err, tok)
	}
	if _, errOut, err := kgctx(t, nil, "graph", "clear", "--data", data, "--org", "o", "--project", "p"); err == nil || !strings.Contains(errOut, "--force") {
		t.Fatalf("clear without --force: %v %s", err, errOut)
	}
	if out, _, err := kgctx(t, nil, "graph", "clear", "--force", "--data", data, "--org", "o", "--project", "p"); err != nil || !strings.Contains(out, "5 triples deleted") {
		t.Fatalf("clear: %v %s", err, out)
	}
	// Through a running server: the same file, the same result.
	s := startServe(t, data, "--admin-token", "kgx_e2e_admin_token_0123456789abcd")
	imp := s.token("o", "importer")
	out, errOut, err = kgctx(t, nil, "import", tsv, "--org", "o", "--project", "p", "--server", s.url, "--token", imp)
	if err != nil || !strings.Contains(out, "imported 2 triplets") {
		t.Fatalf("remote import: %v %s %s", err, out, errOut)
	}
	// While the server holds the directory, offline commands say so.
	if _, errOut, err := kgctx(t, nil, "graph", "status", "--data", data); err == nil || !strings.Contains(errOut, "in use by another kgctx process") {
		t.Fatalf("offline open while serving: %v %s", err, errOut)
	}
}

// An embedding server that cannot be reached is reported at start-up (the
// server still starts), and an import is answered 503 with Retry-After,
// naming the embedder, with nothing written.
func TestServeEmbedderDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	data := filepath.Join(t.TempDir(), "data")
	s := startServe(t, data, "--embed-url", "http://"+dead, "--embed-model", "m", "--embed-dim", "8")
	// The warning goes to stderr before the listening line goes to
	// stdout, but the two pipes are read apart: give stderr a moment.
	for give := time.Now().Add(10 * time.Second); !strings.Contains(s.stderr(), "warning: the embedding server"); {
		if time.Now().After(give) {
			t.Fatalf("no start-up warning: %s", s.stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(s.stderr(), dead) {
		t.Fatalf("the warning does not name the embedder: %s", s.stderr())
	}
	imp := s.token("org_a", "importer")
	req, _ := http.NewRequest("POST", s.url+"/v1/orgs/org_a/projects/p/triplets", strings.NewReader(`[{"source": "A", "relationship": "calls", "target": "B"}]`))
	req.Header.Set("Authorization", "Bearer "+imp)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" || !strings.Contains(string(body), dead) {
		t.Fatalf("import: %d %v %s", res.StatusCode, res.Header, body)
	}
}
