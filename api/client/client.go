package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kgctx/kgctx/engine/model"
	"github.com/kgctx/kgctx/engine/tripletio"
)

// Client talks to one kgctx server with one bearer token. Against a
// cluster it reads its own writes on any node: it keeps the log positions
// its writes were answered with (SequenceHeader) and sends them with every
// request.
type Client struct {
	base  string
	token string
	http  *http.Client
	pos   model.Positions
}

// SequenceHeader carries a cluster's log positions ("SHARD:SEQ,...").
const SequenceHeader = "X-Kgctx-Sequence"

// IdempotencyKeyHeader names a write request: the server applies it at
// most once whatever the retries (in a cluster).
const IdempotencyKeyHeader = "Idempotency-Key"

type idempotencyKey struct{}

// WithIdempotencyKey returns a context whose write requests carry key as
// their Idempotency-Key: a call retried with it (a 503, a 504
// outcome_unknown, a lost connection) is applied at most once. Use one
// key per call, kept across that call's retries; NewIdempotencyKey makes
// one. Writer does this for its batches.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKey{}, key)
}

// NewIdempotencyKey is a random key (128 bits, hex).
func NewIdempotencyKey() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// New returns a client of the server at baseURL (e.g.
// "http://127.0.0.1:7070") using token. A nil httpClient means one with a
// 10-minute timeout (imports can be large).
func New(baseURL, token string, httpClient *http.Client) (*Client, error) {
	if token == "" {
		return nil, ErrNoToken
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q: want http(s)://host[:port]", baseURL)
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 10 * time.Minute}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, http: httpClient}, nil
}

// do sends a request and decodes a JSON answer into out (if not nil). A
// non-2xx answer is an *APIError.
func (c *Client) do(ctx context.Context, method, path, ctype string, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if p := c.pos.String(); p != "" {
		req.Header.Set(SequenceHeader, p)
	}
	if k, ok := ctx.Value(idempotencyKey{}).(string); ok && method != http.MethodGet && method != http.MethodHead {
		req.Header.Set(IdempotencyKeyHeader, k)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		c.pos.Add(resp.Header.Get(SequenceHeader)) // a malformed one is ignored
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error *APIError `json:"error"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Error == nil {
			e.Error = &APIError{Code: "http_error", Message: strings.TrimSpace(string(raw))}
		}
		e.Error.Status = resp.StatusCode
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			e.Error.RetryAfter = time.Duration(min(secs, 3600)) * time.Second
		}
		return e.Error
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// GetJSON sends GET path (query already encoded in it) and decodes the
// JSON answer into out; a non-2xx answer is an *APIError.
func (c *Client) GetJSON(ctx context.Context, path string, out any) error {
	return c.do(ctx, http.MethodGet, path, "", nil, out)
}

// PostJSON sends in as JSON to path and decodes the JSON answer into out
// (if not nil); a non-2xx answer is an *APIError.
func (c *Client) PostJSON(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, path, "application/json", bytes.NewReader(body), out)
}

// DeleteJSON sends DELETE path with in as a JSON body (nil: no body); a
// non-2xx answer is an *APIError.
func (c *Client) DeleteJSON(ctx context.Context, path string, in any) error {
	if in == nil {
		return c.do(ctx, http.MethodDelete, path, "", nil, nil)
	}
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, path, "application/json", bytes.NewReader(body), nil)
}

// Whoami is the caller's token as the server knows it.
type Whoami struct {
	ID         string   `json:"id"` // the token's public id
	OrgID      string   `json:"orgId"`
	AgentID    string   `json:"agentId"`
	Role       string   `json:"role"`
	ProjectIDs []string `json:"projectIds"`
}

// Whoami asks the server what the client's token is.
func (c *Client) Whoami(ctx context.Context) (Whoami, error) {
	var w Whoami
	err := c.GetJSON(ctx, "/v1/whoami", &w)
	return w, err
}

// TokenInfo is a token as GET /v1/admin/tokens lists it: its public id
// and grant, never the secret.
type TokenInfo struct {
	ID         string     `json:"id"`
	OrgID      string     `json:"orgId"`
	AgentID    string     `json:"agentId"`
	Role       string     `json:"role"`
	ProjectIDs []string   `json:"projectIds"`
	Origin     string     `json:"origin,omitempty"`
	CreatedAt  time.Time  `json:"createdAt"`
	LastUsedAt *time.Time `json:"lastUsedAt"`
}

// Tokens lists the tokens the client's token may see (an operator's:
// every org's, or org's when it is not ""; an org admin's: its org's).
func (c *Client) Tokens(ctx context.Context, org string) ([]TokenInfo, error) {
	var out struct {
		Tokens []TokenInfo `json:"tokens"`
	}
	path := "/v1/admin/tokens"
	if org != "" {
		path += "?orgId=" + url.QueryEscape(org)
	}
	err := c.GetJSON(ctx, path, &out)
	return out.Tokens, err
}

// RevokeToken revokes the token whose public id is id.
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/admin/tokens/"+url.PathEscape(id), "", nil, nil)
}

// ProjectPath is the path of a project's routes.
func ProjectPath(org, project string) string { return projectPath(org, project) }

func projectPath(org, project string) string {
	return "/v1/orgs/" + url.PathEscape(org) + "/projects/" + url.PathEscape(project)
}

// ImportNDJSON posts one NDJSON body of triplets (all or nothing).
func (c *Client) ImportNDJSON(ctx context.Context, org, project string, body []byte) (model.ImportResult, error) {
	var res model.ImportResult
	err := c.do(ctx, http.MethodPost, projectPath(org, project)+"/triplets", "application/x-ndjson", bytes.NewReader(body), &res)
	return res, err
}

// ImportTriplets posts triplets as one NDJSON body (all or nothing).
func (c *Client) ImportTriplets(ctx context.Context, org, project string, ts []model.TripletInput) (model.ImportResult, error) {
	body, err := EncodeNDJSON(nil, ts)
	if err != nil {
		return model.ImportResult{}, err
	}
	return c.ImportNDJSON(ctx, org, project, body)
}

// EncodeNDJSON appends ts to dst as NDJSON.
func EncodeNDJSON(dst []byte, ts []model.TripletInput) ([]byte, error) {
	var err error
	for i := range ts {
		if dst, err = tripletio.AppendNDJSON(dst, &ts[i]); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// Stats returns a project's graph statistics.
func (c *Client) Stats(ctx context.Context, org, project string) (model.Stats, error) {
	var st model.Stats
	err := c.do(ctx, http.MethodGet, projectPath(org, project)+"/graph/stats", "", nil, &st)
	return st, err
}
