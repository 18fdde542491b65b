package cluster

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
)

// openShard starts a lone NATS server without auth and makes cluster
// "test"'s stream of s0 on it.
func openShard(t *testing.T) jetstream.JetStream {
	t.Helper()
	s := testNATS(t, "v")
	js := jsOf(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := retry(ctx, func(ctx context.Context) error { return EnsureShard(ctx, js, "test", "s0", 1) }); err != nil {
		t.Fatal(err)
	}
	return js
}

// importOf is an import of one triplet a -calls-> b into org_a/p.
func importOf(a, b string) service.Write {
	return service.Write{Kind: service.WriteImport, Org: "org_a", Project: "p",
		Triplets: []engine.TripletInput{{Source: a, Relationship: "calls", Target: b}}}
}

// startApplier runs an applier of s0 on app; stop ends it and waits.
func startApplier(t *testing.T, app *service.App, js jetstream.JetStream, o ApplierOptions) (ap *Applier, stop func()) {
	t.Helper()
	o.Places = everywhere
	ap, err := NewApplier(app, js, testKeys(t, "test"), "s0", o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ap.Run(ctx) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return ap, stop
}

func publishWrite(t *testing.T, js jetstream.JetStream, w service.Write) uint64 {
	t.Helper()
	seq, _, err := Publish(context.Background(), js, testKeys(t, "test"), "s0", w, PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

func waitFor(t *testing.T, ap *Applier, seq uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := ap.WaitFor(ctx, seq); err != nil {
		t.Fatal(err)
	}
}

// waitStalled waits until ap stalls and returns where.
func waitStalled(t *testing.T, ap *Applier) *Stall {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if st := ap.Stalled(); st != nil {
			return st
		}
	}
	t.Fatalf("the applier did not stall (applied %d)", ap.Applied())
	return nil
}

// TestUnversionedWriteApplies: a frozen fixture of the format before
// versions (no Kgctx-Version, the MAC over the stream, id, time, origin,
// part and data alone) applies on this release. A write of this release
// carries its version under the MAC: the header stripped, it is refused.
func TestUnversionedWriteApplies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server")
	}
	js := openShard(t)
	keys := testKeys(t, "test")
	app := openApp(t, t.TempDir())
	var rejected []string
	ap, _ := startApplier(t, app, js, ApplierOptions{Rejected: func(r string) { rejected = append(rejected, r) }})

	// The previous release's Publish, written out.
	stream := StreamName("test", "s0")
	data := mustJSON(t, importOf("old", "fixture"))
	id, at := "0123456789abcdef0123456789abcdef", strconv.FormatInt(time.Now().UnixMilli(), 10)
	h := nats.Header{}
	h.Set(idHeader, id)
	h.Set(atHeader, at)
	h.Set(jetstream.MsgIDHeader, id)
	h.Set(macHeader, base64.StdEncoding.EncodeToString(mac(keys.log, "write", []byte(stream), []byte(id), []byte(at), nil, nil, data)))
	ack, err := js.PublishMsg(context.Background(), &nats.Msg{Subject: Subject("test", "s0"), Header: h, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ap, ack.Sequence)
	if got := snapshot(t, app.Store, engine.Tenant{Org: "org_a", Project: "p"}); len(got) != 1 || ap.Stalled() != nil || len(rejected) > 0 {
		t.Fatalf("the previous release's write: store %v, stalled %v, refused %v", got, ap.Stalled(), rejected)
	}

	// This release's write carries its version, and its MAC covers it:
	// stripped (a replica would take it for version 1), it is refused.
	seq := publishWrite(t, js, importOf("new", "x"))
	waitFor(t, ap, seq)
	st, err := js.Stream(context.Background(), stream)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := st.GetMsg(context.Background(), seq)
	if err != nil {
		t.Fatal(err)
	}
	if raw.Header.Get(versionHeader) != strconv.Itoa(LogVersion) {
		t.Fatalf("Publish wrote version %q, want %d", raw.Header.Get(versionHeader), LogVersion)
	}
	stripped := nats.Header{}
	stripped.Set(idHeader, "stripped")
	stripped.Set(atHeader, strconv.FormatInt(time.Now().UnixMilli(), 10))
	stripped.Set(versionHeader, strconv.Itoa(LogVersion))
	stripped.Set(jetstream.MsgIDHeader, "stripped")
	stripped.Set(macHeader, base64.StdEncoding.EncodeToString(keys.writeMAC(stream, stripped, raw.Data)))
	stripped.Del(versionHeader)
	ack, err = js.PublishMsg(context.Background(), &nats.Msg{Subject: Subject("test", "s0"), Header: stripped, Data: raw.Data})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ap, ack.Sequence)
	if !slices.Equal(rejected, []string{RejectMAC}) {
		t.Fatalf("a write whose version header was stripped: refused %v, want [%s]", rejected, RejectMAC)
	}
	if got := snapshot(t, app.Store, engine.Tenant{Org: "org_a", Project: "p"}); len(got) != 2 {
		t.Fatalf("store %v, want the fixture's and the new write's triplets", got)
	}
}

// TestApplierStallsOnNewerWrite: a write of the cluster with a format
// version above the applier's, or a kind this binary does not know, stops
// the applier at its sequence: not recorded as applied, the writes after
// it not applied, a wait past it answered ErrStalled at once. A restart of
// the same binary stalls there again; one that knows the newer version
// resumes from it and ends with the store of a node that never stalled.
func TestApplierStallsOnNewerWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server")
	}
	ten := engine.Tenant{Org: "org_a", Project: "p"}
	for _, c := range []struct {
		name     string
		header   string // the stalling write's version header
		kind     string
		upgraded int // the known version of the upgraded applier (0: none applies it)
	}{
		{name: "version", header: strconv.Itoa(LogVersion + 1), kind: service.WriteImport, upgraded: LogVersion + 1},
		{name: "unreadable version", header: "v9"},
		{name: "kind", header: strconv.Itoa(LogVersion), kind: "import_v9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			js := openShard(t)
			keys := testKeys(t, "test")
			dir := t.TempDir()
			app := openApp(t, dir)
			var rejected []string
			ap, stop := startApplier(t, app, js, ApplierOptions{Rejected: func(r string) { rejected = append(rejected, r) }})
			first := publishWrite(t, js, importOf("a", "b"))
			waitFor(t, ap, first)
			w := importOf("c", "d")
			if c.kind != "" {
				w.Kind = c.kind
			}
			h := nats.Header{}
			h.Set(versionHeader, c.header)
			at := publishRaw(t, js, "test", "s0", keys, h, mustJSON(t, w))
			last := publishWrite(t, js, importOf("e", "f"))

			st := waitStalled(t, ap)
			if st.Seq != at || st.Shard != "s0" || (c.kind != service.WriteImport && st.Kind != c.kind) {
				t.Fatalf("stalled %+v, want s0 at %d", st, at)
			}
			time.Sleep(300 * time.Millisecond) // the writes after it had time to apply
			rec, err := app.Store.KV().AppliedLog(StreamName("test", "s0"))
			if err != nil {
				t.Fatal(err)
			}
			if seq, _, err := rec.Applied(); err != nil || seq != first || ap.Applied() != first {
				t.Fatalf("recorded %d (%v), applier at %d: want %d, the write before the stall", seq, err, ap.Applied(), first)
			}
			if got := snapshot(t, app.Store, ten); len(got) != 1 || len(rejected) > 0 {
				t.Fatalf("store %v, refused %v: want the write before the stall alone, nothing refused", got, rejected)
			}
			wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			began := time.Now()
			err = ap.WaitFor(wctx, last)
			cancel()
			if !errors.Is(err, ErrStalled) || !errors.Is(err, ErrUnavailable) || time.Since(began) > time.Second {
				t.Fatalf("a wait past the stall: %v after %s, want ErrStalled at once", err, time.Since(began))
			}

			// The same binary again: stalled at the same write.
			stop()
			ap, stop = startApplier(t, app, js, ApplierOptions{})
			if st := waitStalled(t, ap); st.Seq != at {
				t.Fatalf("restarted: stalled at %d, want %d", st.Seq, at)
			}
			if c.upgraded == 0 {
				return
			}
			stop()
			ap, _ = startApplier(t, app, js, ApplierOptions{KnownVersion: c.upgraded})
			waitFor(t, ap, last)
			never := openApp(t, t.TempDir())
			ref, _ := startApplier(t, never, js, ApplierOptions{KnownVersion: c.upgraded})
			waitFor(t, ref, last)
			got, want := snapshot(t, app.Store, ten), snapshot(t, never.Store, ten)
			if ap.Stalled() != nil || len(got) != 3 || !slices.Equal(got, want) {
				t.Fatalf("upgraded: stalled %v, store %v, want %v (a node that never stalled)", ap.Stalled(), got, want)
			}
		})
	}
}

