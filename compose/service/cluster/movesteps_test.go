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
	open := testNATS(t, "open")
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

// TestMoveOrdersOnOneStore: an org moved from s0 to s1, written there,
// moved back to s0 and written again. A store applying both logs ends
// with the org's records of a store that applied s0 alone (the org's
// whole history, as the logs say), whichever of its appliers goes
// first, each to the end: s0's first (it drops the org, takes the copies
// back in and flips; s1's applier then finds each entry in or past), or
// s1's first (it takes the copies in, flips, takes the writes, copies
// them out and drops; s0's applier then finds its history in the copy),
// or both at once.
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
	pub := func(shard string, w service.Write) uint64 {
		t.Helper()
		seq, _, err := Publish(ctx, js, keys, shard, w, PublishOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	step := func(kind, id, from, to string, me moveEntry) service.Write {
		me.ID, me.From, me.To = id, from, to
		raw, err := encodeMove(&me)
		if err != nil {
			t.Fatal(err)
		}
		return service.Write{Kind: kind, Org: org, Move: raw}
	}
	// move copies the org's entries of from's log, as app (applying
	// from) indexed them, to to's log, then fences, flips and drops as a
	// mover does; it returns the flip's sequence.
	move := func(app *service.App, id, from, to string, era uint64) uint64 {
		t.Helper()
		refs, err := dataEntries(ctx, app, js, keys, from, org, era, lastSeq(t, js, from), nil)
		if err != nil || len(refs) == 0 {
			t.Fatalf("the index of %s lists %v (%v)", from, refs, err)
		}
		r, err := newReader(ctx, js, keys, from)
		if err != nil {
			t.Fatal(err)
		}
		prev := era
		for _, ref := range refs {
			e, _, err := readEntry(ctx, r, keys, from, ref)
			if err != nil {
				t.Fatal(err)
			}
			pub(to, step(service.WriteOrgCopy, id, from, to, moveEntry{Copy: &copyEntry{Seq: ref.seq, Prev: prev, Era: era,
				Origin: e.origin, OriginSeq: e.originSeq, At: e.at, Write: e.raw, KeyedID: e.keyedID}}))
			prev = ref.seq
		}
		fence := pub(from, step(service.WriteOrgFence, id, from, to, moveEntry{}))
		flip := pub(to, step(service.WriteOrgFlip, id, from, to, moveEntry{Fence: fence, Last: prev, Era: era}))
		pub(from, step(service.WriteOrgDrop, id, from, to, moveEntry{Flip: flip}))
		return flip
	}
	history := orgHistory(org)
	for _, w := range history[:6] {
		pub("s0", w)
	}
	// s0's store, s1's store: each applies its log alone.
	a0, a1 := openApp(t, t.TempDir()), openApp(t, t.TempDir())
	ap0, _ := startApplierOf(t, a0, js, "s0", nil)
	ap1, _ := startApplierOf(t, a1, js, "s1", nil)
	waitFor(t, ap0, lastSeq(t, js, "s0"))
	move(a0, "mv1", "s0", "s1", 0)
	pub("s0", history[0]) // after the fence: refused
	for _, w := range history[6:9] {
		pub("s1", w)
	}
	waitFor(t, ap1, lastSeq(t, js, "s1"))
	waitFor(t, ap0, lastSeq(t, js, "s0"))
	drop1 := lastSeq(t, js, "s0") - 1
	move(a1, "mv2", "s1", "s0", 0)
	for _, w := range history[9:] {
		pub("s0", w)
	}
	last := map[string]uint64{"s0": lastSeq(t, js, "s0"), "s1": lastSeq(t, js, "s1")}
	waitFor(t, ap0, last["s0"])
	waitFor(t, ap1, last["s1"])
	want := records(t, a0, org)
	if got := records(t, a1, org); !slices.Equal(got, []string{`plan {"features":{}}`}) {
		t.Fatalf("s1's store alone after the org moved back: %s", diff(got, nil))
	}
	if n := len(want); n < 20 {
		t.Fatalf("s0's store alone holds %d records of the org: %v", n, want)
	}
	_ = drop1

	for _, order := range []string{"s0 first", "s1 first", "both"} {
		t.Run(order, func(t *testing.T) {
			app := openApp(t, t.TempDir())
			var aps sync2
			local := func(shard string) *Applier { return aps.get(shard) }
			run := func(shard string) *Applier {
				ap, _ := startApplierOf(t, app, js, shard, local)
				aps.set(shard, ap)
				return ap
			}
			switch order {
			case "s0 first":
				waitFor(t, run("s0"), last["s0"])
				waitFor(t, run("s1"), last["s1"])
			case "s1 first":
				waitFor(t, run("s1"), last["s1"])
				waitFor(t, run("s0"), last["s0"])
			default:
				b, c := run("s0"), run("s1")
				waitFor(t, b, last["s0"])
				waitFor(t, c, last["s1"])
			}
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
	s := testNATS(t, "legacy")
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
