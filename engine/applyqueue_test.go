package engine

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/dgraph-io/badger/v4"
)

var errFlaky = errors.New("flaky indexer: injected failure")

// flakyIndexer is a docIndexer whose next fails Applies fail before they
// change anything.
type flakyIndexer struct {
	*docIndexer
	mu    sync.Mutex
	fails int // Applies left to fail
	calls int
}

func newFlaky(fails int) *flakyIndexer {
	return &flakyIndexer{docIndexer: newDocIndexer(), fails: fails}
}

func (f *flakyIndexer) Apply(ctx context.Context, cs *ChangeSet) error {
	f.mu.Lock()
	f.calls++
	fail := f.fails > 0
	if fail {
		f.fails--
	}
	f.mu.Unlock()
	if fail {
		return errFlaky
	}
	return f.docIndexer.Apply(ctx, cs)
}

func (f *flakyIndexer) setFails(n int) {
	f.mu.Lock()
	f.fails = n
	f.mu.Unlock()
}

func (f *flakyIndexer) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// openFlaky opens a store with ix attached and retries without waits
// worth the name.
func openFlaky(t *testing.T, ix *flakyIndexer) (*Store, string) {
	t.Helper()
	s, dir := openTest(t, nil)
	s.applyBackoff = time.Microsecond
	if err := s.Attach(context.Background(), ix); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// nodeNames is the set of names ix holds.
func nodeNames(s *Store, ix *docIndexer) map[string]bool {
	docs, _ := ix.state()
	out := map[string]bool{}
	s.View(func(v *View) error {
		for id := range docs {
			out[v.NodeName(id)] = true
		}
		return nil
	})
	return out
}

// A failure that passes is retried: the write returns once the index has
// it, and nothing is reported.
func TestApplyRetriesAFailedSet(t *testing.T) {
	ix := newFlaky(applyAttempts - 1)
	s, _ := openFlaky(t, ix)
	mustImport(t, s, tenA, tr("A", "calls", "B"))
	if got := nodeNames(s, ix.docIndexer); !got["A"] || !got["B"] {
		t.Fatalf("after %d failed Applies the index holds %v, want A and B", applyAttempts-1, got)
	}
	if n := ix.Calls(); n != applyAttempts {
		t.Fatalf("Apply called %d times, want %d", n, applyAttempts)
	}
	if err := s.IndexFailure(); err != nil {
		t.Fatalf("IndexFailure after a retry that worked: %v", err)
	}
}

// A set the indexer fails to apply, retries included, is the index's
// failure, not the write's: the write returns nil (it is stored), while
// IndexFailure and Sync report the indexer, never as current; the next set
// catches the indexer up from the change log, and the reports stop.
func TestIndexBehindIsReportedThenCaughtUp(t *testing.T) {
	ix := newFlaky(applyAttempts)
	s, _ := openFlaky(t, ix)
	res, err := s.Import(context.Background(), tenA, []TripletInput{tr("A", "calls", "B")}, ImportOptions{})
	if err != nil {
		t.Fatalf("import whose set the indexer failed: %v, want nil: the write is stored", err)
	}
	if res.Accepted != 1 || res.NodesCreated != 2 {
		t.Fatalf("the write is stored, its result says %+v", res)
	}
	if got := nodeNames(s, ix.docIndexer); len(got) != 0 {
		t.Fatalf("the index failed the set and holds %v", got)
	}
	err = s.IndexFailure()
	var ie *IndexError
	if !errors.Is(err, ErrIndexBehind) || !errors.Is(err, errFlaky) || !errors.As(err, &ie) || ie.Seq != res.Seq || ie.Indexer != "docs" {
		t.Fatalf("IndexFailure: %v (%+v), want an IndexError for seq %d", err, ie, res.Seq)
	}
	if err := s.Sync(context.Background()); !errors.Is(err, ErrIndexBehind) {
		t.Fatalf("Sync with an indexer behind: %v", err)
	}
	// The indexer works again: the next set brings it the missed one too.
	mustImport(t, s, tenA, tr("C", "calls", "D"))
	if got := nodeNames(s, ix.docIndexer); len(got) != 4 || !got["A"] || !got["B"] || !got["C"] || !got["D"] {
		t.Fatalf("after catching up the index holds %v, want A B C D", got)
	}
	if err := s.Sync(context.Background()); err != nil {
		t.Fatalf("Sync after catching up: %v", err)
	}
	if err := s.IndexFailure(); err != nil {
		t.Fatalf("IndexFailure after catching up: %v", err)
	}
}

// An indexer that keeps failing neither blocks writers (more sets than the
// queue holds go through, and a write that waits returns nil) nor loses a
// set: Sync and IndexFailure report it, the change log keeps what it
// missed, and the next open replays it.
func TestIndexBehindReplaysAtOpen(t *testing.T) {
	ix := newFlaky(0)
	s, dir := openFlaky(t, ix)
	mustImport(t, s, tenA, tr("A", "calls", "B"))
	ix.setFails(1 << 30)
	names := []string{"C", "D", "E", "F", "G", "H"} // more than applyQueueDepth
	for _, n := range names {
		if _, err := s.Import(context.Background(), tenA, []TripletInput{tr("A", "calls", n)}, ImportOptions{NoWait: true}); err != nil {
			t.Fatalf("import %s: %v", n, err)
		}
	}
	if err := s.Sync(context.Background()); !errors.Is(err, ErrIndexBehind) {
		t.Fatalf("Sync with an indexer failing: %v", err)
	}
	if _, err := s.Import(context.Background(), tenA, []TripletInput{tr("A", "calls", "I")}, ImportOptions{}); err != nil {
		t.Fatalf("a write waiting for a failing indexer: %v, want nil: it is stored", err)
	}
	if err := s.IndexFailure(); !errors.Is(err, ErrIndexBehind) {
		t.Fatalf("IndexFailure with an indexer failing: %v", err)
	}
	wm := ix.Watermark()
	docs, _ := ix.state()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, dir, nil)
	ix2 := newDocIndexer()
	ix2.docs, ix2.wm = docs, wm
	if err := s.Attach(context.Background(), ix2); err != nil {
		t.Fatal(err)
	}
	got := nodeNames(s, ix2)
	for _, n := range append(names, "A", "B", "I") {
		if !got[n] {
			t.Fatalf("after the replay the index misses %s: %v", n, got)
		}
	}
}

