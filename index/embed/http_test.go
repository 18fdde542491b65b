package embed

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer is a minimal OpenAI-compatible /v1/embeddings endpoint. The
// vector for a text is deterministic and deliberately not normalised:
// component j = len(text) + j + 1.
type fakeServer struct {
	dim    int
	key    string // required bearer key, "" for none
	mu     sync.Mutex
	inputs [][]string // inputs of every accepted request, in order
	calls  atomic.Int32
	// hook, when set, may write its own response for call number n
	// (1-based) and return true.
	// Set it with setHook: tests swap it while earlier handlers may still
	// be running.
	hook atomic.Pointer[hookFunc]
	// reverse returns data in reverse order (indices still correct).
	reverse bool
}

type hookFunc = func(n int, w http.ResponseWriter, r *http.Request, in []string) bool

func (f *fakeServer) setHook(h hookFunc) { f.hook.Store(&h) }

func fakeVector(text string, dim int) []float32 {
	v := make([]float32, dim)
	for j := range v {
		v[j] = float32(len(text) + j + 1)
	}
	return v
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(f.calls.Add(1))
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"bad route `+r.Method+" "+r.URL.Path+`"}}`, http.StatusNotFound)
		return
	}
	if f.key != "" && r.Header.Get("Authorization") != "Bearer "+f.key {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"invalid api key","type":"invalid_request_error"}}`))
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	if h := f.hook.Load(); h != nil && (*h)(n, w, r, req.Input) {
		return
	}
	f.mu.Lock()
	f.inputs = append(f.inputs, req.Input)
	f.mu.Unlock()
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, len(req.Input))
	for i, s := range req.Input {
		data[i] = item{"embedding", i, fakeVector(s, f.dim)}
	}
	if f.reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
}

