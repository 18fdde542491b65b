package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/index"
	"github.com/kgctx/kgctx/index/embed"
	"github.com/kgctx/kgctx/policy"
)

// Error is the JSON error body: {"error": {"code", "message", "lines"?}}.
type Error struct {
	Status  int                `json:"-"`
	Code    string             `json:"code" oas:"required"`
	Message string             `json:"message" oas:"required"`
	Lines   []engine.LineError `json:"lines,omitempty"`
	// RetryAfter, when positive, is sent as the Retry-After header
	// (seconds): the failure is expected to pass.
	RetryAfter int `json:"-"`
}

func (e *Error) Error() string { return e.Message }

// retry sets RetryAfter.
func (e *Error) retry(seconds int) *Error { e.RetryAfter = seconds; return e }

type errorBody struct {
	Error *Error `json:"error" oas:"required"`
}

func apiErr(status int, code, format string, a ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, a...)}
}

// statusTable is the one place where package errors become HTTP statuses.
var statusTable = []struct {
	err    error
	status int
	code   string
}{
	{engine.ErrNotFound, http.StatusNotFound, "not_found"},
	{engine.ErrInvalidInput, http.StatusUnprocessableEntity, "invalid_input"},
	{engine.ErrDimensionMismatch, http.StatusUnprocessableEntity, "dimension_mismatch"},
	{engine.ErrForbidden, http.StatusForbidden, "forbidden"},
	{auth.ErrUnauthorized, http.StatusUnauthorized, "unauthorized"},
	{engine.ErrTooLarge, http.StatusRequestEntityTooLarge, "too_large"},
	{engine.ErrConflict, http.StatusConflict, "conflict"},
	{engine.ErrClosed, http.StatusServiceUnavailable, "shutting_down"},
	{compose.ErrInvalidRequest, http.StatusBadRequest, "invalid_field"},
	{service.ErrBadSequence, http.StatusBadRequest, "invalid_field"},
	{index.ErrQueryTooLong, http.StatusBadRequest, "invalid_field"},
	{policy.ErrInvalidPolicy, http.StatusUnprocessableEntity, "invalid_policy"},
}

// toError maps any error to the API error it answers with.
func toError(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok {
			msg = m
		}
		code := map[int]string{404: "not_found", 405: "method_not_allowed", 413: "body_too_large", 401: "unauthorized", 400: "bad_request"}[he.Code]
		if code == "" {
			code = "http_error"
		}
		return &Error{Status: he.Code, Code: code, Message: msg}
	}
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return apiErr(http.StatusRequestEntityTooLarge, "body_too_large", "the request body is over the limit of %d bytes", mb.Limit)
	}
	if errors.Is(err, service.ErrOutcomeUnknown) {
		// Not a refusal: the write may have been stored. No Retry-After:
		// a retry is safe only with the same Idempotency-Key.
		return &Error{Status: http.StatusGatewayTimeout, Code: "outcome_unknown", Message: Message(err)}
	}
	// Only a read of the body is 408; every other timeout (checked after
	// the embedder's own failures, which keep their answer) is the
	// service's, whether the request's deadline or a dependency's.
	if isBodyTimeout(err) {
		return apiErr(http.StatusRequestTimeout, "request_timeout", "the request body did not arrive within the server's read timeout")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		// The request's own deadline (Config.RequestTimeout): an import
		// that ran past it stopped and undid what it had written.
		return &Error{Status: http.StatusServiceUnavailable, Code: "timeout", Message: Message(err)}
	}
	if e := embedderError(err); e != nil {
		return e
	}
	if isNetTimeout(err) {
		// A dependency's call (an embedder, a proxied request) ran past
		// its own deadline, the body having arrived.
		return &Error{Status: http.StatusServiceUnavailable, Code: "timeout", Message: Message(err)}
	}
	var ve *engine.ValidationError
	if errors.As(err, &ve) {
		return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid_triplets", Message: ve.Error(), Lines: ve.Lines}
	}
	if errors.Is(err, service.ErrUnavailable) {
		return &Error{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: Message(err), RetryAfter: 1}
	}
	for _, row := range statusTable {
		if errors.Is(err, row.err) {
			return &Error{Status: row.status, Code: row.code, Message: Message(err)}
		}
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
}

