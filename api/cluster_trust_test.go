package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine/auth"
)

// fakeCluster is a cluster node as the server sees it: it routes the orgs
// of routes to their URL, records the waits asked of it and signs
// principals with key.
type fakeCluster struct {
	key    []byte
	routes map[string]string // org -> base URL of the node serving it
	// applyErr is what WaitApplied answers (a node that has not applied
	// the positions: ErrUnavailable).
	applyErr error
	// sessions routes sessions (RouteSession): session -> base URLs,
	// "" for this node.
	sessions map[string][]string
	// stale lists the orgs whose shard this node stopped applying.
	stale map[string]bool
	// onGlobal runs when a request waits for the global log (a token
	// arriving from the log).
	onGlobal func()
	// move is the org's latest move (Placement); placed and placeErr
	// what Place answers, placedOn the shard asked.
	move     *OrgMove
	placed   *OrgMove
	placeErr error
	placedOn []string

	// self is the node's advertised URL (Advertised; "" for none).
	self string

	mu    sync.Mutex
	waits []string
}

func (f *fakeCluster) Advertised() string { return f.self }

func (f *fakeCluster) note(s string) {
	f.mu.Lock()
	f.waits = append(f.waits, s)
	f.mu.Unlock()
}

func (f *fakeCluster) waited() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.waits...)
}

func (f *fakeCluster) WaitApplied(_ context.Context, pos string) error {
	if pos == "" {
		return nil
	}
	f.note("applied " + pos)
	return f.applyErr
}

// WaitGlobal waits, as a node does, only for a position of the global log.
func (f *fakeCluster) WaitGlobal(_ context.Context, pos string) error {
	if !strings.Contains(pos, "global:") {
		return nil
	}
	f.note("global " + pos)
	if f.onGlobal != nil {
		f.onGlobal()
	}
	return nil
}

func (f *fakeCluster) Route(_ context.Context, org string) ([]string, error) {
	if u := f.routes[org]; u != "" {
		return []string{u}, nil
	}
	return nil, nil
}

// RouteSession sends the sessions of sessions where the map says ("" is
// this node), and any other as Route does.
func (f *fakeCluster) RouteSession(ctx context.Context, org, session string) ([]string, error) {
	if t, ok := f.sessions[session]; ok {
		return t, nil
	}
	return f.Route(ctx, org)
}

func (f *fakeCluster) Status() ClusterStatus                    { return ClusterStatus{} }
func (f *fakeCluster) Stale(_ context.Context, org string) bool { return f.stale[org] }
func (f *fakeCluster) Placement(context.Context, string) (string, bool, *OrgMove, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return "s0", false, f.move, nil
}
func (f *fakeCluster) Place(_ context.Context, _, shard string) (*OrgMove, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.placedOn = append(f.placedOn, shard)
	return f.placed, f.placeErr
}
func (f *fakeCluster) PrincipalMAC(data []byte) []byte {
	m := hmac.New(sha256.New, f.key)
	m.Write(data)
	return m.Sum(nil)
}
func (f *fakeCluster) Counters() ClusterCounters {
	return ClusterCounters{RejectedWrites: map[string]uint64{"mac": 3, "shard": 0}, IgnoredRecords: map[string]uint64{"members": 2}}
}