// TestNodeReportsStall: a node whose applier stalls on a shard says so in
// its status, stops offering the shard, refuses writes to it (503, nothing
// published) and answers a wait past the stall 503 naming it.
func TestNodeReportsStall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster node")
	}
	n, js := loneNode(t)
	ctx := context.Background()
	res, err := n.Write(ctx, importOf("a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	h := nats.Header{}
	h.Set(versionHeader, strconv.Itoa(LogVersion+1))
	at := publishRaw(t, js, "c1", "s0", testKeys(t, "c1"), h, mustJSON(t, importOf("c", "d")))
	var st Status
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end) && len(st.Stalled) == 0; time.Sleep(20 * time.Millisecond) {
		st = n.Status()
	}
	if len(st.Stalled) != 1 || st.Stalled[0].Shard != "s0" || st.Stalled[0].Seq != at || st.Stalled[0].Version != LogVersion+1 ||
		slices.Contains(st.Serving, "s0") || st.Applied["s0"] != res.Seq {
		t.Fatalf("status %+v: want s0 stalled at %d, not served, applied %d", st, at, res.Seq)
	}
	if _, err := n.Write(ctx, importOf("e", "f")); !errors.Is(err, ErrStalled) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a write to the stalled shard: %v, want ErrStalled (503)", err)
	}
	if err := n.WaitApplied(ctx, fmt.Sprintf("s0:%d", at)); !errors.Is(err, ErrStalled) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a wait for the stalled position: %v, want ErrStalled (503)", err)
	}
	if err := n.WaitApplied(ctx, fmt.Sprintf("s0:%d", res.Seq)); err != nil {
		t.Fatalf("a wait for a position before the stall: %v", err)
	}
	if urls, err := n.Route(ctx, "org_a"); err != nil || len(urls) != 0 {
		t.Fatalf("route of a stalled shard no other node serves: %v %v, want served here (stale)", urls, err)
	}
}

