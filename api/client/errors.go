package client

import (
	"errors"
	"fmt"
	"time"

	"github.com/kgctx/kgctx/engine/model"
)

// ErrNoToken: a client was built without a bearer token.
var ErrNoToken = errors.New("client: no bearer token")

// APIError is a non-2xx answer: the status and the server's error body.
type APIError struct {
	Status  int               `json:"-"`
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Lines   []model.LineError `json:"lines,omitempty"`
	// RetryAfter is the answer's Retry-After (0: none), a 429's or a
	// 503's: when to try again.
	RetryAfter time.Duration `json:"-"`
}

func (e *APIError) Error() string {
	return fmt.Sprintf("client: server answered %d %s: %s", e.Status, e.Code, e.Message)
}
