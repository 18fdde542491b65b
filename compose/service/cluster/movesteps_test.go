package cluster

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
)

// moveWrite is a step of move id of org from s0 to s1, as a write.
func moveWrite(t *testing.T, kind, org string, me moveEntry) service.Write {
	t.Helper()
	me.ID, me.From, me.To = "mv1", "s0", "s1"
	raw, err := encodeMove(&me)
	if err != nil {
		t.Fatal(err)
	}
	return service.Write{Kind: kind, Org: org, Move: raw}
}

// TestForgedMoveSteps: on a NATS that lets anyone publish, a stranger's
// steps of a move (unsigned, or signed with another secret), a move
// record or an override in the placement bucket without the cluster's
// MAC change nothing; the cluster's own key misused (a node's mistake)
// is refused where the step does not belong: a copy to a shard no move
// names, a fence on a shard the org is not on, a copy of another org's
// write. Each refusal is counted; the org's records stay as they were
// and its writes go on.
func TestForgedMoveSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster node")
	}
	open, err := StartNATS(EmbedOptions{Name: "open", StoreDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(open.Shutdown)
	shards := []string{"s0", "s1"}
	n, app := startNode(t, Config{Cluster: "c1", NodeID: "n1", Replicas: 1, Shards: shards, NATSURL: open.ClientURL()})
	ctx := context.Background()
	org := orgOn("s0", shards, "org_f")
	importInto(t, n, org, "F", 3)
	before := records(t, app, org)
	_, js := stranger(t, open.ClientURL())
	keys := testKeys(t, "c1")
	other, _ := NewKeys([]byte("another-secret-of-at-least-32-bytes!!"), "c1")

	w := service.Write{Kind: service.WriteImport, Org: org, Project: "p", Triplets: []engine.TripletInput{{Source: "Forged", Relationship: "calls", Target: "Hub"}}}
	copyOf := func(inner service.Write) service.Write {
		return moveWrite(t, service.WriteOrgCopy, org, moveEntry{Copy: &copyEntry{Seq: 90, Prev: 0, Era: 0, Origin: "s0", OriginSeq: 90,
			At: time.Now(), Write: mustJSON(t, inner)}})
	}
	last := map[string]uint64{}
	pub := func(shard string, k *Keys, w service.Write) {
		last[shard] = max(last[shard], publishRaw(t, js, "c1", shard, k, nats.Header{}, mustJSON(t, w)))
	}
	// A stranger's: unsigned, and signed with another secret.
	pub("s1", nil, copyOf(w))
	pub("s1", other, copyOf(w))
	pub("s0", nil, moveWrite(t, service.WriteOrgFence, org, moveEntry{}))
	pub("s0", other, moveWrite(t, service.WriteOrgDrop, org, moveEntry{Flip: 1}))
	// A move record and an override with a flip, with another secret's
	// MAC: ignored.
	placeKV, err := js.KeyValue(ctx, PlacementBucket("c1"))
	if err != nil {
		t.Fatal(err)
	}
	forged, _ := other.sealRecord(PlacementBucket("c1"), "move."+org, MoveRecord{ID: "mv1", Org: org, From: "s0", To: "s1", Phase: PhaseCopying})
	if _, err := placeKV.Put(ctx, "move."+org, forged); err != nil {
		t.Fatal(err)
	}
	forged, _ = other.sealRecord(PlacementBucket("c1"), "org."+org, overrideRecord{Shard: "s1", Since: 1, On: "s1"})
	if _, err := placeKV.Put(ctx, "org."+org, forged); err != nil {
		t.Fatal(err)
	}
	// Signed with the cluster's key: a copy to s1, which no move of the
	// org names (the forged record does not count), and a fence on s1,
	// where the org is not.
	pub("s1", keys, copyOf(w))
	fence := moveWrite(t, service.WriteOrgFence, org, moveEntry{})
	var me moveEntry
	decodeJSON(t, fence.Move, &me)
	me.From, me.To = "s1", "s0"
	fence.Move = mustJSON(t, me)
	pub("s1", keys, fence)
	for s, q := range last {
		waitApplied(t, n, s, q) // before a move record names s1
	}
	// A move named by a record of the cluster's: a copy of another org's
	// write is refused.
	if _, rev, err := n.place.latestMove(ctx, org); err != nil {
		t.Fatal(err)
	} else if _, err := n.place.putMove(ctx, MoveRecord{ID: "mv1", Org: org, From: "s0", To: "s1", Phase: PhaseAborted, Node: "gone", Beat: 1}, rev); err != nil {
		t.Fatal(err)
	}
	foreign := w
	foreign.Org = "org_other"
	pub("s1", keys, copyOf(foreign))
	for s, q := range last {
		waitApplied(t, n, s, q)
	}

	got := n.Counters()
	for reason, want := range map[string]uint64{RejectMAC: 4, RejectShard: 2, RejectWrite: 1} {
		if got.RejectedWrites[reason] != want {
			t.Errorf("refused for %s: %d, want %d (all: %v)", reason, got.RejectedWrites[reason], want, got.RejectedWrites)
		}
	}
	if got.IgnoredRecords["placement"] < 2 {
		t.Errorf("ignored placement records: %v, want the forged move and override", got.IgnoredRecords)
	}
	if on, seq := n.place.Since(org); on != "" || seq != 0 {
		t.Errorf("a forged override's flip taken: %s:%d", on, seq)
	}
	if s, _, _ := n.Placement(ctx, org); s != "s0" {
		t.Errorf("%s placed on %s after the forgeries", org, s)
	}
	if got := records(t, app, org); !slices.Equal(got, before) {
		t.Errorf("the org's records after the forgeries: %s", diff(got, before))
	}
	if res, err := n.Write(ctx, w); err != nil || res.Shard != "s0" {
		t.Fatalf("a write of the org after the forgeries: %+v %v (not fenced)", res, err)
	}
}

func decodeJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// TestMoveOrdersOnOneStore: a store applying both the source's and the
// target's logs ends with the org's records of a store that never moved,
// whichever of its appliers goes first: the source's first to its drop
// (the target's applier, started after, finds the org's copy removed
// under it and takes it again from its copies), or the target's first to
// its flip (the source's applier then finds its entries taken and keeps
// the copy, which is the target's, at the drop).
func TestMoveOrdersOnOneStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server")
	}
	js := openShard(t)
	ctx := context.Background()
	if err := EnsureShard(ctx, js, "test", "s1", 1); err != nil {
		t.Fatal(err)
	}
	keys := testKeys(t, "test")
	const org = "org_a"
	// The org's history on s0, applied by a store of s0 alone.
	var ws []service.Write
	for i, w := range orgHistory(org) {
		ws = append(ws, w)
		if _, _, err := Publish(ctx, js, keys, "s0", w, PublishOptions{ID: keys.keyedID("x", "y", int64(i))}); err != nil {
			t.Fatal(err)
		}
	}
	src := openApp(t, t.TempDir())
	a0, _ := startApplierOf(t, src, js, "s0", nil)
	seq0 := lastSeq(t, js, "s0")
	waitFor(t, a0, seq0)
	want := records(t, src, org)
	// The move's steps, as a mover publishes them: copies of the
	// entries the index lists, the fence, the flip, the drop.
	refs, err := dataEntries(ctx, src, js, keys, "s0", org, 0, seq0, everywhere)
	if err != nil || len(refs) != len(ws) {
		t.Fatalf("the index lists %d entries (%v), want %d", len(refs), err, len(ws))
	}
	r, err := newReader(ctx, js, keys, "s0")
	if err != nil {
		t.Fatal(err)
	}
	prev := uint64(0)
	for _, ref := range refs {
		e, _, err := readEntry(ctx, r, keys, "s0", ref)
		if err != nil {
			t.Fatal(err)
		}
		c := &copyEntry{Seq: ref.seq, Prev: prev, Origin: e.origin, OriginSeq: e.originSeq, At: e.at, Write: e.raw, KeyedID: e.keyedID}
		if _, _, err := Publish(ctx, js, keys, "s1", moveWrite(t, service.WriteOrgCopy, org, moveEntry{Copy: c}), PublishOptions{}); err != nil {
			t.Fatal(err)
		}
		prev = ref.seq
	}
	fence, _, err := Publish(ctx, js, keys, "s0", moveWrite(t, service.WriteOrgFence, org, moveEntry{}), PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	flip, _, err := Publish(ctx, js, keys, "s1", moveWrite(t, service.WriteOrgFlip, org, moveEntry{Fence: fence, Last: prev}), PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Publish(ctx, js, keys, "s0", moveWrite(t, service.WriteOrgDrop, org, moveEntry{Flip: flip}), PublishOptions{}); err != nil {
		t.Fatal(err)
	}
	// A write of the org published to s0 after the fence is refused there.
	late, _, err := Publish(ctx, js, keys, "s0", ws[0], PublishOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, a0, late)
	if got := records(t, src, org); !slices.Equal(got, []string{`plan {"features":{}}`}) {
		t.Fatalf("the store of s0 alone after the drop: %s", diff(got, nil))
	}

	for _, order := range []string{"source first", "target first"} {
		t.Run(order, func(t *testing.T) {
			app := openApp(t, t.TempDir())
			var aps sync2
			local := func(shard string) *Applier { return aps.get(shard) }
			first, second := "s0", "s1"
			if order == "target first" {
				first, second = "s1", "s0"
			}
			ap1, _ := startApplierOf(t, app, js, first, local)
			aps.set(first, ap1)
			waitFor(t, ap1, map[string]uint64{"s0": late, "s1": flip}[first])
			ap2, _ := startApplierOf(t, app, js, second, local)
			aps.set(second, ap2)
			waitFor(t, ap2, map[string]uint64{"s0": late, "s1": flip}[second])
			if got := records(t, app, org); !slices.Equal(got, want) {
				t.Fatalf("%s: %s", order, diff(got, want))
			}
		})
	}
}

// orgHistory is writes of every kind an org owns records of.
func orgHistory(org string) []service.Write {
	var l writeLoad
	l.org = org
	var out []service.Write
	for i := range 6 {
		out = append(out, l.writes(0, i)...)
	}
	return out
}

// startApplierOf runs an applier of shard on app (cluster "test", every
// org placed and received everywhere) until the test ends.
func startApplierOf(t *testing.T, app *service.App, js jetstream.JetStream, shard string, local func(string) *Applier) (*Applier, func()) {
	t.Helper()
	ap, err := NewApplier(app, js, testKeys(t, "test"), shard, ApplierOptions{Places: everywhere, Receives: everywhere, Local: local})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ap.Run(ctx) }()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return ap, stop
}

