package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
)

// observations lists the contents of org_a/p's observations, sorted.
func observations(t *testing.T, app *service.App) []string {
	t.Helper()
	page, err := app.Store.ListObservations(engine.Tenant{Org: "org_a", Project: "p"}, engine.ObservationQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range page.Observations {
		out = append(out, o.Content)
	}
	slices.Sort(out)
	return out
}

// ackLosingShard makes the stream of shard s0 of cluster "test" behind a
// stand-in for JetStream on the write subject: it stores every message
// it gets in the stream (through another subject, headers and message id
// kept) and answers with the stream's acknowledgement, or, while drop
// is above zero, answers nothing (the acknowledgement lost: the writer
// waits in vain for a write that is stored). dup is the stream's
// duplicate window.
func ackLosingShard(t *testing.T, js jetstream.JetStream, dup time.Duration, drop *atomic.Int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: StreamName("test", "s0"), Subjects: []string{"stored.s0"},
		Storage: jetstream.FileStorage, Duplicates: dup, AllowDirect: true})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := js.Conn().Subscribe(Subject("test", "s0"), func(m *nats.Msg) {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		ack, err := js.PublishMsg(sctx, &nats.Msg{Subject: "stored.s0", Header: m.Header, Data: m.Data})
		if err != nil {
			t.Errorf("stand-in: store: %v", err)
			return
		}
		if drop.Add(-1) >= 0 {
			return
		}
		b, _ := json.Marshal(ack)
		m.Respond(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
}

// runApplier runs an applier of s0 on app until the test ends.
func runApplier(t *testing.T, app *service.App, js jetstream.JetStream, origin string) *Applier {
	t.Helper()
	ap, err := NewApplier(app, js, testKeys(t, "test"), "s0", ApplierOptions{Places: everywhere, Origin: origin})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ap.Run(ctx) }()
	t.Cleanup(func() { stop(); <-done })
	return ap
}

// TestAckLostIsUnknownAndRetryAppliesOnce: a write stored whose
// acknowledgement never comes is an unknown outcome (ErrOutcomeUnknown,
// not a refusal): it is applied. Its retry with the same idempotency key
// is de-duplicated by JetStream (the same message id) and answered with
// the first result, marked a replay: applied once.
func TestAckLostIsUnknownAndRetryAppliesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server")
	}
	srv := testNATS(t, "ack")
	js := jsOf(t, srv)
	var drop atomic.Int32
	drop.Store(1)
	ackLosingShard(t, js, dupWindow, &drop)
	keys := testKeys(t, "test")
	app := openApp(t, t.TempDir())
	ap := runApplier(t, app, js, "o1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	w := service.Write{Kind: service.WriteObservations, Org: "org_a", Project: "p", Observations: []engine.ObservationInput{{Content: "once"}}}
	o := PublishOptions{Origin: "o1", ID: keys.keyedID("org_a\x00agent", "key-1", 0)}
	pctx, pcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, _, err := Publish(pctx, js, keys, "s0", w, o)
	pcancel()
	if !errors.Is(err, ErrOutcomeUnknown) || errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		// (The API answers an error wrapping ctx's deadline as the
		// request's own timeout, a 503.)
		t.Fatalf("a write whose acknowledgement did not come: %v, want ErrOutcomeUnknown alone", err)
	}
	if err := ap.WaitFor(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := observations(t, app); !slices.Equal(got, []string{"once"}) {
		t.Fatalf("after the lost ack: %v, want the write applied", got)
	}
	seq, dup, err := Publish(ctx, js, keys, "s0", w, o)
	if err != nil || !dup || seq != 1 {
		t.Fatalf("retry with the same key: seq %d, duplicate %v, %v; want JetStream's duplicate of #1", seq, dup, err)
	}
	res, err := ap.Replayed(ctx, seq, o.ID)
	if err != nil || !res.Replayed || len(res.IDs) != 1 || !strings.HasPrefix(res.IDs[0], "obs_") {
		t.Fatalf("the retry's answer: %+v %v, want the first result's id, marked a replay", res, err)
	}
	if got := observations(t, app); !slices.Equal(got, []string{"once"}) {
		t.Fatalf("after the retry: %v, want the write applied once", got)
	}
	// Another key is another write.
	o2 := PublishOptions{Origin: "o1", ID: keys.keyedID("org_a\x00agent", "key-2", 0)}
	if seq, dup, err := Publish(ctx, js, keys, "s0", w, o2); err != nil || dup || seq != 2 {
		t.Fatalf("another key: seq %d, duplicate %v, %v", seq, dup, err)
	}
	if res, err := ap.Result(ctx, 2); err != nil || res.Replayed {
		t.Fatalf("another key's write: %+v %v", res, err)
	}
	if got := observations(t, app); len(got) != 2 {
		t.Fatalf("another key's write: %v, want two observations", got)
	}
}

