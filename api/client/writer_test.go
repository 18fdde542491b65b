package client_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/engine/model"
)

func TestWriterAgainstServer(t *testing.T) {
	url, tok, app, hc := serve(t)
	c, _ := client.New(url, tok, hc)
	w, err := c.NewWriter(client.WriterOptions{Org: "o", Project: "p", FlushSize: 64, FlushInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w.Start(ctx)
	for i := range 1000 {
		if err := w.Enqueue(ctx, model.TripletInput{Source: fmt.Sprintf("S%d", i), Relationship: "calls", Target: "Hub"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Enqueue(ctx, model.TripletInput{Source: " ", Relationship: "calls", Target: "x"}); !errors.Is(err, model.ErrInvalidInput) {
		t.Fatalf("invalid triplet accepted: %v", err)
	}
	// A lone triplet goes out on the timer, without waiting for 64.
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	if st.Sent != 1000 || st.Failed != 0 || st.Batches < 16 {
		t.Fatalf("stats %+v", st)
	}
	if s, _ := app.Store.Stats(model.Tenant{Org: "o", Project: "p"}); s.Triplets != 1000 {
		t.Fatalf("store holds %d triplets", s.Triplets)
	}
	if err := w.Enqueue(ctx, model.TripletInput{Source: "a", Relationship: "r", Target: "b"}); !errors.Is(err, client.ErrStopped) {
		t.Fatalf("enqueue after stop: %v", err)
	}
}

func TestWriterTimerRetriesAndBackPressure(t *testing.T) {
	var mu sync.Mutex
	var got []string
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if n <= 2 {
			code := []int{503, 429}[n-1]
			rw.WriteHeader(code)
			fmt.Fprintf(rw, `{"error": {"code": "busy", "message": "try later"}}`)
			return
		}
		sc := bufio.NewScanner(r.Body)
		k := 0
		mu.Lock()
		for sc.Scan() {
			got = append(got, sc.Text())
			k++
		}
		mu.Unlock()
		fmt.Fprintf(rw, `{"accepted": %d}`, k)
	}))
	defer srv.Close()
	c, _ := client.New(srv.URL, "tok_0123456789abcdef", nil)
	w, _ := c.NewWriter(client.WriterOptions{Org: "o", Project: "p", FlushSize: 64, FlushInterval: 30 * time.Millisecond,
		QueueSize: 2, Backoff: 5 * time.Millisecond})
	ctx := context.Background()
	// Back-pressure: not started, the queue of 2 fills and Enqueue waits
	// for its context instead of dropping.
	w.Enqueue(ctx, model.TripletInput{Source: "a", Relationship: "r", Target: "b"})
	w.Enqueue(ctx, model.TripletInput{Source: "c", Relationship: "r", Target: "d"})
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if err := w.Enqueue(short, model.TripletInput{Source: "e", Relationship: "r", Target: "f"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("full queue: %v", err)
	}
	w.Start(ctx)
	if err := w.Enqueue(ctx, model.TripletInput{Source: "e", Relationship: "r", Target: "f"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the timer flushes, through a 503 and a 429
	mu.Lock()
	n := len(got)
	mu.Unlock()
	if n != 3 {
		t.Fatalf("timer flush sent %d triplets", n)
	}
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Retries != 2 || st.Sent != 3 {
		t.Fatalf("stats %+v", st)
	}
}

func TestWriterPermanentError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.WriteHeader(403)
		fmt.Fprintf(rw, `{"error": {"code": "forbidden", "message": "no"}}`)
	}))
	defer srv.Close()
	c, _ := client.New(srv.URL, "tok_0123456789abcdef", nil)
	var reported atomic.Int32
	w, _ := c.NewWriter(client.WriterOptions{Org: "o", Project: "p", OnError: func(err error, b []model.TripletInput) { reported.Add(int32(len(b))) }})
	ctx := context.Background()
	w.Start(ctx)
	w.Enqueue(ctx, model.TripletInput{Source: "a", Relationship: "r", Target: "b"})
	w.Stop(ctx)
	if st := w.Stats(); st.Failed != 1 || reported.Load() != 1 {
		t.Fatalf("stats %+v, reported %d", st, reported.Load())
	}
}

// TestWriterRetriesBounded: only 429, 503 and transport errors are
// retried, and within MaxAttempts: a batch the server keeps answering 503
// fails after the third attempt; a 500, a 502 or a 413 fails at once,
// never retried.
func TestWriterRetriesBounded(t *testing.T) {
	for _, c := range []struct {
		code, attempts int
	}{{503, 3}, {500, 1}, {502, 1}, {413, 1}} {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			rw.WriteHeader(c.code)
			fmt.Fprintf(rw, `{"error": {"code": "x", "message": "no"}}`)
		}))
		cl, _ := client.New(srv.URL, "tok_0123456789abcdef", nil)
		var failed error
		w, _ := cl.NewWriter(client.WriterOptions{Org: "o", Project: "p", Backoff: time.Millisecond, MaxAttempts: 3,
			OnError: func(err error, b []model.TripletInput) { failed = err }})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		w.Start(ctx)
		w.Enqueue(ctx, model.TripletInput{Source: "a", Relationship: "r", Target: "b"})
		if err := w.Stop(ctx); err != nil {
			t.Fatalf("%d: stop: %v (retried without end?)", c.code, err)
		}
		cancel()
		srv.Close()
		var ae *client.APIError
		if st := w.Stats(); st.Failed != 1 || int(calls.Load()) != c.attempts || !errors.As(failed, &ae) || ae.Status != c.code {
			t.Errorf("%d: %d attempts, stats %+v, error %v; want %d attempts and the batch failed", c.code, calls.Load(), st, failed, c.attempts)
		}
	}
}