// rawDo sends a request with headers h (no OpenAPI check: some answers
// here are to requests no client makes).
func rawDo(t *testing.T, method, url string, h map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
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

// TestClusterAuthenticatesBeforeWaiting: a cluster node authenticates a
// request before it waits for the log positions the request names. A
// request without a valid token is answered 401 at once, without waiting
// for any shard's position; a token the node does not know waits for the
// global log's position alone (where tokens are written), then is looked
// up again.
func TestClusterAuthenticatesBeforeWaiting(t *testing.T) {
	fc := &fakeCluster{key: []byte("k"), applyErr: fmt.Errorf("%w: s0:99 not applied on this node", service.ErrUnavailable)}
	s := startServerWith(t, func(c *Config) { c.Cluster = fc })
	who := s.url + "/v1/whoami"
	for _, h := range []map[string]string{
		{SequenceHeader: "s0:99"},
		{SequenceHeader: "s0:99", "Authorization": "Bearer kgx_not-a-token-of-this-cluster-000000000"},
		{SequenceHeader: "s0:99,global:7", "Authorization": "Bearer kgx_not-a-token-of-this-cluster-000000000"},
		{SequenceHeader: "nonsense", "Authorization": "Bearer kgx_not-a-token-of-this-cluster-000000000"},
	} {
		if code, body := rawDo(t, "GET", who, h, ""); code != 401 {
			t.Errorf("%v: %d %s, want 401", h, code, body)
		}
	}
	for _, w := range fc.waited() {
		if strings.HasPrefix(w, "applied") {
			t.Errorf("an unauthenticated request waited: %s", w)
		}
	}
	if w := fc.waited(); len(w) != 1 || w[0] != "global s0:99,global:7" {
		t.Errorf("waits %q, want the unknown token with a global position to wait for it alone", w)
	}
	// A token made on another node a moment ago: known once the global
	// log is applied; then the request waits for its positions.
	late := auth.NewTokenSecret()
	fc.onGlobal = func() { s.app.Tokens.PutToken(late, auth.Token{OrgID: "org_a", AgentID: "late", Role: auth.RoleAgent}) }
	fc.applyErr, fc.waits = nil, nil
	if code, body := rawDo(t, "GET", who, map[string]string{SequenceHeader: "global:3,s0:4", "Authorization": "Bearer " + late}, ""); code != 200 {
		t.Fatalf("a token arriving from the global log: %d %s", code, body)
	}
	if w := fc.waited(); len(w) != 2 || w[0] != "global global:3,s0:4" || w[1] != "applied global:3,s0:4" {
		t.Errorf("waits %q: want the global log, then (authenticated) every position", w)
	}
}

// recorder serves h and keeps the headers of the requests it saw.
type recorder struct {
	h    http.Handler
	mu   sync.Mutex
	seen []http.Header
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen = append(r.seen, req.Header.Clone())
	r.mu.Unlock()
	r.h.ServeHTTP(w, req)
}

func (r *recorder) take() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.seen
	r.seen = nil
	return s
}

// recordedNode starts a node of a fake cluster keyed by key behind a
// recorder of the requests sent to it: the fake cluster, the node, the
// recorder and the server in front of it.
func recordedNode(t *testing.T, key []byte) (*fakeCluster, *testServer, *recorder, *httptest.Server) {
	fb := &fakeCluster{key: key}
	b := startServerWith(t, func(c *Config) { c.Cluster = fb })
	rec := &recorder{h: b.srv.Handler()}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return fb, b, rec, srv
}

