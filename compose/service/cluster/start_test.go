package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestStartWaitsForNATS: a node started before its NATS server is up
// retries connecting (and every later step) and joins once the server
// comes; one given another secret than the server's fails at once, not
// after the start-up timeout.
func TestStartWaitsForNATS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server and a node")
	}
	port := freePort(t)
	keys := testKeys(t, "late")
	cfg := Config{Cluster: "late", NodeID: "n1", Replicas: 1, Shards: []string{"s0"}, Secret: testSecret,
		NATSURL: fmt.Sprintf("nats://127.0.0.1:%d", port), Advertise: "http://n1.invalid", Logger: slog.New(slog.DiscardHandler)}
	app := openApp(t, t.TempDir())
	type started struct {
		n   *Node
		err error
	}
	done := make(chan started, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		n, err := Start(ctx, app, cfg)
		done <- started{n, err}
	}()
	select {
	case s := <-done:
		if s.n != nil {
			s.n.Close()
		}
		t.Fatalf("Start returned before NATS was up: %v", s.err)
	case <-time.After(1500 * time.Millisecond):
	}
	srv, err := StartNATS(EmbedOptions{Name: "late", StoreDir: filepath.Join(t.TempDir(), "nats"), Port: port, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	s := <-done
	if s.err != nil {
		t.Fatalf("a node started before its NATS: %v", s.err)
	}
	t.Cleanup(func() { s.n.Close() })
	if st := s.n.Status(); !slices.Contains(st.Serving, GlobalShard) {
		t.Fatalf("joined but not serving: %+v", st)
	}
	// Another secret: refused by the server, at once.
	other := cfg
	other.NodeID, other.Secret = "n2", []byte(strings.Repeat("x", 40))
	other.StartTimeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	if _, err := Start(ctx, openApp(t, t.TempDir()), other); !errors.Is(err, ErrSecretMismatch) {
		t.Fatalf("another secret: %v, want ErrSecretMismatch", err)
	} else if time.Since(began) >= other.StartTimeout {
		t.Fatalf("another secret was retried until the start-up timeout: %v", err)
	}
}

// TestStartRetryKinds: a start-up step failing with NATS's transient
// errors (no response from a stream, no responders, a timeout) is tried
// again until it succeeds; one failing for good (another secret, a
// refused authorization, one marked permanent) is tried once; one
// failing until the bound says which step.
func TestStartRetryKinds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, transient := range []error{jetstream.ErrNoStreamResponse, context.DeadlineExceeded,
		fmt.Errorf("cluster: placement bucket: %w", nats.ErrTimeout)} {
		calls := 0
		err := retryLog(ctx, nil, "step", func(context.Context) error {
			if calls++; calls < 3 {
				return transient
			}
			return nil
		})
		if err != nil || calls != 3 {
			t.Errorf("%v: %v after %d calls, want success on the third", transient, err, calls)
		}
	}
	lone := fmt.Errorf("cluster: placement bucket: %w", &jetstream.APIError{Code: 500, ErrorCode: jsReplicasNotSupported,
		Description: "replicas > 1 not supported in non-clustered mode"})
	for _, perm := range []error{fmt.Errorf("%w: marker", ErrSecretMismatch), nats.ErrAuthorization, permanent(errors.New("bad URL")), lone} {
		calls := 0
		err := retryLog(ctx, nil, "step", func(context.Context) error { calls++; return perm })
		if err == nil || calls != 1 {
			t.Errorf("%v: %v after %d calls, want a failure on the first", perm, err, calls)
		}
		var p *permanentError
		if errors.As(err, &p) {
			t.Errorf("%v: the permanent mark leaked into %v", perm, err)
		}
		if perm == lone && !strings.Contains(err.Error(), "--replicas 1") {
			t.Errorf("a lone NATS server's refusal says nothing of the fix: %v", err)
		}
	}
	bctx, bcancel := context.WithTimeout(ctx, 600*time.Millisecond)
	defer bcancel()
	err := retryLog(bctx, nil, "write the member record", func(context.Context) error { return jetstream.ErrNoStreamResponse })
	if !errors.Is(err, jetstream.ErrNoStreamResponse) || !strings.Contains(err.Error(), "write the member record") {
		t.Fatalf("a step failing past the bound: %v", err)
	}
}
