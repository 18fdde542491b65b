package embed

import (
	"context"
	"sync/atomic"
	"time"
)

// Counted wraps an Embedder and counts its calls, failed calls and time,
// for metrics. Safe for concurrent use.
type Counted struct {
	Embedder
	calls, errors atomic.Uint64
	nanos         atomic.Int64
}

// NewCounted wraps e.
func NewCounted(e Embedder) *Counted { return &Counted{Embedder: e} }

// Embed calls the wrapped embedder and counts the call.
func (c *Counted) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	t := time.Now()
	v, err := c.Embedder.Embed(ctx, texts)
	c.nanos.Add(int64(time.Since(t)))
	c.calls.Add(1)
	if err != nil {
		c.errors.Add(1)
	}
	return v, err
}

// Stats returns the calls, the failed calls and the seconds spent so far.
func (c *Counted) Stats() (calls, errors uint64, seconds float64) {
	return c.calls.Load(), c.errors.Load(), float64(c.nanos.Load()) / 1e9
}

// Unwrap returns the counted embedder.
func (c *Counted) Unwrap() Embedder { return c.Embedder }

// Base returns e without the wrappers around it (anything with an
// Unwrap() Embedder method), for callers that look for a concrete
// embedder (the lexical one's fast paths).
func Base(e Embedder) Embedder {
	for {
		u, ok := e.(interface{ Unwrap() Embedder })
		if !ok {
			return e
		}
		e = u.Unwrap()
	}
}