func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	e := toError(err)
	if e.Status >= 500 {
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	if e.RetryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	if e.Status == http.StatusRequestTimeout || unreadBody(c.Request()) {
		// What is left of the body is not read: the connection cannot
		// carry another request.
		c.Response().Header().Set("Connection", "close")
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(e.Status)
		return
	}
	_ = c.JSON(e.Status, errorBody{Error: e})
}

// embedderRetryAfter is the Retry-After of an embedder outage, in seconds.
const embedderRetryAfter = 10

// embedderError maps a failure of the configured embedder (an HTTP
// embedding server that is down, overloaded or answering nonsense) to 503:
// the request was fine, the service cannot serve it now. Transient
// failures (unreachable, 5xx, 429) carry a Retry-After.
func embedderError(err error) *Error {
	var se *embed.StatusError
	transient := errors.Is(err, embed.ErrTransport) || (errors.As(err, &se) && (se.StatusCode >= 500 || se.StatusCode == http.StatusTooManyRequests))
	switch {
	case transient:
		return &Error{Status: http.StatusServiceUnavailable, Code: "embedder_unavailable", RetryAfter: embedderRetryAfter,
			Message: "the embedding server cannot be reached or is failing; nothing was written, retry later: " + Message(err)}
	case errors.Is(err, embed.ErrHTTPStatus), errors.Is(err, embed.ErrMalformedResponse), errors.Is(err, embed.ErrCountMismatch),
		errors.Is(err, embed.ErrDimensionMismatch):
		return &Error{Status: http.StatusServiceUnavailable, Code: "embedder_error",
			Message: "the embedding server answered unusably (check --embed-url, --embed-model, --embed-dim); nothing was written: " + Message(err)}
	}
	return nil
}

// isNetTimeout reports a network call that ran past its deadline: the
// server's read timeout on a stalled body, but also a dependency's own
// (an embedder, a proxied request), and a context's deadline, which is a
// net.Error too.
func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// bodyTimeout is a read of the request body that ran past the server's
// read timeout (trackedBody marks it): the one timeout answered 408.
type bodyTimeout struct{ err error }

func (e *bodyTimeout) Error() string { return e.err.Error() }
func (e *bodyTimeout) Unwrap() error { return e.err }

// bodyReadError marks err, returned by a read of the request body, as the
// body's when it is a timeout.
func bodyReadError(err error) error {
	if err != nil && isNetTimeout(err) {
		return &bodyTimeout{err: err}
	}
	return err
}

// isBodyTimeout reports a body that did not arrive within the server's
// read timeout.
func isBodyTimeout(err error) bool {
	var bt *bodyTimeout
	return errors.As(err, &bt)
}

// unreadBody reports whether the request may still have body bytes on
// the wire: answering without reading them, the server must close the
// connection rather than wait for them (a client that never sends them
// would otherwise hold it open).
func unreadBody(r *http.Request) bool {
	return r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody && !bodyDone(r)
}

// pkgPrefix matches a Go package's prefix on an error ("engine: ",
// "tripletio: "), at the start of the text or of a wrapped part.
var pkgPrefix = regexp.MustCompile(`(^|: )(engine|compose|tripletio|auth|policy|cluster|index|service|embed|hnsw|text|fuse|traverse|configstore|delivery|sessionlog|codeindex|client|mcp|api): `)

// sentinelPrefix matches the text of a sentinel error that the API's code
// already says ("invalid input: ", "conflict: "), at the start of the
// text or of a wrapped part.
var sentinelPrefix = regexp.MustCompile(`(^|: )(invalid input|invalid request|conflict|forbidden|batch too large): `)

// Message is err's text for a person: without the Go package prefixes
// and sentinel phrases that wrapping adds ("engine: invalid input:
// observationIds: ..." is "observationIds: ..."; "engine: not found: node
// x" is "node x not found"). The CLI prints errors through it too.
func Message(err error) string {
	if err == nil {
		return ""
	}
	m := pkgPrefix.ReplaceAllString(err.Error(), "$1")
	m = pkgPrefix.ReplaceAllString(m, "$1") // "engine: engine: " nests
	m = sentinelPrefix.ReplaceAllString(m, "$1")
	if rest, ok := strings.CutPrefix(m, "not found: "); ok {
		m = rest + " not found"
	}
	return m
}
