package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// HTTP embedder defaults and limits.
const (
	DefaultHTTPBatchSize    = 64
	DefaultHTTPTimeout      = 30 * time.Second
	DefaultHTTPMaxRetries   = 2
	DefaultHTTPRetryBackoff = 250 * time.Millisecond
	MaxHTTPDim              = 1 << 16

	// maxRetryWait caps one wait between attempts, including a server's
	// Retry-After: an embedding call sits on a request path, and a server
	// asking for minutes is better reported than waited for.
	maxRetryWait = 30 * time.Second
	// maxErrorMessage bounds how much of an error body ends up in an error.
	maxErrorMessage = 512
)

// HTTPOptions configures NewHTTP. Zero values mean the documented default;
// BaseURL, Model and Dim are required.
type HTTPOptions struct {
	// BaseURL is the server root, with or without a trailing slash and with
	// or without a trailing "/v1" ("http://localhost:11434",
	// "https://api.openai.com/v1/"). Requests go to <root>/v1/embeddings.
	// A query string is kept (some gateways need one).
	BaseURL string
	// Model is sent as "model" in every request.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <APIKey>".
	APIKey string
	// Dim is the expected vector length. Every returned vector is checked
	// against it: a misconfigured model must fail loudly, not poison the
	// index with vectors of another space.
	Dim int
	// BatchSize is the maximum number of texts per request (default 64).
	BatchSize int
	// Timeout bounds one HTTP attempt (default 30 s); the caller's context
	// bounds the whole call including retries.
	Timeout time.Duration
	// Client is the HTTP client (default: a client with no overall timeout,
	// since Timeout is applied per attempt through the request context).
	Client *http.Client
	// MaxRetries is how many times a request is retried after a 429, a
	// retryable 5xx or a transport failure (default 2; negative: never).
	MaxRetries int
	// RetryBackoff is the wait before the first retry (default 250 ms); it
	// doubles per retry, with jitter, and a Retry-After header overrides it.
	RetryBackoff time.Duration
}

// Validate reports whether the options are usable.
func (o HTTPOptions) Validate() error {
	if _, err := embeddingsURL(o.BaseURL); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(o.Model) == "":
		return fmt.Errorf("%w: http Model is required", ErrInvalidOptions)
	case o.Dim <= 0 || o.Dim > MaxHTTPDim:
		return fmt.Errorf("%w: http Dim %d outside [1, %d] (Dim is required)", ErrInvalidOptions, o.Dim, MaxHTTPDim)
	case o.BatchSize < 0:
		return fmt.Errorf("%w: http BatchSize %d is negative", ErrInvalidOptions, o.BatchSize)
	case o.Timeout < 0:
		return fmt.Errorf("%w: http Timeout %v is negative", ErrInvalidOptions, o.Timeout)
	case o.RetryBackoff < 0:
		return fmt.Errorf("%w: http RetryBackoff %v is negative", ErrInvalidOptions, o.RetryBackoff)
	}
	return nil
}