func newFake(t *testing.T, dim int) (*fakeServer, *httptest.Server) {
	f := &fakeServer{dim: dim}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func newHTTP(t *testing.T, o HTTPOptions) *HTTP {
	t.Helper()
	if o.Model == "" {
		o.Model = "test-model"
	}
	if o.RetryBackoff == 0 {
		o.RetryBackoff = time.Millisecond // keep tests fast
	}
	e, err := NewHTTP(o)
	if err != nil {
		t.Fatalf("NewHTTP: %v", err)
	}
	return e
}

func checkVec(t *testing.T, got []float32, text string, dim int) {
	t.Helper()
	want := fakeVector(text, dim)
	Normalize(want)
	if len(got) != dim {
		t.Fatalf("%q: len %d want %d", text, len(got), dim)
	}
	for j := range want {
		if math.Abs(float64(got[j]-want[j])) > 1e-6 {
			t.Fatalf("%q: component %d = %v want %v", text, j, got[j], want[j])
		}
	}
}

func TestHTTPBatchingAuthOrder(t *testing.T) {
	f, srv := newFake(t, 8)
	f.key = "sekret"
	f.reverse = true
	e := newHTTP(t, HTTPOptions{BaseURL: srv.URL, APIKey: "sekret", Dim: 8, BatchSize: 2})
	if e.Name() != "http/test-model/8" || e.Dim() != 8 {
		t.Fatalf("Name %q Dim %d", e.Name(), e.Dim())
	}
	texts := []string{"a", "bb", "  ", "ccc", "dddd", "eeeee"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("got %d vectors", len(vs))
	}
	for i, s := range texts {
		if strings.TrimSpace(s) == "" {
			if !isEmptyVector(vs[i]) {
				t.Fatalf("blank text %d: want EmptyVector", i)
			}
			continue
		}
		checkVec(t, vs[i], s, 8)
	}
	// The blank text is not sent; 5 texts in batches of 2 = 3 requests.
	want := [][]string{{"a", "bb"}, {"ccc", "dddd"}, {"eeeee"}}
	if len(f.inputs) != len(want) {
		t.Fatalf("requests %v, want %v", f.inputs, want)
	}
	for i := range want {
		if strings.Join(f.inputs[i], ",") != strings.Join(want[i], ",") {
			t.Fatalf("request %d = %v, want %v", i, f.inputs[i], want[i])
		}
	}

	// Wrong key: 401 with the server's message, not retried.
	bad := newHTTP(t, HTTPOptions{BaseURL: srv.URL, APIKey: "wrong", Dim: 8})
	before := f.calls.Load()
	_, err = bad.Embed(context.Background(), []string{"x"})
	var se *StatusError
	if !errors.Is(err, ErrHTTPStatus) || !errors.As(err, &se) || se.StatusCode != 401 || !strings.Contains(err.Error(), "invalid api key") {
		t.Fatalf("err = %v", err)
	}
	if got := f.calls.Load() - before; got != 1 {
		t.Fatalf("401 attempted %d times, want 1", got)
	}
}

func TestHTTPEmptyInput(t *testing.T) {
	f, srv := newFake(t, 4)
	e := newHTTP(t, HTTPOptions{BaseURL: srv.URL, Dim: 4})
	vs, err := e.Embed(context.Background(), nil)
	if err != nil || len(vs) != 0 {
		t.Fatalf("vs %v err %v", vs, err)
	}
	vs, err = e.Embed(context.Background(), []string{"", " \n"})
	if err != nil || len(vs) != 2 || !isEmptyVector(vs[0]) || !isEmptyVector(vs[1]) {
		t.Fatalf("vs %v err %v", vs, err)
	}
	if f.calls.Load() != 0 {
		t.Fatalf("blank-only input made %d requests", f.calls.Load())
	}
}

func TestHTTPBaseURLForms(t *testing.T) {
	_, srv := newFake(t, 4)
	for _, base := range []string{srv.URL, srv.URL + "/", srv.URL + "/v1", srv.URL + "/v1/", srv.URL + "/v1/embeddings"} {
		e := newHTTP(t, HTTPOptions{BaseURL: base, Dim: 4})
		if _, err := e.Embed(context.Background(), []string{"hello"}); err != nil {
			t.Errorf("BaseURL %q: %v", base, err)
		}
	}
	got, err := embeddingsURL("https://gw.example.com/openai/v1/?api-version=2")
	if err != nil || got != "https://gw.example.com/openai/v1/embeddings?api-version=2" {
		t.Fatalf("embeddingsURL = %q, %v", got, err)
	}
}

func TestHTTPOptionsValidate(t *testing.T) {
	ok := HTTPOptions{BaseURL: "http://localhost:11434", Model: "m", Dim: 4}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []HTTPOptions{
		{Model: "m", Dim: 4},
		{BaseURL: "localhost:11434", Model: "m", Dim: 4},
		{BaseURL: "ftp://x", Model: "m", Dim: 4},
		{BaseURL: "http://x", Dim: 4},
		{BaseURL: "http://x", Model: "m"},
		{BaseURL: "http://x", Model: "m", Dim: -1},
		{BaseURL: "http://x", Model: "m", Dim: 4, BatchSize: -1},
		{BaseURL: "http://x", Model: "m", Dim: 4, Timeout: -time.Second},
		{BaseURL: "http://x", Model: "m", Dim: 4, RetryBackoff: -time.Second},
	}
	for i, o := range bad {
		if _, err := NewHTTP(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("case %d: err = %v, want ErrInvalidOptions", i, err)
		}
	}
}

func TestHTTPRetry429ThenSuccess(t *testing.T) {
	f, srv := newFake(t, 4)
	f.setHook(func(n int, w http.ResponseWriter, _ *http.Request, _ []string) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"message":"rate limited"}}`))
			return true
		}
		return false
	})
	e := newHTTP(t, HTTPOptions{BaseURL: srv.URL, Dim: 4})
	vs, err := e.Embed(context.Background(), []string{"abc"})
	if err != nil {
		t.Fatal(err)
	}
	checkVec(t, vs[0], "abc", 4)
	if f.calls.Load() != 2 {
		t.Fatalf("calls = %d, want 2", f.calls.Load())
	}
}

func TestHTTP500ErrorBody(t *testing.T) {
	f, srv := newFake(t, 4)
	f.setHook(func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) bool {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":"model \"nomic\" not found, try pulling it first"}`))
		return true
	})
	e := newHTTP(t, HTTPOptions{BaseURL: srv.URL, Dim: 4, MaxRetries: 3})
	_, err := e.Embed(context.Background(), []string{"abc"})
	var se *StatusError
	if !errors.Is(err, ErrHTTPStatus) || !errors.As(err, &se) || se.StatusCode != 500 {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), `model "nomic" not found`) {
		t.Fatalf("server message missing: %v", err)
	}
	if f.calls.Load() != 4 {
		t.Fatalf("calls = %d, want 1 + 3 retries", f.calls.Load())
	}

	// MaxRetries < 0 disables retries.
	f.calls.Store(0)
	e = newHTTP(t, HTTPOptions{BaseURL: srv.URL, Dim: 4, MaxRetries: -1})
	if _, err := e.Embed(context.Background(), []string{"abc"}); !errors.Is(err, ErrHTTPStatus) || f.calls.Load() != 1 {
		t.Fatalf("err %v calls %d", err, f.calls.Load())
	}
}

