package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kgctx/kgctx/engine/model"
)

// WriterOptions tune a Writer. Zero fields mean defaults.
type WriterOptions struct {
	Org, Project string
	// FlushSize sends a batch once it holds this many triplets (default
	// 64, the reference buffer's).
	FlushSize int
	// FlushInterval sends a non-empty batch at least this often (default
	// 2 s).
	FlushInterval time.Duration
	// QueueSize bounds the triplets waiting to be batched (default 4,096);
	// Enqueue blocks while it is full.
	QueueSize int
	// Backoff is the first retry delay, doubled up to MaxBackoff (defaults
	// 100 ms and 5 s); a Retry-After the server sends is waited instead
	// when longer.
	Backoff, MaxBackoff time.Duration
	// MaxAttempts bounds the sends of one batch (default 10) and
	// MaxRetryTime the time from its first send to its last (default 2
	// minutes): past either, the batch has failed.
	MaxAttempts  int
	MaxRetryTime time.Duration
	// OnError receives a batch that failed: refused for good (any answer
	// but 429, 503 and 504: invalid data, a wrong token, a 500, a 413), or
	// still failing after MaxAttempts or MaxRetryTime; those triplets are
	// counted in Stats.Failed. Only 429, 503, 504 (a cluster's unknown
	// outcome) and transport errors (connection refused or reset, a
	// server restarting) are retried, within those bounds and until
	// Stop's context ends. Every send of a batch carries the same
	// Idempotency-Key, so that a retry of a batch that was stored after
	// all (a 504, a connection lost before the answer) is not applied
	// twice.
	OnError func(err error, batch []model.TripletInput)
}

// WriterStats count a Writer's work.
type WriterStats struct {
	Enqueued, Sent, Batches, Retries, Failed int64
}

// Writer is a buffered, batching writer of triplets (the reference's
// GraphBuffer, without its drops): Start, Enqueue, Stop. Enqueue applies
// back-pressure when the queue is full instead of dropping; batches are
// retried with backoff; Stop flushes everything. Safe for concurrent
// Enqueue calls.
type Writer struct {
	c    *Client
	o    WriterOptions
	q    chan model.TripletInput
	done chan struct{}
	// stopCtx bounds retries once Stop is called.
	stopCtx atomic.Pointer[context.Context]
	startMu sync.Mutex
	started bool
	stopped atomic.Bool
	stats   struct{ enqueued, sent, batches, retries, failed atomic.Int64 }
	runErr  error
}

// ErrStopped: Enqueue after Stop.
var ErrStopped = errors.New("client: writer stopped")

// NewWriter returns a stopped writer for project o.Org/o.Project.
func (c *Client) NewWriter(o WriterOptions) (*Writer, error) {
	if err := model.ValidateID(o.Org); err != nil {
		return nil, fmt.Errorf("client: writer org: %w", err)
	}
	if err := model.ValidateID(o.Project); err != nil {
		return nil, fmt.Errorf("client: writer project: %w", err)
	}
	if o.FlushSize <= 0 {
		o.FlushSize = 64
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 2 * time.Second
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 4096
	}
	if o.Backoff <= 0 {
		o.Backoff = 100 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 10
	}
	if o.MaxRetryTime <= 0 {
		o.MaxRetryTime = 2 * time.Minute
	}
	return &Writer{c: c, o: o, q: make(chan model.TripletInput, o.QueueSize), done: make(chan struct{})}, nil
}

// Start launches the batching goroutine. ctx bounds the writer's life: when
// it ends, pending batches are abandoned (use Stop for a clean end).
func (w *Writer) Start(ctx context.Context) error {
	w.startMu.Lock()
	defer w.startMu.Unlock()
	if w.started {
		return errors.New("client: writer already started")
	}
	w.started = true
	go w.run(ctx)
	return nil
}