// TestWriterRetriesUnknownOutcomeWithItsKey: a batch answered 504
// outcome_unknown (a cluster's write that may have been stored) is
// retried, and every send of one batch carries the same Idempotency-Key,
// another batch another key; a plain call carries the key of its context
// only.
func TestWriterRetriesUnknownOutcomeWithItsKey(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get(client.IdempotencyKeyHeader))
		mu.Unlock()
		n := calls.Add(1)
		if n == 1 || n == 2 {
			rw.WriteHeader([]int{504, 503}[n-1])
			fmt.Fprintf(rw, `{"error": {"code": "outcome_unknown", "message": "may or may not"}}`)
			return
		}
		fmt.Fprintf(rw, `{"accepted": 1}`)
	}))
	defer srv.Close()
	c, _ := client.New(srv.URL, "tok_0123456789abcdef", nil)
	var failed atomic.Int32
	w, _ := c.NewWriter(client.WriterOptions{Org: "o", Project: "p", FlushSize: 1, Backoff: time.Millisecond,
		OnError: func(error, []model.TripletInput) { failed.Add(1) }})
	ctx := context.Background()
	w.Start(ctx)
	for _, s := range []string{"a", "b"} {
		if err := w.Enqueue(ctx, model.TripletInput{Source: s, Relationship: "calls", Target: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); failed.Load() != 0 || st.Sent != 2 || st.Retries != 2 {
		t.Fatalf("stats %+v, %d failed; want both sent after two retries", st, failed.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 4 || keys[0] == "" || keys[1] != keys[0] || keys[2] != keys[0] || keys[3] == keys[0] || keys[3] == "" {
		t.Fatalf("keys sent: %q; want one key for the three sends of the first batch, another for the second", keys)
	}
	keys = nil
	mu.Unlock()
	if _, err := c.ImportTriplets(client.WithIdempotencyKey(ctx, "mine"), "o", "p", []model.TripletInput{{Source: "a", Relationship: "r", Target: "b"}}); err != nil {
		t.Fatal(err)
	}
	c.Stats(client.WithIdempotencyKey(ctx, "mine"), "o", "p") // a read: its answer does not matter here
	mu.Lock()
	if len(keys) != 2 || keys[0] != "mine" || keys[1] != "" {
		t.Fatalf("keys sent: %q; want the context's on the write, none on the read", keys)
	}
}
