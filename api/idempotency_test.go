package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine/auth"
)

// TestIdempotencyKeyChecked: a write with a malformed Idempotency-Key
// (empty, too long, a space or a tab, not ASCII, sent twice) is 400
// naming the header, and writes nothing; a well-formed one is accepted
// (a single node applies every request).
func TestIdempotencyKeyChecked(t *testing.T) {
	s := startServer(t)
	imp := s.token("org_123", auth.RoleImporter)
	post := func(keys ...string) resp {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, s.url+projPath+"/observations", strings.NewReader(`{"content": "a note"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+imp)
		req.Header.Set("Content-Type", "application/json")
		for _, k := range keys {
			req.Header.Add(IdempotencyKeyHeader, k)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if err := s.oas.Check(req, res.StatusCode, res.Header, b); err != nil {
			t.Errorf("openapi: %v", err)
		}
		return resp{status: res.StatusCode, body: b, header: res.Header}
	}
	for name, keys := range map[string][]string{
		"empty": {""}, "long": {strings.Repeat("k", maxIdempotencyKey+1)}, "space": {"two words"},
		"tab": {"a\tb"}, "non-ascii": {"clé"}, "twice": {"a", "b"},
	} {
		r := post(keys...)
		if r.status != http.StatusBadRequest || r.errCode() != "invalid_field" || !bytes.Contains(r.body, []byte(IdempotencyKeyHeader)) {
			t.Errorf("%s: %d %s, want 400 invalid_field naming %s", name, r.status, r.body, IdempotencyKeyHeader)
		}
	}
	if p, _ := s.list(imp, ""); len(p.Observations) != 0 {
		t.Fatalf("refused writes stored %d observations", len(p.Observations))
	}
	for _, k := range []string{"0f8fad5b-d9cb-469f-a165-70867728950e", strings.Repeat("k", maxIdempotencyKey), "a!~"} {
		if r := post(k); r.status != http.StatusCreated || r.header.Get(IdempotentReplayedHeader) != "" {
			t.Errorf("key %q: %d %s", k, r.status, r.body)
		}
	}
}

// TestOutcomeUnknownStatus: a write whose outcome is unknown is 504
// outcome_unknown, without Retry-After (a retry is safe only with the
// same key), never the 503 of a refusal.
func TestOutcomeUnknownStatus(t *testing.T) {
	e := toError(fmt.Errorf("cluster: %w: JetStream did not acknowledge the write", service.ErrOutcomeUnknown))
	if e.Status != http.StatusGatewayTimeout || e.Code != "outcome_unknown" || e.RetryAfter != 0 || strings.HasPrefix(e.Message, "cluster: ") {
		t.Fatalf("unknown outcome: %+v", e)
	}
	if e := toError(fmt.Errorf("%w: %w", service.ErrOutcomeUnknown, context.DeadlineExceeded)); e.Status != http.StatusGatewayTimeout {
		t.Fatalf("an unknown outcome carrying a deadline: %+v, want 504 still", e)
	}
	if e := toError(fmt.Errorf("%w: nothing was written", service.ErrUnavailable)); e.Status != http.StatusServiceUnavailable || e.Code != "unavailable" {
		t.Fatalf("a refusal: %+v", e)
	}
}

// replayWriter is a Writer that applies a keyed write once, as a cluster
// does: the same caller's key and index again is answered with the first
// result, marked a replay.
type replayWriter struct {
	app  *service.App
	mu   sync.Mutex
	seen map[string]service.WriteResult
	keys []string
}

func (w *replayWriter) Write(ctx context.Context, wr service.Write) (service.WriteResult, error) {
	scope, key, index, ok := service.NextIdempotencyKey(ctx)
	id := fmt.Sprintf("%q %q %d", scope, key, index)
	w.mu.Lock()
	defer w.mu.Unlock()
	if ok {
		w.keys = append(w.keys, id)
		if res, done := w.seen[id]; done {
			res.Replayed = true
			return res, nil
		}
	}
	res, err := w.app.Apply(ctx, wr, service.ApplyOptions{})
	if ok && err == nil {
		w.seen[id] = res
	}
	return res, err
}

// TestIdempotencyKeyReachesWriter: the key reaches the Writer scoped to
// the caller's org and agent; a replayed write is answered with the
// first result and Idempotent-Replayed: true.
func TestIdempotencyKeyReachesWriter(t *testing.T) {
	w := &replayWriter{seen: map[string]service.WriteResult{}}
	s := startServerWith(t, func(c *Config) { w.app = c.App; c.App.Writer = w })
	imp := s.token("org_123", auth.RoleImporter)
	post := func(key string) resp {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, s.url+projPath+"/observations", strings.NewReader(`{"content": "a note"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+imp)
		req.Header.Set(IdempotencyKeyHeader, key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if err := s.oas.Check(req, res.StatusCode, res.Header, b); err != nil {
			t.Errorf("openapi: %v", err)
		}
		return resp{status: res.StatusCode, body: b, header: res.Header}
	}
	first := post("key-1")
	again := post("key-1")
	if first.status != 201 || again.status != 201 || !bytes.Equal(first.body, again.body) {
		t.Fatalf("the same key twice: %d %s, then %d %s", first.status, first.body, again.status, again.body)
	}
	if first.header.Get(IdempotentReplayedHeader) != "" || again.header.Get(IdempotentReplayedHeader) != "true" {
		t.Fatalf("Idempotent-Replayed: %q then %q", first.header.Get(IdempotentReplayedHeader), again.header.Get(IdempotentReplayedHeader))
	}
	if p, _ := s.list(imp, ""); len(p.Observations) != 1 {
		t.Fatalf("%d observations, want 1", len(p.Observations))
	}
	if want := fmt.Sprintf("%q %q 0", "org_123\x00agent_importer", "key-1"); len(w.keys) != 2 || w.keys[0] != want {
		t.Fatalf("keys the writer saw: %q, want %q twice", w.keys, want)
	}
}