// TestClusterForwardsPrincipal: node A proxies the requests of org_b to
// node B with a principal signed by the cluster key, never the caller's
// bearer token; B takes a valid principal instead of a token and refuses
// a forged, expired, foreign or replayed one; X-Kgctx-Proxied alone
// changes nothing; A routes by the org its handler acts on; a proxy's
// error does not name the node.
func TestClusterForwardsPrincipal(t *testing.T) {
	key := []byte("cluster-principal-key")
	fb, _, rec, bURL := recordedNode(t, key)
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "http://" + dead.Addr().String()
	dead.Close()
	fa := &fakeCluster{key: key, routes: map[string]string{"org_b": bURL.URL, "org_c": deadURL}}
	a := startServerWith(t, func(c *Config) { c.Cluster = fa })

	// A token of org_b known to A alone: B serves it by the principal.
	agB := auth.NewTokenSecret()
	if err := a.app.Tokens.PutToken(agB, auth.Token{OrgID: "org_b", AgentID: "agent_b", Role: auth.RoleAgent}); err != nil {
		t.Fatal(err)
	}
	stats := "/v1/orgs/org_b/projects/p/graph/stats"
	bearer := map[string]string{"Authorization": "Bearer " + agB}
	if code, body := rawDo(t, "GET", a.url+stats, bearer, ""); code != 200 {
		t.Fatalf("proxied read: %d %s", code, body)
	}
	seen := rec.take()
	if len(seen) != 1 {
		t.Fatalf("B saw %d requests, want 1", len(seen))
	}
	sealed := seen[0].Get(PrincipalHeader)
	if seen[0].Get("Authorization") != "" || sealed == "" {
		t.Fatalf("the proxied request carried Authorization %q and principal %q: want no token, a principal", seen[0].Get("Authorization"), sealed)
	}
	// B itself does not know the token.
	if code, _ := rawDo(t, "GET", bURL.URL+stats, bearer, ""); code != 401 {
		t.Fatalf("B knows A's token: %d", code)
	}
	rec.take()

	// Principals B refuses: replayed, forged, expired, for another route.
	req := httptest.NewRequest("GET", stats, nil)
	tok := auth.Token{OrgID: "org_b", AgentID: "x", Role: auth.RoleOperator}
	expired := NewPrincipal(tok, req)
	expired.Expires = time.Now().Add(-time.Second).UnixMilli()
	other := NewPrincipal(tok, httptest.NewRequest("DELETE", "/v1/orgs/org_b/projects/p/graph?confirm=true", nil))
	forged := NewPrincipal(tok, req).Seal(func([]byte) []byte { return []byte("not the mac") })
	unsigned, _, _ := strings.Cut(NewPrincipal(tok, req).Seal(fb.PrincipalMAC), ".")
	for name, p := range map[string]string{"replayed": sealed, "forged": forged, "unsigned": unsigned,
		"expired": expired.Seal(fb.PrincipalMAC), "another request's": other.Seal(fb.PrincipalMAC)} {
		if code, body := rawDo(t, "GET", bURL.URL+stats, map[string]string{PrincipalHeader: p, ProxiedHeader: "1"}, ""); code != 401 {
			t.Errorf("a %s principal: %d %s, want 401", name, code, body)
		}
	}
	if code, body := rawDo(t, "GET", bURL.URL+stats, map[string]string{PrincipalHeader: NewPrincipal(tok, req).Seal(fb.PrincipalMAC)}, ""); code != 200 {
		t.Errorf("a valid principal: %d %s", code, body)
	}
	rec.take()

	// X-Kgctx-Proxied from a client is no principal: A proxies as ever.
	if code, body := rawDo(t, "GET", a.url+stats, map[string]string{"Authorization": "Bearer " + agB, ProxiedHeader: "1"}, ""); code != 200 {
		t.Fatalf("a client's X-Kgctx-Proxied: %d %s", code, body)
	}
	if n := len(rec.take()); n != 1 {
		t.Fatalf("a client's X-Kgctx-Proxied: B saw %d requests, want the request proxied", n)
	}

	// Routing by the org the handler acts on. An operator's block names
	// it in scope.orgId.
	op := map[string]string{"Authorization": "Bearer " + a.admin, "Content-Type": "application/json"}
	if code, body := rawDo(t, "POST", a.url+"/v1/context/graph", op, `{"scope": {"orgId": "org_b", "projectId": "p"}, "queryText": "x"}`); code != 200 {
		t.Fatalf("operator's block of org_b: %d %s", code, body)
	}
	if n := len(rec.take()); n != 1 {
		t.Errorf("an operator's block of org_b was answered by A (B saw %d requests)", n)
	}
	// A session route acts for the token's org, whatever ?orgId= says.
	agA := auth.NewTokenSecret()
	if err := a.app.Tokens.PutToken(agA, auth.Token{OrgID: "org_a", AgentID: "agent_a", Role: auth.RoleAgent}); err != nil {
		t.Fatal(err)
	}
	code, body := rawDo(t, "GET", a.url+"/v1/sessions/ses_1/injection-logs?orgId=org_b", map[string]string{"Authorization": "Bearer " + agA}, "")
	if n := len(rec.take()); n != 0 || code != 200 {
		t.Errorf("org_a's session route with ?orgId=org_b: %d %s, and B saw %d requests (want it served for org_a, by A)", code, body, n)
	}

	// A node that does not answer: 503, without its address.
	agC := auth.NewTokenSecret()
	a.app.Tokens.PutToken(agC, auth.Token{OrgID: "org_c", AgentID: "agent_c", Role: auth.RoleAgent})
	code, body = rawDo(t, "GET", a.url+"/v1/orgs/org_c/projects/p/graph/stats", map[string]string{"Authorization": "Bearer " + agC}, "")
	if code != 503 || strings.Contains(body, deadURL) || strings.Contains(body, dead.Addr().String()) || strings.Contains(body, "127.0.0.1") {
		t.Errorf("a node that did not answer: %d %s (want 503 without its address)", code, body)
	}

	// The node's counters are metrics.
	_, m := rawDo(t, "GET", a.url+"/metrics", map[string]string{"Authorization": "Bearer " + a.admin}, "")
	for _, want := range []string{`kgctx_cluster_rejected_writes_total{reason="mac"} 3`, `kgctx_cluster_ignored_records_total{bucket="members"} 2`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestPrincipalIgnoredAlone: a server running alone takes no principal;
// the header changes nothing.
func TestPrincipalIgnoredAlone(t *testing.T) {
	s := startServer(t)
	p := NewPrincipal(auth.Token{Role: auth.RoleOperator, AgentID: "x"}, httptest.NewRequest("GET", "/v1/whoami", nil)).Seal(func(b []byte) []byte { return b })
	if code, _ := rawDo(t, "GET", s.url+"/v1/whoami", map[string]string{PrincipalHeader: p}, ""); code != 401 {
		t.Fatalf("a principal on a server alone: %d, want 401 (no token)", code)
	}
}

// TestStaleShardWarns: an org answered by this node from a shard it
// stopped applying (a write of a newer kgctx) gets the answer with a
// Warning saying it is stale; another org's answer does not.
func TestStaleShardWarns(t *testing.T) {
	fc := &fakeCluster{key: []byte("k"), stale: map[string]bool{"org_a": true}}
	s := startServerWith(t, func(c *Config) { c.Cluster = fc })
	for org, want := range map[string]bool{"org_a": true, "org_b": false} {
		tok := s.token(org, "agent")
		req, err := http.NewRequest("GET", s.url+"/v1/orgs/"+org+"/projects/p/graph/triplets", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got := strings.Contains(res.Header.Get("Warning"), "stopped applying"); res.StatusCode != 200 || got != want {
			t.Errorf("%s: %d, Warning %q; want 200 and a stale warning %v", org, res.StatusCode, res.Header.Get("Warning"), want)
		}
	}
}

// TestClusterSessionOnOneNode: the in-session injector's memory of a
// session lives on one node, so every node sends the session's tool
// calls, drains and forgetting there (RouteSession), whichever node the
// agent reaches: a block queued by a tool call sent to A is drained
// through A from B, where it was queued, and is not matched again. A
// session request another node forwarded is served where it lands, never
// forwarded twice; a session whose node does not answer moves to the
// next.
func TestClusterSessionOnOneNode(t *testing.T) {
	key := []byte("cluster-session-key")
	fb := &fakeCluster{key: key}
	b := startServerWith(t, func(c *Config) { c.Cluster = fb })
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadURL := "http://" + dead.Addr().String()
	dead.Close()
	fa := &fakeCluster{key: key, sessions: map[string][]string{"ses_1": {b.url, ""}, "ses_2": {deadURL, ""}}}
	a := startServerWith(t, func(c *Config) { c.Cluster = fa })
	ag := auth.NewTokenSecret()
	for _, s := range []*testServer{a, b} { // a cluster's nodes hold the same tokens and data
		if err := s.app.Tokens.PutToken(ag, auth.Token{OrgID: "org_s", AgentID: "agent_s", Role: auth.RoleImporter}); err != nil {
			t.Fatal(err)
		}
		if r := s.post("/v1/orgs/org_s/projects/p/observations", ag, map[string]any{"content": "The staging connection pool is capped at 20 connections."}); r.status != 201 {
			t.Fatalf("observation: %d %s", r.status, r.body)
		}
	}
	event := map[string]any{"phase": "pre-verb", "projectId": "p", "tool": "Edit", "paths": []string{"deploy/staging.yaml"}, "query": "staging connection pool cap"}
	var res struct{ Outcome, Block string }
	r := a.post("/v1/sessions/ses_1/verb-events", ag, event)
	r.json(t, &res)
	if r.status != 200 || res.Outcome != "queued" || !strings.Contains(res.Block, "capped at 20") {
		t.Fatalf("tool call through A: %d %s, want the block queued", r.status, r.body)
	}
	if a.app.Injector.Sessions() != 0 || b.app.Injector.Sessions() != 1 {
		t.Fatalf("injector sessions: A %d, B %d; want the session on B alone", a.app.Injector.Sessions(), b.app.Injector.Sessions())
	}
	if r := a.post("/v1/sessions/ses_1/verb-events", ag, event); r.status != 200 || !strings.Contains(string(r.body), `"outcome":"no-match"`) {
		t.Fatalf("the same tool call again through A: %d %s, want no-match (B remembers it was shown)", r.status, r.body)
	}
	var drained struct{ Pending []struct{ Block string } }
	r = a.do("POST", "/v1/sessions/ses_1/pending/drain", ag, "", nil)
	r.json(t, &drained)
	if r.status != 200 || len(drained.Pending) != 1 || !strings.Contains(drained.Pending[0].Block, "capped at 20") {
		t.Fatalf("drain through A: %d %s, want the block queued on B", r.status, r.body)
	}
	if r := a.do("DELETE", "/v1/sessions/ses_1", ag, "", nil); r.status != 204 || b.app.Injector.Sessions() != 0 {
		t.Fatalf("forget through A: %d, B holds %d sessions", r.status, b.app.Injector.Sessions())
	}

	// Forwarded to A by a node that reads the members otherwise: served
	// on A, not forwarded again (B would answer 503 to a second hop).
	tok := auth.Token{OrgID: "org_s", AgentID: "agent_s", Role: auth.RoleImporter}
	body, _ := json.Marshal(event)
	req := httptest.NewRequest("POST", "/v1/sessions/ses_1/verb-events", nil)
	fwd := map[string]string{PrincipalHeader: NewPrincipal(tok, req).Seal(fa.PrincipalMAC), ProxiedHeader: "1", "Content-Type": "application/json"}
	if code, out := rawDo(t, "POST", a.url+"/v1/sessions/ses_1/verb-events", fwd, string(body)); code != 200 || !strings.Contains(out, `"outcome":"queued"`) {
		t.Fatalf("a forwarded tool call on A: %d %s", code, out)
	}
	if a.app.Injector.Sessions() != 1 {
		t.Fatalf("A holds %d sessions after serving a forwarded call, want 1", a.app.Injector.Sessions())
	}

	// The session's node does not answer: 503 (retry), then the next
	// node, here A itself, serves it.
	if r := a.post("/v1/sessions/ses_2/verb-events", ag, event); r.status != 503 {
		t.Fatalf("tool call whose node is down: %d %s, want 503", r.status, r.body)
	}
	if r := a.post("/v1/sessions/ses_2/verb-events", ag, event); r.status != 200 || !strings.Contains(string(r.body), `"outcome":"queued"`) {
		t.Fatalf("retried: %d %s, want served on A", r.status, r.body)
	}
}