func TestHTTPBadResponses(t *testing.T) {
	cases := []struct {
		name string
		body string
		want error
	}{
		{"wrong dimension", `{"data":[{"index":0,"embedding":[1,2,3]}]}`, ErrDimensionMismatch},
		{"too few", `{"data":[]}`, ErrCountMismatch},
		{"too many", `{"data":[{"index":0,"embedding":[1,2,3,4]},{"index":1,"embedding":[1,2,3,4]}]}`, ErrCountMismatch},
		{"index out of range", `{"data":[{"index":5,"embedding":[1,2,3,4]}]}`, ErrCountMismatch},
		{"not json", `<html>oops</html>`, ErrMalformedResponse},
		{"truncated", `{"data":[{"index":0,"embedding":[1,2`, ErrMalformedResponse},
		{"base64 embedding", `{"data":[{"index":0,"embedding":"AACAPw=="}]}`, ErrMalformedResponse},
		{"no data", `{"object":"list"}`, ErrMalformedResponse},
		{"zero vector", `{"data":[{"index":0,"embedding":[0,0,0,0]}]}`, ErrMalformedResponse},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, srv := newFake(t, 4)
			f.setHook(func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) bool {
				_, _ = w.Write([]byte(c.body))
				return true
			})
			e := newHTTP(t, HTTPOptions{BaseURL: srv.URL, Dim: 4})
			_, err := e.Embed(context.Background(), []string{"abc"})
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if f.calls.Load() != 1 {
				t.Fatalf("bad response retried: %d calls", f.calls.Load())
			}
		})
	}

	// Duplicate indices in a 2-text batch.
	f, srv := newFake(t, 4)
	f.setHook(func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) bool {
		_, _ = w.Write([]byte(`{"data":[{"index":1,"embedding":[1,2,3,4]},{"index":1,"embedding":[1,2,3,4]}]}`))
		return true
	})
	e := newHTTP(t, HTTPOptions{BaseURL: srv.URL, Dim: 4})
	if _, err := e.Embed(context.Background(), []string{"a", "b"}); !errors.Is(err, ErrCountMismatch) {
		t.Fatalf("duplicate index: err = %v", err)
	}

	// Missing indices: positional order.
	f.setHook(func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) bool {
		_, _ = w.Write([]byte(`{"data":[{"embedding":[1,0,0,0]},{"embedding":[0,2,0,0]}]}`))
		return true
	})
	vs, err := e.Embed(context.Background(), []string{"a", "b"})
	if err != nil || vs[0][0] != 1 || vs[1][1] != 1 {
		t.Fatalf("positional: %v %v", vs, err)
	}
}