// embeddingsURL turns a BaseURL into the /v1/embeddings endpoint.
func embeddingsURL(base string) (string, error) {
	base = strings.TrimSpace(base)
	if base == "" {
		return "", fmt.Errorf("%w: http BaseURL is required", ErrInvalidOptions)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("%w: http BaseURL: %v", ErrInvalidOptions, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: http BaseURL %q must be an absolute http(s) URL", ErrInvalidOptions, base)
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/v1/embeddings"):
		// Already the full endpoint: accept it rather than append twice.
	case strings.HasSuffix(p, "/v1"):
		p += "/embeddings"
	default:
		p += "/v1/embeddings"
	}
	u.Path, u.RawPath, u.Fragment = p, "", ""
	return u.String(), nil
}

// HTTP embeds through an OpenAI-compatible /v1/embeddings endpoint.
// Immutable; safe for concurrent use.
type HTTP struct {
	endpoint   string
	model      string
	auth       string // full Authorization header value, or ""
	dim        int
	batch      int
	timeout    time.Duration
	client     *http.Client
	maxRetries int
	backoff    time.Duration
	name       string
	maxBody    int64
}

var _ Embedder = (*HTTP)(nil)

// NewHTTP returns an HTTP embedder. It does not contact the server.
func NewHTTP(opts HTTPOptions) (*HTTP, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	endpoint, _ := embeddingsURL(opts.BaseURL) // validated above
	e := &HTTP{
		endpoint:   endpoint,
		model:      opts.Model,
		dim:        opts.Dim,
		batch:      opts.BatchSize,
		timeout:    opts.Timeout,
		client:     opts.Client,
		maxRetries: opts.MaxRetries,
		backoff:    opts.RetryBackoff,
		name:       "http/" + opts.Model + "/" + strconv.Itoa(opts.Dim),
	}
	if opts.APIKey != "" {
		e.auth = "Bearer " + opts.APIKey
	}
	if e.batch == 0 {
		e.batch = DefaultHTTPBatchSize
	}
	if e.timeout == 0 {
		e.timeout = DefaultHTTPTimeout
	}
	if e.client == nil {
		e.client = &http.Client{}
	}
	switch {
	case e.maxRetries == 0:
		e.maxRetries = DefaultHTTPMaxRetries
	case e.maxRetries < 0:
		e.maxRetries = 0
	}
	if e.backoff == 0 {
		e.backoff = DefaultHTTPRetryBackoff
	}
	// A float in JSON takes at most ~25 bytes; allow that per component
	// plus slack for the envelope (usage, object, model fields).
	e.maxBody = 1<<20 + int64(e.batch)*int64(e.dim)*32
	return e, nil
}

// Dim returns the configured vector length.
func (e *HTTP) Dim() int { return e.dim }

// Name returns "http/<model>/<dim>".
func (e *HTTP) Name() string { return e.name }

// Embed sends the texts in batches of BatchSize, in order, one request at a
// time, and returns one unit vector per text. Whitespace-only texts are not
// sent (OpenAI-compatible servers reject empty input) and yield EmptyVector.
// Server vectors are L2-normalised here: not every model normalises.
func (e *HTTP) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embed: http: %w", err)
	}
	out := make([][]float32, len(texts))
	pending := make([]int, 0, len(texts)) // indices of texts to send
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			out[i] = make([]float32, e.dim)
			EmptyVector(out[i])
			continue
		}
		pending = append(pending, i)
	}
	batch := make([]string, 0, min(e.batch, len(pending)))
	for start := 0; start < len(pending); start += e.batch {
		idx := pending[start:min(start+e.batch, len(pending))]
		batch = batch[:0]
		for _, i := range idx {
			batch = append(batch, texts[i])
		}
		vecs, err := e.embedBatch(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("%w (texts %d..%d of %d)", err, idx[0], idx[len(idx)-1], len(texts))
		}
		for j, i := range idx {
			out[i] = vecs[j]
		}
	}
	return out, nil
}

// attemptError is one failed attempt and whether it may be retried.
type attemptError struct {
	err        error
	retry      bool
	retryAfter time.Duration // server's Retry-After, 0 if none
}

// embedBatch performs one request with retries.
func (e *HTTP) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingRequest{Model: e.model, Input: texts})
	if err != nil {
		// Marshalling a struct of strings cannot fail.
		panic("BUG: embed: marshal request: " + err.Error())
	}
	for attempt := 0; ; attempt++ {
		vecs, aerr := e.attempt(ctx, body, len(texts))
		if aerr == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("embed: http: %w (last error: %v)", ctx.Err(), aerr.err)
		}
		if !aerr.retry || attempt >= e.maxRetries {
			if attempt > 0 {
				return nil, fmt.Errorf("%w (after %d attempts)", aerr.err, attempt+1)
			}
			return nil, aerr.err
		}
		t := time.NewTimer(e.retryWait(attempt, aerr.retryAfter))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("embed: http: %w (while backing off after: %v)", ctx.Err(), aerr.err)
		case <-t.C:
		}
	}
}

// retryWait is the wait before retry number attempt+1: the server's
// Retry-After when given, else exponential backoff with jitter in [50%,
// 100%] so that concurrent callers rejected together do not retry in
// lockstep. Jitter uses the runtime-seeded global source; it affects only
// timing, never results.
func (e *HTTP) retryWait(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, maxRetryWait)
	}
	d := e.backoff << min(attempt, 16)
	if d <= 0 || d > maxRetryWait {
		d = maxRetryWait
	}
	return d/2 + rand.N(d/2+1)
}