// TestWritesInTheOldestMembersVersion: during a rolling upgrade a node
// publishes in the log version of the oldest live node, so that the nodes
// not yet upgraded apply every write: with a member of a release before
// versions alive (its record has no logVersion), writes go out without
// versionHeader, with the MAC such a release checks, and still when its
// heartbeats stopped for longer than deadAfter without it leaving (a slow
// node would refuse a newer write for good); once it has left, in
// LogVersion.
func TestWritesInTheOldestMembersVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster node")
	}
	n, js := loneNode(t)
	ctx := context.Background()
	keys := testKeys(t, "c1")
	bucket, err := js.KeyValue(ctx, MembersBucket("c1"))
	if err != nil {
		t.Fatal(err)
	}
	// The old release's record: the fields it knew, signed as it signs.
	putOldAt := func(left bool, at time.Time) {
		t.Helper()
		old := struct {
			ID      string   `json:"id"`
			URL     string   `json:"url"`
			Serving []string `json:"serving"`
			At      int64    `json:"at"`
			Left    bool     `json:"left,omitempty"`
		}{ID: "old1", URL: "http://127.0.0.1:1", At: at.UnixMilli(), Left: left}
		b, err := keys.sealRecord(MembersBucket("c1"), "old1", old)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bucket.Put(ctx, "old1", b); err != nil {
			t.Fatal(err)
		}
	}
	putOld := func(left bool) { t.Helper(); putOldAt(left, time.Now()) }
	versionOf := func(seq uint64) string {
		t.Helper()
		st, err := js.Stream(ctx, StreamName("c1", "s0"))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		return raw.Header.Get(versionHeader)
	}
	members := func(want int) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); len(n.Status().Members) != want; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("members %+v, want %d", n.Status().Members, want)
			}
		}
	}
	res, err := n.Write(ctx, importOf("a", "b"))
	if err != nil || versionOf(res.Seq) != strconv.Itoa(LogVersion) {
		t.Fatalf("alone: %v, version %q, want %d", err, versionOf(res.Seq), LogVersion)
	}
	putOld(false)
	members(2)
	res, err = n.Write(ctx, importOf("c", "d"))
	if err != nil || versionOf(res.Seq) != "" {
		t.Fatalf("beside a node of a release before versions: %v, version %q, want none", err, versionOf(res.Seq))
	}
	// Silent past deadAfter but not gone: no longer a live member, yet it
	// may be a slow node that would refuse a newer write for good.
	putOldAt(false, time.Now().Add(-3*deadAfter))
	members(1)
	res, err = n.Write(ctx, importOf("s", "t"))
	if err != nil || versionOf(res.Seq) != "" {
		t.Fatalf("beside a silent node of a release before versions: %v, version %q, want none", err, versionOf(res.Seq))
	}
	putOld(true)
	members(1)
	for end := time.Now().Add(10 * time.Second); n.versionNow() != LogVersion; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the node does not see that the old member left")
		}
	}
	res, err = n.Write(ctx, importOf("e", "f"))
	if err != nil || versionOf(res.Seq) != strconv.Itoa(LogVersion) {
		t.Fatalf("once it left: %v, version %q, want %d", err, versionOf(res.Seq), LogVersion)
	}
	if _, _, err := Publish(ctx, js, keys, "s0", importOf("g", "h"), PublishOptions{Version: LogVersion + 1}); err == nil {
		t.Fatal("Publish in a version this binary does not know: no error")
	}
}

// loneNode starts node n1 of cluster c1 (one shard, s0, one replica) on
// a NATS server of its own, and a JetStream client of that server.
func loneNode(t *testing.T) (*Node, jetstream.JetStream) {
	t.Helper()
	open := testNATS(t, "open")
	n, _ := startNode(t, Config{Cluster: "c1", NodeID: "n1", Replicas: 1, Shards: []string{"s0"}, NATSURL: open.ClientURL()})
	return n, jsOf(t, open)
}
