package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index/embed"
)

// netTimeout is what a dependency's network call returns when it runs past
// its own deadline: a *url.Error around a net.Error whose Timeout() is
// true, as the server's read timeout on a stalled body also gives.
func netTimeout() error {
	return &url.Error{Op: "Post", URL: "http://embedder.invalid/v1/embeddings",
		Err: &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}}
}

// Only a body that did not arrive is 408: a timeout of anything else (an
// embedder call or its retries past their deadline, a proxied call) is
// the service's, answered 503, and an embedder's failures keep their own
// answer.
func TestToErrorTimeouts(t *testing.T) {
	for _, c := range []struct {
		name       string
		err        error
		status     int
		code       string
		retryAfter bool
	}{
		{"embedder call past its own deadline", fmt.Errorf("index: embed query: %w", netTimeout()), 503, "timeout", false},
		{"embedder retries past the request's deadline", fmt.Errorf("compose: seed: %w",
			fmt.Errorf("embed: http: %w (while backing off after: %v)", context.DeadlineExceeded, embed.ErrTransport)), 503, "timeout", false},
		{"embedder attempt timed out, retries spent", fmt.Errorf("%w (after 3 attempts)", fmt.Errorf("%w: %w", embed.ErrTransport, netTimeout())),
			503, "embedder_unavailable", true},
		{"os deadline from a dependency", fmt.Errorf("engine: vectorize: %w", os.ErrDeadlineExceeded), 503, "timeout", false},
		{"a body read past the read timeout", bodyReadError(fmt.Errorf("tripletio: line 3: %w", netTimeout())), 408, "request_timeout", false},
	} {
		e := toError(c.err)
		if e.Status != c.status || e.Code != c.code || (e.RetryAfter > 0) != c.retryAfter {
			t.Errorf("%s: %d %s (Retry-After %d), want %d %s", c.name, e.Status, e.Code, e.RetryAfter, c.status, c.code)
		}
	}
}

// timeoutEmbedder fails every call with the error of a call that ran past
// its own deadline, well before the request's.
type timeoutEmbedder struct{ err error }

func (e timeoutEmbedder) Dim() int     { return 8 }
func (e timeoutEmbedder) Name() string { return "timeout/8" }
func (e timeoutEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return nil, e.err
}

// Through the server: a request whose body arrived whole and whose
// embedder timed out is not told its body did not arrive.
func TestEmbedderTimeoutIsNot408(t *testing.T) {
	app, err := service.Open(context.Background(), service.Config{DataDir: filepath.Join(t.TempDir(), "data"),
		Embedder: timeoutEmbedder{err: fmt.Errorf("timeout embedder: %w", netTimeout())}})
	if err != nil {
		t.Fatal(err)
	}
	s := serveApp(t, app, nil)
	imp := s.token("org_a", "importer")
	r := s.do(http.MethodPost, "/v1/orgs/org_a/projects/p/triplets", imp, "application/json",
		[]byte(`[{"source": "A", "relationship": "calls", "target": "B"}]`))
	if r.status != http.StatusServiceUnavailable || r.errCode() != "timeout" {
		t.Fatalf("import whose embedder timed out: %d %s, want 503 timeout", r.status, r.body)
	}
	if st := s.stats("org_a", "p"); st.Nodes != 0 {
		t.Fatalf("written: %+v", st)
	}
}

// failingIndexer is a search index beside the app's whose Apply fails
// while on.
type failingIndexer struct {
	mu sync.Mutex
	on bool
	wm uint64
}

func (x *failingIndexer) Name() string { return "failing" }
func (x *failingIndexer) Apply(_ context.Context, cs *engine.ChangeSet) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.on {
		return errors.New("failing indexer: injected failure")
	}
	x.wm = cs.Seq
	return nil
}
func (x *failingIndexer) Watermark() uint64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.wm
}
func (x *failingIndexer) set(on bool) {
	x.mu.Lock()
	x.on = on
	x.mu.Unlock()
}

// A write whose index update fails (retries included) is stored, so it is
// answered as usual (a write answered 4xx or 5xx changed nothing), with a
// Warning header that every answer carries while the index is behind, and
// the metric says so, until a later write catches the index up.
func TestIndexBehindWarns(t *testing.T) {
	s := startServer(t)
	ix := &failingIndexer{}
	if err := s.app.Store.Attach(context.Background(), ix); err != nil {
		t.Fatal(err)
	}
	imp := s.token("org_a", "importer")
	ag := s.token("org_a", "agent")
	check := func(what string, r resp, behind bool) {
		t.Helper()
		if r.status/100 != 2 {
			t.Fatalf("%s: %d %s, want 2xx", what, r.status, r.body)
		}
		want := ""
		if behind {
			want = indexBehindWarning
		}
		if got := r.header.Get("Warning"); got != want {
			t.Fatalf("%s: Warning %q, want %q", what, got, want)
		}
	}
	metric := func(want string) {
		t.Helper()
		m := s.do(http.MethodGet, "/metrics", s.admin, "", nil)
		check("metrics", m, want == "1")
		if !strings.Contains(string(m.body), "\nkgctx_index_behind "+want+"\n") {
			t.Fatalf("metrics, want kgctx_index_behind %s:\n%s", want, m.body)
		}
	}
	check("stats with the index current", s.do(http.MethodGet, "/v1/orgs/org_a/projects/p/graph/stats", ag, "", nil), false)
	ix.set(true)
	r := s.do(http.MethodPost, "/v1/orgs/org_a/projects/p/triplets", imp, "application/json",
		[]byte(`[{"source": "A", "relationship": "calls", "target": "B"}]`))
	check("import the index failed", r, true)
	var res struct{ Accepted, NodesCreated int }
	r.json(t, &res)
	if res.Accepted != 1 || res.NodesCreated != 2 {
		t.Fatalf("import the index failed: %s", r.body)
	}
	if st := s.stats("org_a", "p"); st.Triplets != 1 {
		t.Fatalf("the write is not stored: %+v", st)
	}
	metric("1")
	r = s.do(http.MethodPost, "/v1/orgs/org_a/projects/p/observations", imp, "application/json",
		[]byte(`{"content": "the auth service times out under load"}`))
	check("observation while the index is behind", r, true)
	var ids struct{ IDs []string }
	if r.json(t, &ids); len(ids.IDs) != 1 {
		t.Fatalf("observation while the index is behind: %s", r.body)
	}
	check("stats while the index is behind", s.do(http.MethodGet, "/v1/orgs/org_a/projects/p/graph/stats", ag, "", nil), true)
	if r := s.do(http.MethodGet, "/v1/orgs/org_b/projects/p/graph/stats", ag, "", nil); r.status != http.StatusForbidden ||
		r.header.Get("Warning") != indexBehindWarning {
		t.Fatalf("an error answer while the index is behind: %d %v", r.status, r.header)
	}
	// The index works again: the next write catches it up, and its answer,
	// as every later one, has no warning.
	ix.set(false)
	r = s.do(http.MethodPost, "/v1/orgs/org_a/projects/p/triplets", imp, "application/json",
		[]byte(`[{"source": "C", "relationship": "calls", "target": "D"}]`))
	check("import once the index works", r, false)
	metric("0")
	check("stats once the index caught up", s.do(http.MethodGet, "/v1/orgs/org_a/projects/p/graph/stats", ag, "", nil), false)
}
