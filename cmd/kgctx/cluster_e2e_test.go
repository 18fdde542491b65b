package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/compose/service/cluster"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/internal/testlock"
	"github.com/kgctx/kgctx/policy"
)

// The cluster end-to-end test runs three `kgctx serve --cluster` processes
// with an embedded three-server NATS cluster on loopback, then a fourth
// node joining through --nats-url. Skipped with -short.

const clusterAdmin = "kgctx-cluster-e2e-operator-token-000000000000"

// clusterKeys are those of the test cluster's secret (clusterSecret).
var clusterKeys *cluster.Keys

// clusterSecret writes a cluster secret file, private, into dir.
func clusterSecret(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "cluster.secret")
	if err := os.WriteFile(p, []byte("kgctx-e2e-cluster-secret-"+strconv.FormatInt(time.Now().UnixNano(), 36)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// positions are the log positions a client has written, sent back as
// X-Kgctx-Sequence for read-your-writes.
type positions = engine.Positions

type answer struct {
	code   int
	body   []byte
	seq    string
	header http.Header
}

// ccall sends a request with the positions written so far; a write's
// position is added to pos. local, when not nil, asks the node to answer
// from its own store: the request carries local as the principal of a
// request another node proxied to it, signed with the cluster secret,
// instead of tok.
func ccall(s *server, pos *positions, local *auth.Token, method, path, tok, ctype string, body []byte) (answer, error) {
	return ccallKeyed(s, pos, local, "", method, path, tok, ctype, body)
}

// ccallKeyed is ccall with an Idempotency-Key ("" for none).
func ccallKeyed(s *server, pos *positions, local *auth.Token, key, method, path, tok, ctype string, body []byte) (answer, error) {
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	if key != "" {
		req.Header.Set(api.IdempotencyKeyHeader, key)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if h := pos.String(); h != "" {
		req.Header.Set(api.SequenceHeader, h)
	}
	if local != nil {
		req.Header.Del("Authorization")
		req.Header.Set(api.PrincipalHeader, api.NewPrincipal(*local, req).Seal(clusterKeys.PrincipalMAC))
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	a := answer{code: resp.StatusCode, body: b, seq: resp.Header.Get(api.SequenceHeader), header: resp.Header}
	if a.seq != "" && resp.StatusCode < 300 {
		if err := pos.Add(a.seq); err != nil {
			return a, err
		}
	}
	return a, err
}

func mustCall(t *testing.T, s *server, pos *positions, want int, method, path, tok, ctype string, body []byte) []byte {
	t.Helper()
	a, err := ccall(s, pos, nil, method, path, tok, ctype, body)
	if err != nil || a.code != want {
		t.Fatalf("%s %s on %s: %d %s %v (want %d)", method, path, s.url, a.code, a.body, err, want)
	}
	return a.body
}

func mustToken(t *testing.T, s *server, pos *positions, org, role string, projects ...string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"orgId": org, "agentId": "a_" + role, "role": role, "projectIds": projects})
	var out struct{ Token string }
	json.Unmarshal(mustCall(t, s, pos, 201, "POST", "/v1/admin/tokens", clusterAdmin, "application/json", b), &out)
	return out.Token
}

func clusterStatus(s *server) (api.ClusterStatus, error) {
	var st api.ClusterStatus
	a, err := ccall(s, &positions{}, nil, "GET", "/v1/admin/cluster", clusterAdmin, "", nil)
	if err != nil {
		return st, err
	}
	if a.code != 200 {
		return st, fmt.Errorf("%d %s", a.code, a.body)
	}
	return st, json.Unmarshal(a.body, &st)
}

// waitFor polls cond every 100 ms for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	end := time.Now().Add(d)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s: not within %s: %s", what, d, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var shards = []string{"s0", "s1", "s2"}

func TestClusterEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of four kgctx processes; skipped with -short")
	}
	testlock.Cluster(t)
	start := time.Now()
	ports := freePorts(t, 6)
	var routes []string
	for i := range 3 {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", ports[3+i]))
	}
	secret := clusterSecret(t, t.TempDir())
	b, err := cluster.ReadSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	if clusterKeys, err = cluster.NewKeys(b, "c1"); err != nil {
		t.Fatal(err)
	}
	flags := func(i int) []string {
		return []string{"--admin-token", clusterAdmin, "--cluster", "c1", "--cluster-secret-file", secret, "--node-id", fmt.Sprintf("n%d", i+1),
			"--nats-embed", "--nats-port", strconv.Itoa(ports[i]), "--nats-cluster-port", strconv.Itoa(ports[3+i]),
			"--nats-routes", strings.Join(routes, ","), "--read-wait", "20s"}
	}
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()}
	nodes := make([]*server, 3)
	for i := range nodes {
		nodes[i] = launchServe(t, dirs[i], flags(i)...)
	}
	for i, n := range nodes {
		if err := n.waitListening(2 * time.Minute); err != nil {
			t.Fatalf("node %d: %v", i+1, err)
		}
	}
	for i, n := range nodes {
		waitFor(t, 30*time.Second, fmt.Sprintf("node %d serves every shard", i+1), func() (bool, string) {
			st, err := clusterStatus(n)
			return err == nil && len(st.Serving) == 4 && len(st.Members) == 3, fmt.Sprintf("%+v %v", st, err)
		})
	}
	pos := &positions{}
	t.Logf("three nodes serve every shard after %s", time.Since(start).Round(time.Millisecond))

	t.Run("trust", func(t *testing.T) { clusterTrust(t, nodes, pos, ports[0], secret) })
	t.Run("isolation", func(t *testing.T) { clusterIsolation(t, nodes, pos) })
	t.Run("delivery", func(t *testing.T) { clusterDelivery(t, nodes, pos) })
	t.Run("in-session", func(t *testing.T) { clusterInSession(t, nodes, pos) })
	t.Run("placement", func(t *testing.T) { clusterPlacement(t, nodes, pos) })
	acked := clusterSIGKILL(t, nodes, dirs, flags, pos)
	t.Logf("killed node caught up after %s", time.Since(start).Round(time.Millisecond))
	n4 := clusterJoin(t, nodes, dirs[3], ports[0], secret, acked, pos)
	t.Logf("fourth node joined after %s", time.Since(start).Round(time.Millisecond))
	imp, unsure := clusterNoQuorum(t, []*server{nodes[0], n4}, nodes[1:], acked, pos)
	clusterQuorumBack(t, nodes, dirs, flags, pos, imp, unsure)
	// The nodes' NATS permissions sufficed for all of it.
	for _, n := range append(nodes, n4) {
		if e := n.stderr(); strings.Contains(strings.ToLower(e), "permissions violation") {
			t.Errorf("a node met a NATS permissions violation:\n%s", e)
		}
	}
}

