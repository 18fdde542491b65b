package main

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/engine"
)

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestWriterSurvivesServerKill streams triplets through the client's
// buffered writer while the server is killed with SIGKILL and restarted on
// the same address: every triplet Enqueue accepted ends up in the store,
// once.
func TestWriterSurvivesServerKill(t *testing.T) {
	data := t.TempDir()
	addr := freeAddr(t)
	admin := "kgx_e2e_admin_token_0123456789abcd"
	s := startServe(t, data, "--admin-token", admin, "--addr", addr)
	imp := s.token("org_w", "importer")
	c, err := client.New(s.url, imp, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.NewWriter(client.WriterOptions{Org: "org_w", Project: "p", FlushSize: 64, FlushInterval: 20 * time.Millisecond,
		Backoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w.Start(ctx)
	const n = 6000
	var accepted atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			if err := w.Enqueue(ctx, engine.TripletInput{Source: fmt.Sprintf("Svc%d", i), Relationship: "calls", Target: fmt.Sprintf("Dep%d", i%97)}); err != nil {
				t.Errorf("enqueue %d: %v", i, err)
				return
			}
			accepted.Add(1)
			if i%500 == 0 {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}()
	for w.Stats().Sent < n/4 {
		time.Sleep(5 * time.Millisecond)
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
	time.Sleep(300 * time.Millisecond) // the writer keeps retrying meanwhile
	s2 := startServe(t, data, "--admin-token", admin, "--addr", addr)
	<-done
	stopCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := w.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	st := w.Stats()
	t.Logf("writer: %+v", st)
	if st.Retries == 0 {
		t.Fatal("the kill caused no retry: the test did not test anything")
	}
	c2, _ := client.New(s2.url, imp, nil)
	stats, err := c2.Stats(ctx, "org_w", "p")
	if err != nil {
		t.Fatal(err)
	}
	if int64(stats.Triplets) != accepted.Load() || stats.Triplets != n || stats.Nodes != n+97 {
		t.Fatalf("store holds %d triplets and %d nodes for %d accepted", stats.Triplets, stats.Nodes, accepted.Load())
	}
}