func lastSeq(t *testing.T, js jetstream.JetStream, shard string) uint64 {
	t.Helper()
	st, err := js.Stream(context.Background(), StreamName("test", shard))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.LastSeq
}

// sync2 is the appliers of a store by shard, safe for concurrent use.
type sync2 struct {
	mu sync.Mutex
	m  map[string]*Applier
}

func (s *sync2) get(shard string) *Applier {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[shard]
}

func (s *sync2) set(shard string, a *Applier) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*Applier{}
	}
	s.m[shard] = a
}

// TestLegacyEntriesMatchTheIndex: the data entries of an org read from
// the log (as a store of a release before moves, which kept no index,
// must) are those the index of an applier of this release lists: the
// org's writes, not another org's, not a stranger's, not a keyed retry.
func TestLegacyEntriesMatchTheIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server")
	}
	s, err := StartNATS(EmbedOptions{Name: "legacy", StoreDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	js := jsOf(t, s)
	ctx := context.Background()
	// A duplicate window short enough for a retry of a keyed write to be
	// stored twice.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: StreamName("test", "s0"), Subjects: []string{Subject("test", "s0")},
		Storage: jetstream.FileStorage, Duplicates: 100 * time.Millisecond, AllowDirect: true}); err != nil {
		t.Fatal(err)
	}
	keys := testKeys(t, "test")
	retry := keys.keyedID("x", "retried", 0)
	for range 2 {
		if _, _, err := Publish(ctx, js, keys, "s0", importOf("Retried", "Once"), PublishOptions{ID: retry}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	for i, w := range orgHistory("org_a") {
		if _, _, err := Publish(ctx, js, keys, "s0", w, PublishOptions{ID: keys.keyedID("x", "y", int64(i))}); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			other := importOf("other", "org")
			other.Org = "org_b"
			if _, _, err := Publish(ctx, js, keys, "s0", other, PublishOptions{}); err != nil {
				t.Fatal(err)
			}
			publishRaw(t, js, "test", "s0", nil, nats.Header{}, mustJSON(t, w)) // a stranger's
		}
	}
	app := openApp(t, t.TempDir())
	ap, _ := startApplierOf(t, app, js, "s0", nil)
	last := lastSeq(t, js, "s0")
	waitFor(t, ap, last)
	indexed, err := dataEntries(ctx, app, js, keys, "s0", "org_a", 0, last, everywhere)
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := legacyEntries(ctx, js, keys, "s0", "org_a", 0, last, everywhere)
	if err != nil {
		t.Fatal(err)
	}
	if len(indexed) != len(orgHistory("org_a"))+1 || indexed[0].seq != 1 || indexed[1].seq != 3 || !slices.Equal(indexed, legacy) {
		t.Fatalf("the index lists %v, the log read as before moves %v", indexed, legacy)
	}
}