// An import that fails midway and is undone while an indexer misses the
// undo fails with its own error (the undo's wait does not fail for the
// index); the index failure is reported (Sync), and the next set brings
// the indexer the undo it missed.
func TestImportUndoneWhileIndexBehind(t *testing.T) {
	ix := newFlaky(0)
	s, _ := openFlaky(t, ix)
	s.chunks = chunking{triplets: 10, nodes: 8}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.hooks.chunk = func(_ Tenant, done int) {
		if done >= 20 {
			ix.setFails(1 << 30)
			cancel()
		}
	}
	var in []TripletInput
	for i := range 100 {
		in = append(in, tr("S"+strconv.Itoa(i), "calls", "T"+strconv.Itoa(i%9)))
	}
	_, err := s.Import(ctx, tenA, in, ImportOptions{})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrIndexBehind) {
		t.Fatalf("import cancelled midway, its undo missed by the index: %v", err)
	}
	if st, _ := s.Stats(tenA); st.Nodes != 0 {
		t.Fatalf("the undone import left %+v", st)
	}
	if err := s.Sync(context.Background()); !errors.Is(err, ErrIndexBehind) {
		t.Fatalf("Sync with the index behind: %v", err)
	}
	s.hooks.chunk = nil
	ix.setFails(0)
	mustImport(t, s, tenA, tr("A", "calls", "B"))
	if got := nodeNames(s, ix.docIndexer); len(got) != 2 || !got["A"] || !got["B"] {
		t.Fatalf("after catching up the index holds %v, want A and B", got)
	}
}

// TestReplayReadsARecordOfAnUnknownTenant: a catch-up replays the change
// log from a snapshot without the writer lock, so a node record can name
// a tenant the in-memory graph no longer holds (an undone import dropped
// it while the replay read) or does not hold yet. Such a record is no
// document: the replay counts it deleted, a rebuild skips it, and neither
// panics (a catch-up once indexed past the graph's tenants).
func TestReplayReadsARecordOfAnUnknownTenant(t *testing.T) {
	s, _ := openTest(t, nil)
	mustImport(t, s, tenA, tr("A", "calls", "B"))
	const ghost = 1 << 20
	rec := nodeRec{tenant: 7, live: true, name: "Ghost", norm: NormalizeName("Ghost")}
	if err := s.db.Update(func(txn *badger.Txn) error {
		return txn.Set(key32(pfxNode, ghost), encodeNode(nil, &rec, ""))
	}); err != nil {
		t.Fatal(err)
	}
	cs, err := s.replaySet(s.Seq(), roaring.BitmapOf(ghost), roaring.New())
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Upserts) != 0 || !slices.Equal(cs.Deletes, []uint32{ghost}) {
		t.Fatalf("replay of a record of an unknown tenant: upserts %d, deletes %v; want it deleted", len(cs.Upserts), cs.Deletes)
	}
	var names []string
	if err := s.EachDoc(func(d *NodeDoc) error { names = append(names, d.Name); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"A", "B"}) {
		t.Fatalf("rebuild read %v, want A and B", names)
	}
	// Gone again, so that the store's invariants hold at the end.
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Delete(key32(pfxNode, ghost)) }); err != nil {
		t.Fatal(err)
	}
}
