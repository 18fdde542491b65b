// Package oascheck checks HTTP answers against kgctx's OpenAPI document
// with kin-openapi, so that the document cannot drift from what the
// server sends: the end-to-end tests pass every answer they receive
// through a Checker.
package oascheck

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Checker validates answers against one document.
type Checker struct {
	router routers.Router
	mu     sync.Mutex
	seen   map[string]bool // "METHOD path status" checked
}

// New loads and validates doc (JSON) and builds its router.
func New(doc []byte) (*Checker, error) {
	loader := openapi3.NewLoader()
	d, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("oascheck: load: %w", err)
	}
	if err := d.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("oascheck: the document is not valid OpenAPI: %w", err)
	}
	r, err := gorillamux.NewRouter(d)
	if err != nil {
		return nil, fmt.Errorf("oascheck: router: %w", err)
	}
	return &Checker{router: r, seen: map[string]bool{}}, nil
}

// Check validates one answer (status, header, body) to req. An answer to a
// path the document does not have is an error unless it is 404 or 405 (a
// test asking for a route that does not exist).
func (c *Checker) Check(req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
			return nil
		}
		return fmt.Errorf("%s %s answered %d but the document has no such operation: %v", req.Method, req.URL.Path, status, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s answered %d, which the document does not describe: %v\nbody: %.600s", req.Method, req.URL.Path, status, err, body)
	}
	c.mu.Lock()
	c.seen[fmt.Sprintf("%s %s %d", req.Method, route.Path, status)] = true
	c.mu.Unlock()
	return nil
}

// Seen lists the operations and statuses checked so far.
func (c *Checker) Seen() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]bool, len(c.seen))
	for k := range c.seen {
		out[k] = true
	}
	return out
}

// Transport wraps base (nil: http.DefaultTransport) so that every answer
// it carries is checked; a mismatch fails t.
func (c *Checker) Transport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{c: c, t: t, base: base}
}

type transport struct {
	c    *Checker
	t    testing.TB
	base http.RoundTripper
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := tr.base.RoundTrip(req)
	if err != nil {
		return res, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	if err := tr.c.Check(req, res.StatusCode, res.Header, body); err != nil {
		tr.t.Errorf("openapi: %v", err)
	}
	return res, nil
}