func TestHTTPCancellation(t *testing.T) {
	f, srv := newFake(t, 4)
	f.setHook(func(_ int, _ http.ResponseWriter, r *http.Request, _ []string) bool {
		<-r.Context().Done() // hang until the client gives up
		return true
	})
	e := newHTTP(t, HTTPOptions{BaseURL: srv.URL, Dim: 4})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.Embed(ctx, []string{"abc"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cancellation took %v", d)
	}

	// Cancelled while backing off between retries.
	f.setHook(func(_ int, w http.ResponseWriter, _ *http.Request, _ []string) bool {
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	})
	e = newHTTP(t, HTTPOptions{BaseURL: srv.URL, Dim: 4, RetryBackoff: time.Hour})
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel2)
	start = time.Now()
	_, err = e.Embed(ctx2, []string{"abc"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cancellation during backoff took %v", d)
	}

	// Already cancelled: no request at all.
	f.calls.Store(0)
	if _, err := e.Embed(ctx2, []string{"abc"}); !errors.Is(err, context.Canceled) || f.calls.Load() != 0 {
		t.Fatalf("err %v calls %d", err, f.calls.Load())
	}
}

func TestHTTPPerAttemptTimeoutRetried(t *testing.T) {
	f, srv := newFake(t, 4)
	f.setHook(func(n int, _ http.ResponseWriter, r *http.Request, _ []string) bool {
		if n == 1 {
			<-r.Context().Done() // first attempt hangs past Timeout
			return true
		}
		return false
	})
	e := newHTTP(t, HTTPOptions{BaseURL: srv.URL, Dim: 4, Timeout: 50 * time.Millisecond})
	vs, err := e.Embed(context.Background(), []string{"abc"})
	if err != nil {
		t.Fatal(err)
	}
	checkVec(t, vs[0], "abc", 4)
	if f.calls.Load() != 2 {
		t.Fatalf("calls = %d", f.calls.Load())
	}
}

func TestErrorMessageShapes(t *testing.T) {
	cases := map[string]string{
		`{"error":{"message":"m1","type":"x"}}`:                "m1",
		`{"error":"m2"}`:                                       "m2",
		`{"object":"error","message":"m3","code":400}`:         "m3",
		`{"detail":"m4"}`:                                      "m4",
		`{"detail":[{"loc":["body"],"msg":"field required"}]}`: `[{"loc":["body"],"msg":"field required"}]`,
		"plain text failure\n":                                 "plain text failure",
	}
	for body, want := range cases {
		if got := errorMessage([]byte(body)); got != want {
			t.Errorf("errorMessage(%s) = %q, want %q", body, got, want)
		}
	}
	long := errorMessage([]byte(strings.Repeat("é", 1000)))
	if len(long) > maxErrorMessage+3 || !strings.HasSuffix(long, "...") || strings.ContainsRune(long, '\uFFFD') {
		t.Errorf("long message not cut cleanly: len %d", len(long))
	}
}

func TestParseRetryAfter(t *testing.T) {
	if d := parseRetryAfter("2"); d != 2*time.Second {
		t.Errorf("2 -> %v", d)
	}
	if d := parseRetryAfter("99999"); d != maxRetryWait {
		t.Errorf("capped -> %v", d)
	}
	if d := parseRetryAfter("soon"); d != 0 {
		t.Errorf("garbage -> %v", d)
	}
	if d := parseRetryAfter(time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)); d != 0 {
		t.Errorf("past date -> %v", d)
	}
}

func TestHTTPConcurrent(t *testing.T) {
	_, srv := newFake(t, 4)
	e := newHTTP(t, HTTPOptions{BaseURL: srv.URL, Dim: 4, BatchSize: 3})
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			texts := []string{"a", strings.Repeat("b", g+1), "ccc", "dd", "e"}
			vs, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Error(err)
				return
			}
			for i, s := range texts {
				want := fakeVector(s, 4)
				Normalize(want)
				if math.Abs(float64(vs[i][3]-want[3])) > 1e-6 {
					t.Errorf("goroutine %d text %d: wrong vector", g, i)
				}
			}
		})
	}
	wg.Wait()
}

// FuzzHTTPDecode feeds arbitrary bodies to the response and error-body
// parsers: they must return a vector set or an error, never panic.
func FuzzHTTPDecode(f *testing.F) {
	for _, s := range []string{
		`{"data":[{"index":0,"embedding":[1,2,3,4]},{"index":1,"embedding":[0,0,0,1]}]}`,
		`{"data":[{"index":-1,"embedding":[1,2,3,4]}]}`,
		`{"data":[{"embedding":[1e39,2,3,4]}]}`,
		`{"error":{"message":"x"}}`, `{"detail":[1]}`, `null`, ``, `[]`,
	} {
		f.Add([]byte(s))
	}
	e, err := NewHTTP(HTTPOptions{BaseURL: "http://localhost", Model: "m", Dim: 4})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_ = errorMessage(body)
		vs, err := e.decode(body, 2)
		if err != nil {
			return
		}
		if len(vs) != 2 {
			t.Fatalf("%d vectors without error", len(vs))
		}
		for _, v := range vs {
			if n := norm(v); len(v) != 4 || math.Abs(n-1) > 1e-5 {
				t.Fatalf("bad vector %v", v)
			}
		}
	})
}
