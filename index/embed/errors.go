package embed

import (
	"errors"
	"fmt"
)

// Sentinel errors. Returned errors wrap them with %w and add detail, so
// test with errors.Is.
var (
	// ErrInvalidOptions reports an options struct that fails Validate.
	ErrInvalidOptions = errors.New("embed: invalid options")

	// ErrDimensionMismatch reports a vector whose length differs from the
	// embedder's expected dimension (for HTTP: the server returned vectors of
	// another model or size than configured).
	ErrDimensionMismatch = errors.New("embed: dimension mismatch")

	// ErrCountMismatch reports a response that does not hold exactly one
	// embedding per input text, or whose indices are out of range or
	// repeated.
	ErrCountMismatch = errors.New("embed: count mismatch")

	// ErrMalformedResponse reports a response body that is not the expected
	// JSON, is too large, or holds an unusable (all-zero) vector.
	ErrMalformedResponse = errors.New("embed: malformed response")

	// ErrHTTPStatus reports a non-2xx response from the embedding server.
	// The wrapping *StatusError carries the status code and the server's
	// message.
	ErrHTTPStatus = errors.New("embed: server returned an error status")

	// ErrTransport reports a failure to reach the server (connection
	// refused, reset, per-request timeout) after all retries.
	ErrTransport = errors.New("embed: transport failure")
)

// StatusError is the error for a non-2xx response. errors.Is(err,
// ErrHTTPStatus) holds for it; use errors.As to read the code.
type StatusError struct {
	StatusCode int
	// Message is the server's error message when the body had one of the
	// usual shapes ({"error":{"message":...}}, {"error":"..."},
	// {"message":...}), else the start of the raw body.
	Message string
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%v: HTTP %d", ErrHTTPStatus, e.StatusCode)
	}
	return fmt.Sprintf("%v: HTTP %d: %s", ErrHTTPStatus, e.StatusCode, e.Message)
}

// Unwrap lets errors.Is(err, ErrHTTPStatus) match.
func (e *StatusError) Unwrap() error { return ErrHTTPStatus }