// TestKeyedRetryAfterDupWindowAppliesOnce: a retry with the same key
// after JetStream's duplicate window is stored again, under a new
// sequence, and every replica skips it (it remembers the keyed writes it
// applied): one observation on a replica that applied the first, and on
// one that reads the whole log afresh; the retry is answered with the
// first result. A random id is applied every time.
func TestKeyedRetryAfterDupWindowAppliesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server")
	}
	srv := testNATS(t, "dup")
	js := jsOf(t, srv)
	var drop atomic.Int32
	const window = 200 * time.Millisecond
	ackLosingShard(t, js, window, &drop)
	keys := testKeys(t, "test")
	app := openApp(t, t.TempDir())
	ap := runApplier(t, app, js, "o1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	w := service.Write{Kind: service.WriteObservations, Org: "org_a", Project: "p", Observations: []engine.ObservationInput{{Content: "once"}}}
	o := PublishOptions{Origin: "o1", ID: keys.keyedID("org_a\x00agent", "key-1", 0)}
	seq, _, err := Publish(ctx, js, keys, "s0", w, o)
	if err != nil {
		t.Fatal(err)
	}
	first, err := ap.Result(ctx, seq)
	if err != nil || len(first.IDs) != 1 {
		t.Fatalf("first write: %+v %v", first, err)
	}
	time.Sleep(3 * window) // JetStream forgets the message id
	seq2, dup, err := Publish(ctx, js, keys, "s0", w, o)
	if err != nil || dup || seq2 == seq {
		t.Fatalf("retry after the window: seq %d (first %d), duplicate %v, %v; want a new message", seq2, seq, dup, err)
	}
	res, err := ap.Result(ctx, seq2)
	if err != nil || !res.Replayed || !slices.Equal(res.IDs, first.IDs) {
		t.Fatalf("the late retry's answer: %+v %v, want the first result %v marked a replay", res, err, first.IDs)
	}
	if got := observations(t, app); !slices.Equal(got, []string{"once"}) {
		t.Fatalf("after the late retry: %v, want the write applied once", got)
	}
	// Without a key, the same write twice is two writes.
	if _, _, err := Publish(ctx, js, keys, "s0", w, PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	last, _, err := Publish(ctx, js, keys, "s0", w, PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ap.WaitFor(ctx, last); err != nil {
		t.Fatal(err)
	}
	if got := observations(t, app); len(got) != 3 {
		t.Fatalf("two writes without a key: %v, want three observations in all", got)
	}
	// A replica reading the log from its start decides alike.
	fresh := openApp(t, t.TempDir())
	ap2 := runApplier(t, fresh, js, "")
	if err := ap2.WaitFor(ctx, last); err != nil {
		t.Fatal(err)
	}
	if got, want := observations(t, fresh), observations(t, app); !slices.Equal(got, want) {
		t.Fatalf("a fresh replica holds %v, the first %v", got, want)
	}
}

// TestNodeWriteKeyed: a node's writes carry the request's idempotency
// key: a request sent again with it is answered with the first result,
// marked a replay, and applied once; each write of a request has its
// own (a request's second write is not taken for its first); another
// caller's equal key is another write.
func TestNodeWriteKeyed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster node")
	}
	n, app := startNode(t, Config{Cluster: "c1", NodeID: "n1", Replicas: 1, Shards: []string{"s0"},
		Embed: &EmbedOptions{Name: "n1", StoreDir: t.TempDir(), Port: -1}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	obs := func(content string) service.Write {
		return service.Write{Kind: service.WriteObservations, Org: "org_a", Project: "p", Observations: []engine.ObservationInput{{Content: content}}}
	}
	request := func(scope, key string) (ids []string, replayed bool) {
		t.Helper()
		rctx, idem := service.WithIdempotencyKey(ctx, scope, key)
		for _, c := range []string{"first", "second"} {
			res, err := app.Write(rctx, obs(c))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.IDs...)
		}
		return ids, idem.Replayed()
	}
	app.Writer = n
	first, replayed := request("org_a\x00agent", "key-1")
	if replayed || len(first) != 2 {
		t.Fatalf("first request: %v, replayed %v", first, replayed)
	}
	again, replayed := request("org_a\x00agent", "key-1")
	if !replayed || !slices.Equal(again, first) {
		t.Fatalf("the request again: %v (replayed %v), want the first answer %v", again, replayed, first)
	}
	if got := observations(t, app); !slices.Equal(got, []string{"first", "second"}) {
		t.Fatalf("after the request twice: %v", got)
	}
	if other, replayed := request("org_b\x00agent", "key-1"); replayed || slices.Equal(other, first) {
		t.Fatalf("another caller's equal key: %v (replayed %v)", other, replayed)
	}
	if got := observations(t, app); len(got) != 4 {
		t.Fatalf("another caller's request: %v, want four observations", got)
	}
}