// clusterTrust checks the cluster's trust boundaries from outside: its
// NATS refuses a client without the secret's credentials; a node given
// another secret refuses to join; a request without a valid token is
// refused at once, whatever log positions it names; a forged or expired
// principal is 401, and X-Kgctx-Proxied alone changes nothing; an import
// over NATS's 1 MiB max payload is applied whole on every node.
func clusterTrust(t *testing.T, nodes []*server, pos *positions, natsPort int, secret string) {
	url := fmt.Sprintf("nats://127.0.0.1:%d", natsPort)
	if nc, err := nats.Connect(url); err == nil {
		nc.Close()
		t.Fatal("a NATS client without credentials connected to node 1's embedded server")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("a NATS client without credentials: %v, want an authorization violation", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	other := filepath.Join(t.TempDir(), "other.secret")
	if err := os.WriteFile(other, []byte("another-secret-of-this-cluster-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, binary, "serve", "--data", filepath.Join(t.TempDir(), "data"), "--addr", "127.0.0.1:0", "--admin-token", clusterAdmin,
		"--cluster", "c1", "--cluster-secret-file", other, "--node-id", "n9", "--nats-url", url)
	cmd.Env = append(os.Environ(), "KGCTX_ADMIN_TOKEN=")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "cluster secret differs") {
		t.Fatalf("a node with another secret: %v %s", err, out)
	}

	raw := func(n *server, h map[string]string) (int, string) {
		req, _ := http.NewRequest("GET", n.url+"/v1/orgs/org_t/projects/p/graph/stats", nil)
		for k, v := range h {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	ag := mustToken(t, nodes[0], pos, "org_t", "agent")
	req := httptest.NewRequest("GET", "/v1/orgs/org_t/projects/p/graph/stats", nil)
	expired := api.NewPrincipal(auth.Token{OrgID: "org_t", AgentID: "x", Role: auth.RoleOperator}, req)
	expired.Expires = time.Now().Add(-time.Second).UnixMilli()
	for i, n := range nodes {
		// Positions far ahead: a request without a valid token is 401 at
		// once (it used to wait --read-wait for them, then answer 503).
		for _, h := range []map[string]string{
			{api.SequenceHeader: "s0:999999,s1:999999,s2:999999"},
			{api.SequenceHeader: "s0:999999", "Authorization": "Bearer kgx_not-a-token-of-this-cluster-0000000000"},
			{api.PrincipalHeader: "forged.principal"},
			{api.PrincipalHeader: expired.Seal(clusterKeys.PrincipalMAC)},
			{api.ProxiedHeader: "1"},
		} {
			if code, body := raw(n, h); code != 401 {
				t.Errorf("node %d, %v: %d %s, want 401", i+1, h, code, body)
			}
		}
		if code, body := raw(n, map[string]string{"Authorization": "Bearer " + ag, api.ProxiedHeader: "1", api.SequenceHeader: pos.String()}); code != 200 {
			t.Errorf("node %d: X-Kgctx-Proxied from a client: %d %s", i+1, code, body)
		}
	}

	// An import of about 1.6 MiB (5,000 triplets among 100 nodes): split
	// into parts over NATS, applied whole.
	imp := mustToken(t, nodes[1], pos, "org_t", "importer")
	var lines []string
	for i := range 5000 {
		lines = append(lines, fmt.Sprintf(`{"source": "BigService%02d", "relationship": %q, "target": "Hub%02d", "targetDescription": %q}`,
			i%50, []string{"calls", "reads"}[i/2500], i/50%50, strings.Repeat("a fairly long description ", 10)))
	}
	body := []byte(strings.Join(lines, "\n"))
	if len(body) < 3<<19 {
		t.Fatalf("the big import is only %d bytes", len(body))
	}
	if a, err := ccall(nodes[1], pos, nil, "POST", "/v1/orgs/org_t/projects/p/triplets", imp, "application/x-ndjson", body); err != nil || a.code != 200 {
		t.Fatalf("an import of %d bytes: %d %s %v\n%s", len(body), a.code, a.body, err, nodes[1].stderr())
	}
	for i, n := range nodes {
		var st engine.Stats
		json.Unmarshal(mustCall(t, n, pos, 200, "GET", "/v1/orgs/org_t/projects/p/graph/stats", ag, "", nil), &st)
		if st.Triplets != 5000 {
			t.Errorf("node %d: %d triplets of the big import, want 5000", i+1, st.Triplets)
		}
	}
}

// clusterNoQuorum kills the nodes whose NATS servers make the quorum:
// writes are refused with 503 (no stream answered: nothing written) or
// answered 504 outcome_unknown (the stream's leader took the write and
// cannot replicate it: it may be applied once the quorum is back), never
// acknowledged nor applied meanwhile; reads go on from what was applied.
//
// It returns org_k0's importer token and the observations it sent with an
// Idempotency-Key while the quorum was lost (key -> content), to be sent
// again once it is back.
func clusterNoQuorum(t *testing.T, alive, kill []*server, acked map[string][]string, pos *positions) (string, map[string]string) {
	// Tokens are writes too: made while the quorum holds.
	imp := mustToken(t, alive[0], pos, "org_k0", "importer")
	ag := map[string]string{}
	for o := range acked {
		ag[o] = mustToken(t, alive[0], pos, o, "agent")
	}
	for _, n := range alive {
		mustCall(t, n, pos, 200, "GET", "/v1/whoami", imp, "", nil)
	}
	for _, n := range kill {
		n.cmd.Process.Signal(syscall.SIGKILL)
		n.cmd.Wait()
	}
	for i, n := range alive {
		a, err := ccall(n, pos, nil, "POST", "/v1/orgs/org_k0/projects/p/triplets", imp, "application/json",
			[]byte(fmt.Sprintf(`[{"source": "NoQuorum%d", "relationship": "calls", "target": "Hub0"}]`, i)))
		refused := a.code == 503 && bytes.Contains(a.body, []byte(`"unavailable"`))
		unknown := a.code == 504 && bytes.Contains(a.body, []byte(`"outcome_unknown"`))
		if err != nil || !refused && !unknown {
			t.Fatalf("a write without a NATS quorum on %s: %d %s %v, want 503 unavailable or 504 outcome_unknown", n.url, a.code, a.body, err)
		}
	}
	unsure := map[string]string{}
	for i, n := range alive {
		key, content := fmt.Sprintf("nq-%d", i), fmt.Sprintf("written without a quorum through node %d", i)
		unsure[key] = content
		b, _ := json.Marshal(map[string]string{"content": content})
		a, err := ccallKeyed(n, pos, nil, key, "POST", "/v1/orgs/org_k0/projects/p/observations", imp, "application/json", b)
		if err != nil || a.code != 503 && a.code != 504 {
			t.Fatalf("an observation without a NATS quorum on %s: %d %s %v, want 503 or 504", n.url, a.code, a.body, err)
		}
		t.Logf("an observation without a NATS quorum: %d %s", a.code, a.body)
	}
	// Reads go on: from the node's own store, or proxied to a live node
	// that serves the org (a dead one is tried once, answers 503, and is
	// skipped after).
	for _, n := range alive {
		for o, names := range acked {
			var a answer
			for range 3 {
				var err error
				if a, err = ccall(n, pos, nil, "GET", "/v1/orgs/"+o+"/projects/p/graph/triplets?predicate=calls&limit=10000", ag[o], "", nil); err != nil {
					t.Fatal(err)
				}
				if a.code != 503 {
					break
				}
			}
			if a.code != 200 || !bytes.Contains(a.body, []byte(`"`+names[len(names)-1]+`"`)) || bytes.Contains(a.body, []byte("NoQuorum")) {
				t.Fatalf("a read of %s without a NATS quorum on %s: %d %.300s", o, n.url, a.code, a.body)
			}
		}
	}
	return imp, unsure
}

// clusterQuorumBack restarts the killed nodes (they retry their start
// while the streams and buckets have no leader) and sends again, with
// the same Idempotency-Key, the writes answered 503 or 504 without a
// quorum: each is applied exactly once, whether or not the first
// attempt was stored (issue 23: such writes appeared once the quorum
// returned).
func clusterQuorumBack(t *testing.T, nodes []*server, dirs []string, flags func(int) []string, pos *positions, imp string, unsure map[string]string) {
	for i := 1; i < len(nodes); i++ {
		nodes[i] = startServe(t, dirs[i], flags(i)...)
	}
	for i, n := range nodes {
		waitFor(t, 2*time.Minute, fmt.Sprintf("node %d serves every shard after the quorum is back", i+1), func() (bool, string) {
			st, err := clusterStatus(n)
			return err == nil && len(st.Serving) >= 2, fmt.Sprintf("%+v %v", st, err)
		})
	}
	for key, content := range unsure {
		b, _ := json.Marshal(map[string]string{"content": content})
		var a answer
		for end := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
			var err error
			a, err = ccallKeyed(nodes[0], pos, nil, key, "POST", "/v1/orgs/org_k0/projects/p/observations", imp, "application/json", b)
			if err == nil && a.code == 201 {
				break
			}
			if time.Now().After(end) || err == nil && a.code != 503 && a.code != 504 {
				t.Fatalf("retry of %s once the quorum is back: %d %s %v", key, a.code, a.body, err)
			}
		}
		t.Logf("retry of %s: 201 %s, replayed %q", key, a.body, a.header.Get(api.IdempotentReplayedHeader))
	}
	for i, n := range nodes {
		var out struct {
			Observations []struct{ Content string }
		}
		json.Unmarshal(mustCall(t, n, pos, 200, "GET", "/v1/orgs/org_k0/projects/p/observations?limit=100", imp, "", nil), &out)
		count := map[string]int{}
		for _, o := range out.Observations {
			count[o.Content]++
		}
		for key, content := range unsure {
			if count[content] != 1 {
				t.Errorf("node %d holds %d copies of %s (%q), want 1: %+v", i+1, count[content], key, content, out.Observations)
			}
		}
	}
}

// clusterIsolation runs the defects issue's isolation checks with the
// writes on one node and the reads on every node.
func clusterIsolation(t *testing.T, nodes []*server, pos *positions) {
	mustCall(t, nodes[1], pos, 200, "PUT", "/v1/admin/policies", clusterAdmin, "text/plain", []byte(policy.DefaultPolicies+`
@id("no-secrets")
forbid (principal, action, resource) when { resource.type == "secret" };
`))
	imp := mustToken(t, nodes[0], pos, "org_a", "importer")
	mustCall(t, nodes[2], pos, 200, "POST", "/v1/orgs/org_a/projects/api/triplets", imp, "application/json", []byte(
		`[{"source": "Alpha", "relationship": "calls", "target": "Beta"},
		  {"source": "Alpha", "relationship": "reads", "target": "Vault", "targetType": "secret"},
		  {"source": "Alpha", "relationship": "serves", "target": "WebUI", "targetProjectId": "web"}]`))
	mustCall(t, nodes[0], pos, 200, "POST", "/v1/orgs/org_a/projects/api/triplets", clusterAdmin, "application/json",
		[]byte(`[{"source": "Alpha", "relationship": "uses", "target": "Catalogue", "targetOrgId": "org_b", "targetProjectId": "cat"}]`))
	agAPI := mustToken(t, nodes[1], pos, "org_a", "agent", "api")
	agAll := mustToken(t, nodes[2], pos, "org_a", "agent")
	agB := mustToken(t, nodes[0], pos, "org_b", "agent")
	block, _ := json.Marshal(map[string]any{"scope": map[string]string{"orgId": "org_a", "projectId": "api"}, "queryText": "Alpha", "budgetTokens": 2000})
	// Sessions: one id in two orgs is two sessions; a token of project
	// api may not act on a session of project web. Claimed on one node,
	// checked on the others.
	agWeb := mustToken(t, nodes[0], pos, "org_a", "agent", "web")
	claim := func(n *server, tok, project string) int {
		b, _ := json.Marshal(map[string]any{"workerId": "w_" + project, "projectId": project, "leaseSeconds": 60})
		a, err := ccall(n, pos, nil, "POST", "/v1/sessions/ses_iso/claim", tok, "application/json", b)
		if err != nil {
			t.Fatal(err)
		}
		return a.code
	}
	if c := claim(nodes[0], agWeb, "web"); c != 200 {
		t.Fatalf("org_a web claim: %d", c)
	}
	if c := claim(nodes[1], agB, "cat"); c != 200 {
		t.Fatalf("org_b's claim of the same session id: %d", c)
	}
	for i, n := range nodes {
		for _, path := range []string{"/v1/sessions/ses_iso/refresh", "/v1/sessions/ses_iso/injects/claim"} {
			if a, _ := ccall(n, pos, nil, "POST", path, agAPI, "application/json", []byte(`{"workerId": "w_web"}`)); a.code != 403 {
				t.Errorf("node %d: an api-only token on a web session, %s: %d %s", i+1, path, a.code, a.body)
			}
		}
		a, _ := ccall(n, pos, nil, "GET", "/v1/sessions/ses_iso/injection-logs", agB, "", nil)
		if a.code != 200 || bytes.Contains(a.body, []byte("org_a")) || !bytes.Contains(a.body, []byte("org_b")) {
			t.Errorf("node %d: org_b's logs of ses_iso: %d %s", i+1, a.code, a.body)
		}
	}
	for i, n := range nodes {
		b := string(mustCall(t, n, pos, 200, "GET", "/v1/orgs/org_a/projects/api/graph/triplets?subject=Alpha", agAPI, "", nil))
		if !strings.Contains(b, "Beta") || strings.Contains(b, "Vault") || strings.Contains(b, "WebUI") || strings.Contains(b, "Catalogue") {
			t.Errorf("node %d: project token's triplets: %s", i+1, b)
		}
		b = string(mustCall(t, n, pos, 200, "GET", "/v1/orgs/org_a/projects/api/graph/triplets?subject=Alpha", agAll, "", nil))
		if !strings.Contains(b, "WebUI") || strings.Contains(b, "Vault") || strings.Contains(b, "Catalogue") {
			t.Errorf("node %d: org token's triplets: %s", i+1, b)
		}
		b = string(mustCall(t, n, pos, 200, "POST", "/v1/context/graph", agAPI, "application/json", block))
		if !strings.Contains(b, "Beta") || strings.Contains(b, "Vault") || strings.Contains(b, "Catalogue") {
			t.Errorf("node %d: block: %s", i+1, b)
		}
		a, err := ccall(n, pos, nil, "GET", "/v1/orgs/org_a/projects/api/graph/triplets?subject=Alpha", agB, "", nil)
		if err != nil || a.code != 403 || strings.Contains(string(a.body), "Beta") {
			t.Errorf("node %d: org_b's token reads org_a: %d %s %v", i+1, a.code, a.body, err)
		}
		// A token limited to project api cannot import into web.
		impAPI := mustToken(t, n, pos, "org_a", "importer", "api")
		if a, _ := ccall(n, pos, nil, "POST", "/v1/orgs/org_a/projects/api/triplets", impAPI, "application/json",
			[]byte(`[{"source": "Alpha", "relationship": "calls", "target": "Sneak", "targetProjectId": "web"}]`)); a.code != 403 {
			t.Errorf("node %d: an api-only importer wrote into web: %d %s", i+1, a.code, a.body)
		}
		// org_b's own block says nothing of org_a.
		bb, _ := json.Marshal(map[string]any{"scope": map[string]string{"orgId": "org_b", "projectId": "cat"}, "queryText": "Alpha Catalogue", "budgetTokens": 2000})
		b = string(mustCall(t, n, pos, 200, "POST", "/v1/context/graph", agB, "application/json", bb))
		if strings.Contains(b, "Alpha") || strings.Contains(b, "Beta") {
			t.Errorf("node %d: org_b's block leaks org_a: %s", i+1, b)
		}
	}
}

// clusterDelivery: a session's lease and inject queue hold across the
// nodes. Requests carry no positions (a worker on another node knows
// nothing of the first's writes): the log orders them.
func clusterDelivery(t *testing.T, nodes []*server, pos *positions) {
	ag := mustToken(t, nodes[0], pos, "org_d", "agent")
	// The token must be known everywhere before anonymous-position calls.
	for _, n := range nodes {
		mustCall(t, n, pos, 200, "GET", "/v1/whoami", ag, "", nil)
	}
	claim := func(n *server, worker string) answer {
		b, _ := json.Marshal(map[string]any{"workerId": worker, "projectId": "p", "leaseSeconds": 600})
		a, err := ccall(n, &positions{}, nil, "POST", "/v1/sessions/ses_d/claim", ag, "application/json", b)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := claim(nodes[0], "w1"); a.code != 200 {
		t.Fatalf("claim on node 1: %d %s", a.code, a.body)
	}
	for i, n := range nodes[1:] {
		if a := claim(n, fmt.Sprintf("w%d", i+2)); a.code != 409 {
			t.Fatalf("a second worker's claim on node %d: %d %s, want 409", i+2, a.code, a.body)
		}
	}
	// An inject enqueued on node 3 goes to the holder polling node 2, is
	// acked on node 2 and never handed out again, on any node.
	b, _ := json.Marshal(map[string]any{"text": "remember the staging pool cap"})
	if a, _ := ccall(nodes[2], &positions{}, nil, "POST", "/v1/sessions/ses_d/injects", ag, "application/json", b); a.code != 201 {
		t.Fatalf("enqueue on node 3: %d %s", a.code, a.body)
	}
	w1, _ := json.Marshal(map[string]any{"workerId": "w1"})
	a, _ := ccall(nodes[1], &positions{}, nil, "POST", "/v1/sessions/ses_d/injects/claim", ag, "application/json", w1)
	var in struct{ DeliveryID, Text string }
	json.Unmarshal(a.body, &in)
	if a.code != 200 || in.Text != "remember the staging pool cap" {
		t.Fatalf("holder's claim on node 2: %d %s", a.code, a.body)
	}
	if a, _ := ccall(nodes[2], &positions{}, nil, "POST", "/v1/sessions/ses_d/injects/claim", ag, "application/json", w1); a.code != 200 || !bytes.Contains(a.body, []byte(in.DeliveryID)) {
		t.Fatalf("the in-flight inject on node 3: %d %s, want the same delivery %s again", a.code, a.body, in.DeliveryID)
	}
	w2, _ := json.Marshal(map[string]any{"workerId": "w2"})
	if a, _ := ccall(nodes[0], &positions{}, nil, "POST", "/v1/sessions/ses_d/injects/claim", ag, "application/json", w2); a.code != 409 {
		t.Fatalf("a non-holder's inject claim on node 1: %d %s", a.code, a.body)
	}
	if a, _ := ccall(nodes[1], &positions{}, nil, "POST", "/v1/sessions/ses_d/injects/"+in.DeliveryID+"/ack", ag, "", nil); a.code != 204 {
		t.Fatalf("ack on node 2: %d %s", a.code, a.body)
	}
	for i, n := range nodes {
		if a, _ := ccall(n, &positions{}, nil, "POST", "/v1/sessions/ses_d/injects/claim", ag, "application/json", w1); a.code != 204 {
			t.Fatalf("after the ack, node %d hands out: %d %s", i+1, a.code, a.body)
		}
	}
}

// clusterInSession: the in-session injector answers a session as one
// node would, whichever nodes the agent reaches: a tool call on node 1
// queues a block, node 2 drains it, and node 3 does not match it again
// (what the session was shown is remembered on the session's node).
func clusterInSession(t *testing.T, nodes []*server, pos *positions) {
	// Nodes agree on a session's node once their views of the members
	// agree: each sees every node serving every shard.
	for i, n := range nodes {
		waitFor(t, 30*time.Second, fmt.Sprintf("node %d sees every member serve every shard", i+1), func() (bool, string) {
			st, err := clusterStatus(n)
			if err != nil || len(st.Members) != len(nodes) {
				return false, fmt.Sprintf("%+v %v", st, err)
			}
			for _, m := range st.Members {
				if len(m.Serving) != len(shards)+1 {
					return false, fmt.Sprintf("%+v", st)
				}
			}
			return true, ""
		})
	}
	imp := mustToken(t, nodes[0], pos, "org_i", "importer")
	mustCall(t, nodes[1], pos, 201, "POST", "/v1/orgs/org_i/projects/p/observations", imp, "application/json",
		[]byte(`{"content": "The staging connection pool is capped at 20 connections."}`))
	event := []byte(`{"phase": "pre-verb", "projectId": "p", "tool": "Edit", "paths": ["deploy/staging.yaml"], "query": "staging connection pool cap"}`)
	b := mustCall(t, nodes[0], pos, 200, "POST", "/v1/sessions/ses_i/verb-events", imp, "application/json", event)
	if !bytes.Contains(b, []byte(`"outcome":"queued"`)) || !bytes.Contains(b, []byte("capped at 20")) {
		t.Fatalf("tool call on node 1: %s, want the block queued", b)
	}
	b = mustCall(t, nodes[1], pos, 200, "POST", "/v1/sessions/ses_i/pending/drain", imp, "", nil)
	var d struct{ Pending []struct{ Block string } }
	if json.Unmarshal(b, &d); len(d.Pending) != 1 || !strings.Contains(d.Pending[0].Block, "capped at 20") {
		t.Fatalf("drain on node 2: %s, want the block node 1 queued", b)
	}
	if b := mustCall(t, nodes[2], pos, 200, "POST", "/v1/sessions/ses_i/verb-events", imp, "application/json", event); !bytes.Contains(b, []byte(`"outcome":"no-match"`)) {
		t.Fatalf("the same tool call on node 3: %s, want no-match (shown already)", b)
	}
	if b := mustCall(t, nodes[2], pos, 200, "POST", "/v1/sessions/ses_i/pending/drain", imp, "", nil); !bytes.Contains(b, []byte(`"pending":[]`)) {
		t.Fatalf("a second drain on node 3: %s, want nothing pending", b)
	}
}

// clusterPlacement: an operator places a new org on a shard of its
// choosing; its writes go there; once it has data, placing it elsewhere
// moves its data: every node answers with all of it, its writes go to
// its new shard, and the cluster's status reports the move.
func clusterPlacement(t *testing.T, nodes []*server, pos *positions) {
	var p struct {
		OrgID, Shard string
		Override     bool
	}
	json.Unmarshal(mustCall(t, nodes[0], pos, 200, "GET", "/v1/admin/orgs/org_new/shard", clusterAdmin, "", nil), &p)
	if want, _ := cluster.ShardOf("org_new", shards, nil); p.Shard != want || p.Override {
		t.Fatalf("org_new placed %+v, want %s by rendezvous", p, want)
	}
	other := shards[(slices.Index(shards, p.Shard)+1)%len(shards)]
	b := mustCall(t, nodes[1], pos, 200, "PUT", "/v1/admin/orgs/org_new/shard", clusterAdmin, "application/json", []byte(`{"shard": "`+other+`"}`))
	json.Unmarshal(b, &p)
	if p.Shard != other || !p.Override {
		t.Fatalf("override to %s: %s", other, b)
	}
	if a, _ := ccall(nodes[2], pos, nil, "PUT", "/v1/admin/orgs/org_new/shard", clusterAdmin, "application/json", []byte(`{"shard": "s9"}`)); a.code != 422 {
		t.Fatalf("override to a shard that does not exist: %d %s", a.code, a.body)
	}
	for i, n := range nodes { // every node's copy follows the bucket within moments
		waitFor(t, 10*time.Second, fmt.Sprintf("node %d sees the override", i+1), func() (bool, string) {
			a, err := ccall(n, pos, nil, "GET", "/v1/admin/orgs/org_new/shard", clusterAdmin, "", nil)
			return err == nil && bytes.Contains(a.body, []byte(`"shard":"`+other+`"`)), string(a.body)
		})
	}
	imp := mustToken(t, nodes[0], pos, "org_new", "importer")
	for i, n := range nodes { // the write goes to the override's shard, whichever node takes it
		a, err := ccall(n, pos, nil, "POST", "/v1/orgs/org_new/projects/p/triplets", imp, "application/json",
			[]byte(fmt.Sprintf(`[{"source": "Placed%d", "relationship": "calls", "target": "There"}]`, i)))
		if err != nil || a.code != 200 || !strings.HasPrefix(a.seq, other+":") {
			t.Fatalf("write of org_new on node %d: %d %s (position %q, want on %s) %v", i+1, a.code, a.body, a.seq, other, err)
		}
	}
	// org_new has data now: removing its override moves it back to the
	// shard hashing gives it, its data with it.
	home, _ := cluster.ShardOf("org_new", shards, nil)
	b = mustCall(t, nodes[0], pos, 200, "PUT", "/v1/admin/orgs/org_new/shard", clusterAdmin, "application/json", []byte(`{"shard": ""}`))
	var moved struct {
		Shard    string
		Override bool
		Move     *api.OrgMove
	}
	if err := json.Unmarshal(b, &moved); err != nil || moved.Shard != home || moved.Override || moved.Move == nil || moved.Move.Phase != "done" ||
		moved.Move.From != other || moved.Move.To != home || moved.Move.Copied != 3 {
		t.Fatalf("moving org_new, which has data, back to %s: %s", home, b)
	}
	a, err := ccall(nodes[2], pos, nil, "POST", "/v1/orgs/org_new/projects/p/triplets", imp, "application/json",
		[]byte(`[{"source": "PlacedBack", "relationship": "calls", "target": "There"}]`))
	if err != nil || a.code != 200 || !strings.HasPrefix(a.seq, home+":") {
		t.Fatalf("a write of org_new after its move: %d %s (position %q, want on %s) %v", a.code, a.body, a.seq, home, err)
	}
	for i, n := range nodes { // every node answers with all of it
		b := mustCall(t, n, pos, 200, "GET", "/v1/orgs/org_new/projects/p/graph/triplets?object=There", imp, "", nil)
		for _, want := range []string{"Placed0", "Placed1", "Placed2", "PlacedBack"} {
			if !bytes.Contains(b, []byte(want)) {
				t.Fatalf("node %d after the move lacks %s: %s", i+1, want, b)
			}
		}
	}
	b = mustCall(t, nodes[1], pos, 200, "GET", "/v1/admin/cluster", clusterAdmin, "", nil)
	if !bytes.Contains(b, []byte(`"orgId":"org_new"`)) || !bytes.Contains(b, []byte(`"phase":"done"`)) {
		t.Fatalf("the cluster's status does not report the move: %s", b)
	}
}

// clusterSIGKILL imports into three orgs through the three nodes, kills
// node 3 mid-way, restarts it and checks every acknowledged triplet on
// every node, node 3's own store included. It returns the acknowledged
// source names per org.
func clusterSIGKILL(t *testing.T, nodes []*server, dirs []string, flags func(int) []string, pos *positions) map[string][]string {
	orgs := []string{"org_k0", "org_k1", "org_k2"}
	imps := map[string]string{}
	for _, o := range orgs {
		imps[o] = mustToken(t, nodes[0], pos, o, "importer")
	}
	var (
		mu        sync.Mutex
		acked     = map[string][]string{}
		requests  atomic.Int64
		afterKill atomic.Int64
		killed    atomic.Bool
		logged    atomic.Int64
	)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 6 { // two writers per node, each org written through every node
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, org := nodes[w%3], orgs[(w/3+w)%3]
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var lines, names []string
				for j := range 20 {
					name := fmt.Sprintf("w%d_r%d_n%d", w, i, j)
					names = append(names, name)
					lines = append(lines, fmt.Sprintf(`{"source": %q, "relationship": "calls", "target": "Hub%d"}`, name, j%5))
				}
				a, err := ccall(n, pos, nil, "POST", "/v1/orgs/"+org+"/projects/p/triplets", imps[org], "application/x-ndjson", []byte(strings.Join(lines, "\n")))
				if err != nil {
					if n == nodes[2] && killed.Load() {
						return // the node died mid-request: not acknowledged
					}
					time.Sleep(50 * time.Millisecond)
					continue
				}
				requests.Add(1)
				if a.code == 200 {
					mu.Lock()
					acked[org] = append(acked[org], names...)
					mu.Unlock()
					if killed.Load() {
						afterKill.Add(1)
					}
				} else if a.code == 503 || (a.code == 504 && killed.Load()) {
					// 503: refused, nothing written. 504 outcome_unknown:
					// in flight when the stream's leader died, it may be
					// applied; it is not counted as acknowledged.
					if killed.Load() && logged.Add(1) < 5 {
						t.Logf("import on %s after the kill: %d %s", n.url, a.code, a.body)
					}
				} else {
					t.Errorf("import on %s: %d %s", n.url, a.code, a.body)
				}
			}
		}()
	}
	for requests.Load() < 60 {
		time.Sleep(10 * time.Millisecond)
	}
	killed.Store(true)
	if err := nodes[2].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	nodes[2].cmd.Wait()
	// The two others go on taking writes (two of three NATS servers are a
	// quorum).
	for end := time.Now().Add(time.Minute); afterKill.Load() < 30; {
		if time.Now().After(end) {
			close(stop)
			wg.Wait()
			for i, n := range nodes[:2] {
				t.Logf("node %d said: %s", i+1, n.stderr())
			}
			t.Fatalf("only %d imports acknowledged in the minute after node 3 was killed", afterKill.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	t.Logf("%d imports, %d acknowledged after node 3 was killed", requests.Load(), afterKill.Load())

	nodes[2] = startServe(t, dirs[2], flags(2)...)
	waitFor(t, time.Minute, "node 3 serves every shard again", func() (bool, string) {
		st, err := clusterStatus(nodes[2])
		return err == nil && len(st.Serving) == 4, fmt.Sprintf("%+v %v", st, err)
	})
	ag := map[string]string{}
	for _, o := range orgs {
		ag[o] = mustToken(t, nodes[1], pos, o, "agent")
	}
	for i, n := range nodes {
		for _, o := range orgs {
			checkAcked(t, fmt.Sprintf("node %d", i+1), n, pos, o, ag[o], acked[o], true)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return acked
}

// checkAcked reads every acknowledged name of org on node n (from its own
// store when local).
func checkAcked(t *testing.T, who string, n *server, pos *positions, org, tok string, names []string, local bool) {
	t.Helper()
	var out struct {
		Triplets []struct{ Source string }
	}
	var grant *auth.Token
	if local {
		grant = &auth.Token{OrgID: org, AgentID: "a_agent", Role: auth.RoleAgent}
	}
	a, err := ccall(n, pos, grant, "GET", "/v1/orgs/"+org+"/projects/p/graph/triplets?predicate=calls&limit=10000", tok, "", nil)
	if err != nil || a.code != 200 {
		t.Fatalf("%s: %s: %d %s %v", who, org, a.code, a.body, err)
	}
	json.Unmarshal(a.body, &out)
	have := map[string]bool{}
	for _, tr := range out.Triplets {
		have[tr.Source] = true
	}
	for _, name := range names {
		if !have[name] {
			t.Fatalf("%s: acknowledged triplet %s of %s missing (%d of %d acknowledged present)", who, name, org, len(have), len(names))
		}
	}
}

// clusterJoin starts a fourth node on the same NATS cluster (--nats-url),
// waits until it serves the shards rendezvous gives it and the node it
// displaced stops applying them, and checks every node answers every
// org in full throughout.
func clusterJoin(t *testing.T, nodes []*server, dir string, natsPort int, secret string, acked map[string][]string, pos *positions) *server {
	ag := map[string]string{}
	for o := range acked {
		ag[o] = mustToken(t, nodes[0], pos, o, "agent")
	}
	n4 := launchServe(t, dir, "--admin-token", clusterAdmin, "--cluster", "c1", "--cluster-secret-file", secret, "--node-id", "n4",
		"--nats-url", fmt.Sprintf("nats://127.0.0.1:%d", natsPort), "--read-wait", "20s")
	// Readers ask every node for every org while the node joins: any
	// answer short of an acknowledged triplet is a wrong answer.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads, unavailable atomic.Int64
	var wrong atomic.Value
	reader := func(n *server) {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for o, names := range acked {
				a, err := ccall(n, pos, nil, "GET", "/v1/orgs/"+o+"/projects/p/graph/triplets?predicate=calls&limit=10000", ag[o], "", nil)
				if err != nil {
					wrong.Store(fmt.Sprintf("%s %s: %v", n.url, o, err))
					continue
				}
				if a.code == 503 {
					unavailable.Add(1)
					continue
				}
				reads.Add(1)
				if a.code != 200 {
					wrong.Store(fmt.Sprintf("%s %s: %d %s", n.url, o, a.code, a.body))
					continue
				}
				for _, name := range []string{names[0], names[len(names)/2], names[len(names)-1]} {
					if !bytes.Contains(a.body, []byte(`"`+name+`"`)) {
						wrong.Store(fmt.Sprintf("%s %s: %s missing", n.url, o, name))
					}
				}
			}
		}
	}
	for _, n := range nodes {
		wg.Add(1)
		go reader(n)
	}
	if err := n4.waitListening(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go reader(n4)
	// Rendezvous over the four ids decides which shards move to n4.
	var moved []string
	for _, s := range shards {
		if cluster.HoldsShard(s, []string{"n1", "n2", "n3", "n4"}, "n4", 3) {
			moved = append(moved, s)
		}
	}
	if len(moved) == 0 {
		t.Fatal("rendezvous gives n4 no shard; choose other node ids")
	}
	waitFor(t, time.Minute, "n4 serves its shards and the displaced nodes stop", func() (bool, string) {
		st, err := clusterStatus(n4)
		if err != nil {
			return false, err.Error()
		}
		for _, s := range moved {
			if !slices.Contains(st.Serving, s) {
				return false, fmt.Sprintf("n4: %+v", st)
			}
		}
		for _, s := range moved {
			holders := 0
			for _, n := range nodes {
				st, err := clusterStatus(n)
				if err != nil {
					return false, err.Error()
				}
				if _, ok := st.Applied[s]; ok {
					holders++
				}
			}
			if holders != 2 {
				return false, fmt.Sprintf("shard %s still applied on %d of the first three", s, holders)
			}
		}
		return true, ""
	})
	time.Sleep(2 * time.Second) // reads go on after the move
	close(stop)
	wg.Wait()
	t.Logf("shards %v moved to n4; %d reads, %d answered 503 during the move", moved, reads.Load(), unavailable.Load())
	if w := wrong.Load(); w != nil {
		t.Fatalf("wrong answer during the join: %v", w)
	}
	// An org of a moved shard is answered from n4's own store.
	for o, names := range acked {
		s, _ := cluster.ShardOf(o, shards, nil)
		checkAcked(t, "n4", n4, pos, o, ag[o], names, slices.Contains(moved, s))
	}
	return n4
}

// A node given a bad cluster setting says which and writes nothing.
func TestServeClusterBadFlags(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	dir := t.TempDir()
	good := clusterSecret(t, dir)
	open := filepath.Join(dir, "open.secret")
	short := filepath.Join(dir, "short.secret")
	os.WriteFile(open, []byte(strings.Repeat("s", 40)), 0o644)
	os.Chmod(open, 0o644)
	os.WriteFile(short, []byte("too-short\n"), 0o600)
	ok := []string{"--cluster", "demo", "--node-id", "n1", "--admin-token", clusterAdmin}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cluster", "demo"}, "--cluster needs --node-id"},
		{[]string{"--cluster", "demo", "--node-id", "n1"}, "--nats-url URL"},
		{[]string{"--nats-routes", "nats://127.0.0.1:1"}, "need --cluster NAME"},
		{[]string{"--cluster", "demo", "--node-id", "n1", "--nats-embed"}, "operator token"},
		{[]string{"--cluster", "Demo_X", "--node-id", "n1", "--nats-embed", "--admin-token", clusterAdmin}, `name "Demo_X"`},
		{[]string{"--cluster", "demo", "--node-id", "n 1", "--nats-embed", "--admin-token", clusterAdmin}, `node id "n 1"`},
		{[]string{"--cluster", "demo", "--node-id", "n1", "--nats-embed", "--admin-token", clusterAdmin, "--shards", "s0,global"}, `shard id "global"`},
		{append(ok, "--nats-embed"), "--cluster needs --cluster-secret-file"},
		{append(ok, "--nats-embed", "--cluster-secret-file", open), "can be read by group or others"},
		{append(ok, "--nats-embed", "--cluster-secret-file", short), "at least 32"},
		{append(ok, "--nats-embed", "--cluster-secret-file", good, "--nats-creds", good), "go with --nats-url"},
		{[]string{"--cluster-secret-file", good}, "need --cluster NAME"},
	} {
		cmd := exec.Command(binary, append([]string{"serve", "--data", data, "--addr", "127.0.0.1:0"}, c.args...)...)
		cmd.Env = append(os.Environ(), "KGCTX_ADMIN_TOKEN=")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("%v: %v %s, want an error naming %q", c.args, err, out, c.want)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Fatalf("%v wrote %s", c.args, data)
		}
	}
}