// Enqueue adds t to the queue, blocking while it is full (back-pressure)
// until ctx ends. t is validated first (vector lengths excepted: the server
// checks those), so a bad triplet is refused here, not lost later.
func (w *Writer) Enqueue(ctx context.Context, t model.TripletInput) error {
	if w.stopped.Load() {
		return ErrStopped
	}
	if err := model.ValidateTriplet(&t, model.Limits{}, -1); err != nil {
		return fmt.Errorf("client: %w: %w", model.ErrInvalidInput, err)
	}
	select {
	case w.q <- t:
		w.stats.enqueued.Add(1)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stop stops accepting triplets and waits until every enqueued one has been
// sent (retrying through outages) or ctx ends. Call it once, after the last
// Enqueue.
func (w *Writer) Stop(ctx context.Context) error {
	if w.stopped.Swap(true) {
		return ErrStopped
	}
	w.stopCtx.Store(&ctx)
	close(w.q)
	select {
	case <-w.done:
		return w.runErr
	case <-ctx.Done():
		return fmt.Errorf("client: writer stop: %w (%d triplets not sent)", ctx.Err(), w.stats.enqueued.Load()-w.stats.sent.Load()-w.stats.failed.Load())
	}
}

// Stats returns the writer's counters.
func (w *Writer) Stats() WriterStats {
	return WriterStats{Enqueued: w.stats.enqueued.Load(), Sent: w.stats.sent.Load(), Batches: w.stats.batches.Load(),
		Retries: w.stats.retries.Load(), Failed: w.stats.failed.Load()}
}

func (w *Writer) run(ctx context.Context) {
	defer close(w.done)
	batch := make([]model.TripletInput, 0, w.o.FlushSize)
	tick := time.NewTicker(w.o.FlushInterval)
	defer tick.Stop()
	flush := func() bool {
		if len(batch) == 0 {
			return true
		}
		if !w.send(ctx, batch) {
			return false
		}
		batch = batch[:0]
		return true
	}
	for {
		select {
		case t, ok := <-w.q:
			if !ok {
				flush()
				return
			}
			batch = append(batch, t)
			if len(batch) >= w.o.FlushSize && !flush() {
				return
			}
		case <-tick.C:
			if !flush() {
				return
			}
		case <-ctx.Done():
			w.runErr = ctx.Err()
			return
		}
	}
}

// send posts one batch, retrying transient failures with backoff, within
// MaxAttempts and MaxRetryTime. It reports false when the writer must
// give up (its contexts ended).
func (w *Writer) send(ctx context.Context, batch []model.TripletInput) bool {
	delay := w.o.Backoff
	start := time.Now()
	key := NewIdempotencyKey() // one per batch, kept across its retries
	for attempt := 1; ; attempt++ {
		rctx := ctx
		if p := w.stopCtx.Load(); p != nil {
			rctx = *p
		}
		rctx = WithIdempotencyKey(rctx, key)
		_, err := w.c.ImportTriplets(rctx, w.o.Org, w.o.Project, batch)
		if err == nil {
			w.stats.sent.Add(int64(len(batch)))
			w.stats.batches.Add(1)
			return true
		}
		wait := delay
		var ae *APIError
		if errors.As(err, &ae) && ae.RetryAfter > wait {
			wait = ae.RetryAfter
		}
		retry := transient(err)
		if retry && (attempt >= w.o.MaxAttempts || time.Since(start)+wait > w.o.MaxRetryTime) {
			err = fmt.Errorf("client: gave up after %d attempts in %s: %w", attempt, time.Since(start).Round(time.Millisecond), err)
			retry = false
		}
		if !retry {
			w.stats.failed.Add(int64(len(batch)))
			if w.o.OnError != nil {
				w.o.OnError(err, append([]model.TripletInput(nil), batch...))
			}
			return true
		}
		w.stats.retries.Add(1)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			w.runErr = ctx.Err()
			return false
		case <-stopDone(w.stopCtx.Load()):
			w.runErr = (*w.stopCtx.Load()).Err()
			return false
		}
		delay = min(2*delay, w.o.MaxBackoff)
	}
}

func stopDone(p *context.Context) <-chan struct{} {
	if p == nil {
		return nil
	}
	return (*p).Done()
}

// transient reports errors worth retrying: 429 and 503 answers (the
// server asks to come back), 504 (a cluster's write of unknown outcome:
// safe to retry because every send of a batch carries its Idempotency-Key)
// and transport failures (a server restarting). Any other answer, 5xx
// included, is the server's last word.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status == 429 || ae.Status == 503 || ae.Status == 504
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}