// attempt performs one HTTP round trip.
func (e *HTTP) attempt(ctx context.Context, body []byte, n int) ([][]float32, *attemptError) {
	actx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		// The URL was validated at construction.
		panic("BUG: embed: new request: " + err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if e.auth != "" {
		req.Header.Set("Authorization", e.auth)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// Includes the per-attempt timeout; the caller checks ctx first,
		// so a cancelled caller is never retried.
		return nil, &attemptError{err: fmt.Errorf("%w: %v", ErrTransport, err), retry: true}
	}
	defer func() {
		// Drain a little so the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
	}()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, e.maxBody+1))
	if err != nil {
		return nil, &attemptError{err: fmt.Errorf("%w: reading response: %v", ErrTransport, err), retry: true}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		code := resp.StatusCode
		return nil, &attemptError{
			err: &StatusError{StatusCode: code, Message: errorMessage(raw)},
			// 429 and transient server states; 501/505 will not change.
			retry:      code == http.StatusTooManyRequests || (code >= 500 && code != http.StatusNotImplemented && code != http.StatusHTTPVersionNotSupported),
			retryAfter: parseRetryAfter(resp.Header.Get("Retry-After")),
		}
	}
	if int64(len(raw)) > e.maxBody {
		return nil, &attemptError{err: fmt.Errorf("%w: response larger than %d bytes", ErrMalformedResponse, e.maxBody)}
	}
	vecs, err := e.decode(raw, n)
	if err != nil {
		return nil, &attemptError{err: err}
	}
	return vecs, nil
}

type embeddingRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type embeddingResponse struct {
	Data []struct {
		// Index is a pointer to tell a missing index (some servers omit
		// it, then order is positional) from index 0.
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Error json.RawMessage `json:"error"`
}

// decode parses and checks a 2xx body holding n embeddings.
func (e *HTTP) decode(raw []byte, n int) ([][]float32, error) {
	var r embeddingResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	if r.Data == nil {
		if len(r.Error) > 0 && string(r.Error) != "null" {
			return nil, fmt.Errorf("%w: no data, error: %s", ErrMalformedResponse, errorMessage(raw))
		}
		return nil, fmt.Errorf("%w: no \"data\" field", ErrMalformedResponse)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("%w: sent %d texts, got %d embeddings", ErrCountMismatch, n, len(r.Data))
	}
	out := make([][]float32, n)
	for pos, d := range r.Data {
		i := pos
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= n {
			return nil, fmt.Errorf("%w: embedding index %d outside [0, %d)", ErrCountMismatch, i, n)
		}
		if out[i] != nil {
			return nil, fmt.Errorf("%w: embedding index %d repeated", ErrCountMismatch, i)
		}
		if len(d.Embedding) != e.dim {
			return nil, fmt.Errorf("%w: embedding %d has %d components, want %d (model %q)", ErrDimensionMismatch, i, len(d.Embedding), e.dim, e.model)
		}
		if !Normalize(d.Embedding) {
			return nil, fmt.Errorf("%w: embedding %d is the zero vector", ErrMalformedResponse, i)
		}
		out[i] = d.Embedding
	}
	// n distinct indices in [0, n): every slot is filled.
	return out, nil
}

// errorMessage extracts the server's message from an error body in the
// shapes OpenAI ({"error":{"message"}}), Ollama ({"error":"..."}), vLLM
// ({"message"}) and FastAPI ({"detail"}) use, else returns the raw body.
func errorMessage(raw []byte) string {
	var shape struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(raw, &shape) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(shape.Error, &nested) == nil && nested.Message != "":
			msg = nested.Message
		case json.Unmarshal(shape.Error, &s) == nil && s != "":
			msg = s
		case shape.Message != "":
			msg = shape.Message
		case json.Unmarshal(shape.Detail, &s) == nil && s != "":
			msg = s
		case len(shape.Detail) > 0:
			msg = string(shape.Detail)
		}
	}
	if msg == "" {
		msg = string(bytes.TrimSpace(raw))
	}
	if len(msg) > maxErrorMessage {
		// Cut on a rune boundary so the message stays valid UTF-8.
		cut := maxErrorMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	return strings.ToValidUTF8(msg, "\uFFFD")
}

// parseRetryAfter reads a Retry-After header in seconds or HTTP-date form.
func parseRetryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil {
		if s <= 0 {
			return 0
		}
		return min(time.Duration(s)*time.Second, maxRetryWait)
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := time.Until(t); d > 0 {
			return min(d, maxRetryWait)
		}
	}
	return 0
}
