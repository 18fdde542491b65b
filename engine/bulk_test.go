package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hashVectorizer embeds a node as a hash of its name, type and
// description (4 dimensions): deterministic, like the built-in one. gate,
// when set, runs first on every call (n counts from 1): tests make it
// block, fail or wait for the import's context.
type hashVectorizer struct {
	calls atomic.Int64
	gate  func(ctx context.Context, n int64) error
}

func (h *hashVectorizer) Name() string { return "hash" }
func (h *hashVectorizer) Dim() int     { return 4 }
func (h *hashVectorizer) Vectorize(ctx context.Context, docs []*NodeDoc) ([][]float32, error) {
	n := h.calls.Add(1)
	if h.gate != nil {
		if err := h.gate(ctx, n); err != nil {
			return nil, err
		}
	}
	out := make([][]float32, len(docs))
	for i, d := range docs {
		f := fnv.New64a()
		fmt.Fprintf(f, "%s\x00%s\x00%s", d.Name, d.Type, d.Description)
		x := f.Sum64()
		out[i] = []float32{float32(x & 0xffff), float32(x >> 16 & 0xffff), float32(x >> 32 & 0xffff), float32(x >> 48)}
	}
	return out, nil
}
func (h *hashVectorizer) EmbedTexts(ctx context.Context, texts []string) ([][]float32, error) {
	docs := make([]*NodeDoc, len(texts))
	for i, t := range texts {
		docs[i] = &NodeDoc{Name: t}
	}
	return h.Vectorize(ctx, docs)
}

// docIndexer keeps the last document and vector the store gave it per
// node, as a text and a vector index would.
type docIndexer struct {
	mu    sync.Mutex
	docs  map[uint32]string
	vecs  map[uint32]string
	sets  []int // upserts per change set
	wm    uint64
	after func(cs *ChangeSet)
}

func newDocIndexer() *docIndexer {
	return &docIndexer{docs: map[uint32]string{}, vecs: map[uint32]string{}}
}

func (x *docIndexer) Name() string { return "docs" }
func (x *docIndexer) Apply(_ context.Context, cs *ChangeSet) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, d := range cs.Deletes {
		delete(x.docs, d)
		delete(x.vecs, d)
	}
	for _, d := range cs.Upserts {
		x.docs[d.Dense] = fmt.Sprintf("%s|%s|%v|%s|%s|%s", d.ID, d.Name, d.Aliases, d.Type, d.Description, d.OrgID+"/"+d.ProjectID)
		if d.Vector != nil {
			x.vecs[d.Dense] = fmt.Sprint(d.Vector)
		}
	}
	x.sets = append(x.sets, len(cs.Upserts))
	x.wm = cs.Seq
	if x.after != nil {
		x.after(cs)
	}
	return nil
}
func (x *docIndexer) Watermark() uint64 { return x.wm }

func (x *docIndexer) state() (map[uint32]string, map[uint32]string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return maps.Clone(x.docs), maps.Clone(x.vecs)
}

// dump is every Badger record of the store but the change log, the
// sequence and the store's identity, which differ between stores that
// hold the same graph; skip names more meta keys to leave out.
func dump(t testing.TB, s *Store, skip ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := s.iterate(nil, func(k, v []byte) error {
		if k[0] == pfxChange || k[0] == pfxAux || slices.Contains(append(skip, keyMetaSeq, keyMetaID), string(k)) {
			return nil
		}
		out[string(k)] = string(v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffDumps(t testing.TB, what string, want, got map[string]string) {
	t.Helper()
	n := 0
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			if n++; n <= 5 {
				t.Errorf("%s: key %q: want %q, got %q (present %v)", what, k, v, g, ok)
			}
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			if n++; n <= 5 {
				t.Errorf("%s: extra key %q = %q", what, k, v)
			}
		}
	}
	if n > 5 {
		t.Errorf("%s: %d keys differ in all", what, n)
	}
}

// genImport makes n triplets over a pool of names that merges under
// several spellings, with types, descriptions, aliases, vectors, weights
// and provenance that change along the input, endpoints in other
// projects, and relationships spelt several ways: what chunking must not
// change the meaning of.
func genImport(rng *rand.Rand, n, names int) []TripletInput {
	spell := func(i int) string {
		switch rng.IntN(4) {
		case 0:
			return fmt.Sprintf("AuthService%d", i)
		case 1:
			return fmt.Sprintf("authService%d", i)
		case 2:
			return fmt.Sprintf("auth_service%d", i)
		}
		return fmt.Sprintf("Auth-Service%d", i)
	}
	pick := func(p float64, vs ...string) string {
		if rng.Float64() < p {
			return vs[rng.IntN(len(vs))]
		}
		return ""
	}
	out := make([]TripletInput, n)
	for i := range out {
		tr := TripletInput{Source: spell(rng.IntN(names)), Target: spell(rng.IntN(names)),
			Relationship: []string{"depends_on", "Depends On", "calls", "CALLS", "owns", fmt.Sprintf("rel_%d", rng.IntN(6))}[rng.IntN(6)],
			SourceType:   pick(0.3, "svc", "db"), TargetType: pick(0.2, "svc", "queue"),
			SourceDescription: pick(0.2, "the auth service", "signs tokens", "talks to the database"),
			TargetDescription: pick(0.1, "a store", "a queue")}
		if rng.IntN(8) == 0 {
			tr.SourceAliases = []string{fmt.Sprintf("alias%d", rng.IntN(50))}
		}
		if rng.IntN(10) == 0 {
			tr.SourceVector = []float32{rng.Float32(), rng.Float32(), 1, 0}
		}
		if rng.IntN(6) == 0 {
			tr.Weight = f64(float64(rng.IntN(10)) / 10)
		}
		if rng.IntN(9) == 0 {
			tr.TargetWeight = f64(float64(rng.IntN(10)) / 10)
		}
		if rng.IntN(5) == 0 {
			tr.Provenance = &Provenance{SessionID: fmt.Sprintf("ses_%d", rng.IntN(30)), Timestamp: time.Unix(int64(rng.IntN(1000)), 0).UTC()}
		}
		if rng.IntN(15) == 0 {
			tr.SourceProjectID = "side"
		}
		if rng.IntN(15) == 0 {
			tr.TargetProjectID = fmt.Sprintf("far_%d", rng.IntN(2))
		}
		out[i] = tr
	}
	return out
}

var importNow = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

// openChunked opens a store with a hash vectorizer, a document indexer
// and the given chunk bounds.
func openChunked(t *testing.T, c chunking, vz *hashVectorizer) (*Store, *docIndexer) {
	t.Helper()
	if vz == nil {
		vz = &hashVectorizer{}
	}
	s, _ := openTest(t, &Options{Vectorizer: vz})
	s.chunks = c
	ix := newDocIndexer()
	if err := s.Attach(context.Background(), ix); err != nil {
		t.Fatal(err)
	}
	return s, ix
}

func importWith(t *testing.T, s *Store, ten Tenant, in []TripletInput, seed string) ImportResult {
	t.Helper()
	res, err := s.Import(context.Background(), ten, slices.Clone(in), ImportOptions{IDs: NewIDSource([]byte(seed)), Now: importNow})
	if err != nil {
		t.Fatalf("import %s: %v", seed, err)
	}
	return res
}

var oneBatch = chunking{triplets: 1 << 30, nodes: 1 << 30}

// TestImportChunkedEqualsOneBatch is the oracle of chunking: the same
// imports into two stores, one in chunks of a few triplets, the other in
// one batch, give the same results and byte-identical records (ids,
// vectors, pages, counters), and the indexes end with the same documents.
func TestImportChunkedEqualsOneBatch(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, c := range []chunking{{triplets: 7, nodes: 5}, {triplets: 64, nodes: 1}, {triplets: 200, nodes: 40}} {
		t.Run(fmt.Sprintf("%d_%d", c.triplets, c.nodes), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			base, big, again := genImport(rng, 150, 60), genImport(rng, 900, 120), genImport(rng, 300, 150)
			one, oneIx := openChunked(t, oneBatch, nil)
			chunked, chunkedIx := openChunked(t, c, nil)
			for i, in := range [][]TripletInput{base, big, again} {
				want := importWith(t, one, tenA, in, fmt.Sprint("seed", i))
				got := importWith(t, chunked, tenA, in, fmt.Sprint("seed", i))
				want.Seq, got.Seq = 0, 0
				if want != got {
					t.Fatalf("import %d: one batch %+v, chunks %+v", i, want, got)
				}
				if i == 1 && (want.NodesUpdated == 0 || want.EdgesMerged == 0) {
					t.Fatalf("the input does not exercise merging: %+v", want)
				}
			}
			diffDumps(t, "records", dump(t, one), dump(t, chunked))
			if err := one.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := chunked.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			d1, v1 := oneIx.state()
			d2, v2 := chunkedIx.state()
			if !maps.Equal(d1, d2) || !maps.Equal(v1, v2) {
				t.Fatalf("indexes differ: %d/%d docs, %d/%d vectors", len(d1), len(d2), len(v1), len(v2))
			}
			if len(chunkedIx.sets) <= len(oneIx.sets) {
				t.Fatalf("chunked import made %d change sets, one batch %d", len(chunkedIx.sets), len(oneIx.sets))
			}
		})
	}
}

// TestImportChunkBounds: a chunk stops at its triplet bound and once it
// has its bound of nodes to index, so no change set asks much of the
// indexers.
func TestImportChunkBounds(t *testing.T) {
	s, ix := openChunked(t, chunking{triplets: 50, nodes: 16}, nil)
	var in []TripletInput
	for i := range 400 {
		in = append(in, tr(fmt.Sprintf("n%d", i), "calls", fmt.Sprintf("n%d", i+1000)))
	}
	chunks := 0
	s.hooks.chunk = func(Tenant, int) { chunks++ }
	if res := mustImport(t, s, tenA, in...); res.NodesCreated != 800 {
		t.Fatalf("%+v", res)
	}
	if chunks < 50 {
		t.Fatalf("800 new nodes in %d chunks", chunks)
	}
	for _, n := range ix.sets {
		if n > 17 {
			t.Fatalf("a change set holds %d upserts (sets %v)", n, ix.sets)
		}
	}
	// A re-import creates nothing: chunks end at the triplet bound.
	chunks = 0
	mustImport(t, s, tenA, in...)
	if chunks != 8 {
		t.Fatalf("re-import of 400 triplets in %d chunks, want 8", chunks)
	}
}

// undoFixture is a store holding a graph that an import then changes in
// every way an import can, and the record of how it was before.
type undoFixture struct {
	s      *Store
	ix     *docIndexer
	vz     *hashVectorizer
	in     []TripletInput
	before map[string]string
	docs   map[uint32]string
	vecs   map[uint32]string
	tens   []Tenant
	rels   int
}

func newUndoFixture(t *testing.T) *undoFixture {
	t.Helper()
	f := &undoFixture{vz: &hashVectorizer{}}
	f.s, f.ix = openChunked(t, chunking{triplets: 10, nodes: 8}, f.vz)
	rng := rand.New(rand.NewPCG(3, 4))
	importWith(t, f.s, tenA, genImport(rng, 120, 40), "base")
	importWith(t, f.s, tenB, genImport(rng, 30, 40), "other org")
	// The import: new and existing names (aliases, types, descriptions,
	// vectors, weights), merged edges (provenance, weights), a new
	// project and new relationships.
	f.in = genImport(rng, 200, 80)
	f.in = append(f.in, TripletInput{Source: "brand new", Relationship: "never seen before", Target: "AuthService1", SourceProjectID: "new_project"})
	f.snapshot(t)
	return f
}

func (f *undoFixture) snapshot(t *testing.T) {
	t.Helper()
	if err := f.s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.before = dump(t, f.s, keyMetaNode, keyMetaEdge)
	f.docs, f.vecs = f.ix.state()
	f.tens = f.s.Tenants()
	f.s.View(func(v *View) error { f.rels = v.RelCount(); return nil })
}

// assertUnchanged checks that the store, its indexes and its dictionaries
// are as in the snapshot (the id counters aside: an undone import's ids
// are not reused).
func (f *undoFixture) assertUnchanged(t *testing.T) {
	t.Helper()
	if err := f.s.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	diffDumps(t, "records", f.before, dump(t, f.s, keyMetaNode, keyMetaEdge))
	docs, vecs := f.ix.state()
	if !maps.Equal(docs, f.docs) || !maps.Equal(vecs, f.vecs) {
		t.Errorf("indexes: %d docs, %d vectors; before %d, %d", len(docs), len(vecs), len(f.docs), len(f.vecs))
		for k, v := range docs {
			if f.docs[k] != v {
				t.Errorf("doc %d: %q, before %q", k, v, f.docs[k])
				break
			}
		}
	}
	if tens := f.s.Tenants(); !slices.Equal(tens, f.tens) {
		t.Errorf("tenants %v, before %v", tens, f.tens)
	}
	f.s.View(func(v *View) error {
		if v.RelCount() != f.rels {
			t.Errorf("%d relationships, before %d", v.RelCount(), f.rels)
		}
		return nil
	})
}

// TestImportCancelledUndoes: an import whose context is cancelled after
// some chunks committed returns the context's error and leaves the store,
// its indexes and its dictionaries exactly as before. The same import run
// to its end changes them (the test would pass vacuously otherwise).
func TestImportCancelledUndoes(t *testing.T) {
	f := newUndoFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.s.hooks.chunk = func(_ Tenant, done int) {
		if done >= 60 {
			cancel()
		}
	}
	res, err := f.s.Import(ctx, tenA, slices.Clone(f.in), ImportOptions{IDs: NewIDSource([]byte("big")), Now: importNow.Add(time.Hour)})
	if !errors.Is(err, context.Canceled) || res != (ImportResult{}) {
		t.Fatalf("cancelled import: %+v, %v", res, err)
	}
	f.assertUnchanged(t)

	f.s.hooks.chunk = nil
	importWith(t, f.s, tenA, f.in, "big")
	if err := f.s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after := dump(t, f.s, keyMetaNode, keyMetaEdge); len(after) <= len(f.before) {
		t.Fatalf("the import wrote nothing: %d records, %d before", len(after), len(f.before))
	}
}

// TestImportTimeoutUndoes: the request timeout ends an import while it
// embeds its third chunk (a slow embedder); it fails with the deadline and
// nothing stays. An embedder that fails does the same.
func TestImportTimeoutUndoes(t *testing.T) {
	for _, tc := range []struct {
		name string
		gate func(ctx context.Context, n int64) error
		want error
	}{
		{"deadline", func(ctx context.Context, n int64) error {
			if n >= 3 {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		}, context.DeadlineExceeded},
		{"embedder down", func(ctx context.Context, n int64) error {
			if n >= 4 {
				return errEmbedderDown
			}
			return nil
		}, errEmbedderDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newUndoFixture(t)
			f.vz.calls.Store(0)
			f.vz.gate = tc.gate
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, err := f.s.Import(ctx, tenA, slices.Clone(f.in), ImportOptions{})
			if !errors.Is(err, tc.want) {
				t.Fatalf("import: %v, want %v", err, tc.want)
			}
			f.vz.gate = nil
			f.assertUnchanged(t)
		})
	}
}

var errEmbedderDown = errors.New("embedder down")

// TestImportUndoKeepsOtherWrites: writes that land between an import's
// chunks survive its undo: a node deleted stays deleted, a weight moved
// (feedback) keeps its move, another org's import stays; the rest is as
// before.
func TestImportUndoKeepsOtherWrites(t *testing.T) {
	f := newUndoFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var moved, deleted string
	var movedD, deletedD uint32
	var bres ImportResult
	f.s.hooks.chunk = func(ten Tenant, done int) {
		if ten != tenA || done < 40 || moved != "" {
			if done >= 80 {
				cancel()
			}
			return
		}
		// Two existing nodes the import has changed by now.
		var ids []uint32
		f.s.View(func(v *View) error {
			it := v.ScopeNodes(tenA).Iterator()
			for it.HasNext() && len(ids) < 2 {
				n := it.Next()
				if r := &v.g.nodes[n]; r.updated == importNow.Add(time.Hour).UnixNano() && r.created != r.updated {
					ids = append(ids, n)
				}
			}
			if len(ids) == 2 {
				movedD, deletedD = ids[0], ids[1]
				moved, deleted = v.NodeID(movedD), v.NodeID(deletedD)
			}
			return nil
		})
		if moved == "" {
			t.Errorf("no existing node changed after %d triplets", done)
			return
		}
		if _, err := f.s.MoveWeights(context.Background(), []WeightRefs{{Scope: tenA, NodeIDs: []string{moved}}}, 0.5, 0); err != nil {
			t.Error(err)
		}
		if err := f.s.DeleteNode(context.Background(), tenA, deleted); err != nil {
			t.Error(err)
		}
		var err error
		bres, err = f.s.Import(context.Background(), tenB, []TripletInput{tr("during", "calls", "the import")}, ImportOptions{})
		if err != nil {
			t.Error(err)
		}
	}
	var before Node
	_, err := f.s.Import(ctx, tenA, slices.Clone(f.in), ImportOptions{Now: importNow.Add(time.Hour)})
	if !errors.Is(err, context.Canceled) || moved == "" {
		t.Fatalf("import: %v (moved %q)", err, moved)
	}
	f.s.hooks.chunk = nil
	if err := f.s.Check(); err != nil {
		t.Fatal(err)
	}
	rec, _, err := decodeNode([]byte(f.before[string(key32(pfxNode, movedD))]), true)
	if err != nil {
		t.Fatal(err)
	}
	before = Node{Weight: rec.weight, Aliases: rec.aliases, Type: rec.typ}
	n, err := f.s.Node(tenA, moved)
	if err != nil || n.Weight == before.Weight || !slices.Equal(n.Aliases, before.Aliases) || n.Type != before.Type {
		t.Fatalf("moved node: %+v %v; before the import %+v", n, err, before)
	}
	if _, err := f.s.Node(tenA, deleted); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted node came back: %v", err)
	}
	if ts, _ := f.s.QueryTriplets(tenB, TripletQuery{Subject: "during"}); len(ts) != 1 || bres.EdgesCreated != 1 {
		t.Fatalf("the other org's write is gone: %+v", ts)
	}
	// Everything else is as before: take the other org's write back, and
	// leave out the edge pages (the deleted node's edges went) and the
	// two nodes.
	if err := f.s.DeleteTriplet(context.Background(), tenB, "during", "calls", "the import"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"during", "the import"} {
		if id, ok := lookupID(f.s, tenB, name); ok {
			if err := f.s.DeleteNode(context.Background(), tenB, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	after := dump(t, f.s, keyMetaNode, keyMetaEdge)
	skip := func(k string) bool {
		return k[0] == pfxEdge || k == string(key32(pfxNode, movedD)) || k == string(key32(pfxNode, deletedD)) || k == string(key32(pfxVector, deletedD))
	}
	for k, v := range f.before {
		if !skip(k) && after[k] != v {
			t.Errorf("key %q changed", k)
		}
	}
	for k := range after {
		if _, ok := f.before[k]; !ok && !skip(k) {
			t.Errorf("key %q added", k)
		}
	}
	if _, ok := after[string(key32(pfxNode, deletedD))]; ok {
		t.Error("the deleted node is stored again")
	}
}

func lookupID(s *Store, t Tenant, name string) (string, bool) {
	var id string
	var ok bool
	s.View(func(v *View) error {
		var n uint32
		if n, ok = v.Lookup(t, name); ok {
			id = v.NodeID(n)
		}
		return nil
	})
	return id, ok
}

// TestImportOtherOrgWritesBetweenChunks: while a bulk import of one org is
// between two chunks, another org's one-triplet write goes through to the
// end (it is not held until the import ends), and so does a write into
// another project of the same org; a write into the importing project
// waits for the import and, when its own deadline comes first, fails
// without writing.
func TestImportOtherOrgWritesBetweenChunks(t *testing.T) {
	s, _ := openChunked(t, chunking{triplets: 20, nodes: 10}, nil)
	rng := rand.New(rand.NewPCG(5, 6))
	in := genImport(rng, 300, 200)
	for i := range in {
		in[i].SourceProjectID, in[i].TargetProjectID = "", ""
	}
	var chunks int
	var other, sibling ImportResult
	var blocked error
	s.hooks.chunk = func(ten Tenant, done int) {
		if ten != tenA {
			return
		}
		if chunks++; chunks != 2 {
			return
		}
		var err error
		if other, err = s.Import(context.Background(), tenB, []TripletInput{tr("small", "calls", "write")}, ImportOptions{}); err != nil {
			t.Error(err)
		}
		if sibling, err = s.Import(context.Background(), tenA2, []TripletInput{tr("small", "calls", "write")}, ImportOptions{}); err != nil {
			t.Error(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, blocked = s.Import(ctx, tenA, []TripletInput{tr("same", "calls", "project")}, ImportOptions{})
	}
	res, err := s.Import(context.Background(), tenA, in, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if chunks < 5 || other.EdgesCreated != 1 || sibling.EdgesCreated != 1 || other.Seq >= res.Seq || sibling.Seq >= res.Seq {
		t.Fatalf("%d chunks; the other org's write %+v and the sibling project's %+v, the import's last chunk seq %d", chunks, other, sibling, res.Seq)
	}
	if !errors.Is(blocked, context.DeadlineExceeded) {
		t.Fatalf("a write into the importing project did not wait: %v", blocked)
	}
	if _, ok := lookupID(s, tenA, "same"); ok {
		t.Fatal("the write that timed out wrote")
	}
}

// TestImportCloseUndoes: closing the store during a bulk import stops it
// at its next chunk; it undoes what it wrote before Close returns, and the
// store reopens as it was.
func TestImportCloseUndoes(t *testing.T) {
	vz := &hashVectorizer{}
	s, dir := openTest(t, &Options{Vectorizer: vz})
	s.chunks = chunking{triplets: 10, nodes: 8}
	rng := rand.New(rand.NewPCG(7, 8))
	importWith(t, s, tenA, genImport(rng, 100, 40), "base")
	before := dump(t, s, keyMetaNode, keyMetaEdge)
	closed := make(chan error, 1)
	s.hooks.chunk = func(_ Tenant, done int) {
		if done == 30 {
			go func() { closed <- s.Close() }()
			for !s.closed.Load() {
				time.Sleep(time.Millisecond)
			}
		}
	}
	_, err := s.Import(context.Background(), tenA, genImport(rng, 200, 80), ImportOptions{})
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("import: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	s = openAt(t, dir, &Options{Vectorizer: vz})
	diffDumps(t, "records after reopening", before, dump(t, s, keyMetaNode, keyMetaEdge))
}

func TestFIFOLockHandsOverInOrder(t *testing.T) {
	var l fifoLock
	l.Lock()
	var order []int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Lock()
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			l.Unlock()
		}()
		for l.waiting() != i+1 {
			time.Sleep(time.Millisecond)
		}
	}
	// The holder lets go and asks again at once: it queues behind the
	// three waiters instead of barging ahead of them.
	l.Unlock()
	l.Lock()
	mu.Lock()
	got := slices.Clone(order)
	mu.Unlock()
	l.Unlock()
	wg.Wait()
	if !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("order %v", got)
	}
}

func TestTenantLocks(t *testing.T) {
	var tl tenantLocks
	ctx := context.Background()
	ts := []Tenant{tenA}
	r1, err := tl.lock(ctx, ts, false)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := tl.lock(ctx, ts, false) // shared with shared
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() {
		w, err := tl.lock(ctx, ts, true)
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	for {
		tl.mu.Lock()
		waiting := tl.m[tenA].wwaiting
		tl.mu.Unlock()
		if waiting == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// A waiting bulk import holds back new shared holders.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := tl.lock(short, ts, false); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shared lock behind a waiting writer: %v", err)
	}
	r1()
	r2()
	w := <-got
	if _, err := tl.lock(short, []Tenant{tenA, tenB}, true); err == nil {
		t.Fatal("exclusive lock over a held one")
	}
	if r, err := tl.lock(ctx, []Tenant{tenB}, true); err != nil {
		t.Fatal(err) // tenB was released when the lock above gave up
	} else {
		r()
	}
	w()
	if len(tl.m) != 0 {
		t.Fatalf("%d lock entries left", len(tl.m))
	}
}

// TestImportConcurrentStress runs bulk and small imports of two orgs,
// some cancelled midway, beside deletes and weight moves, and checks the
// store's invariants at the end (run with -race).
func TestImportConcurrentStress(t *testing.T) {
	s, _ := openChunked(t, chunking{triplets: 15, nodes: 10}, nil)
	rng := rand.New(rand.NewPCG(9, 10))
	inputs := make([][]TripletInput, 12)
	for i := range inputs {
		inputs[i] = genImport(rng, 50+rng.IntN(150), 60)
	}
	var wg sync.WaitGroup
	for i, in := range inputs {
		ten := []Tenant{tenA, tenB, tenA2}[i%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if i%4 == 1 {
				time.AfterFunc(time.Duration(i)*time.Millisecond, cancel)
			}
			if _, err := s.Import(ctx, ten, in, ImportOptions{}); err != nil && !errors.Is(err, context.Canceled) {
				t.Error(err)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 40 {
			ten := []Tenant{tenA, tenB}[i%2]
			if _, err := s.Import(context.Background(), ten, []TripletInput{tr(fmt.Sprintf("small%d", i), "calls", "AuthService1")}, ImportOptions{}); err != nil {
				t.Error(err)
			}
			if id, ok := lookupID(s, ten, fmt.Sprintf("AuthService%d", i%7)); ok {
				if _, err := s.MoveWeights(context.Background(), []WeightRefs{{Scope: ten, NodeIDs: []string{id}}}, 0.3, 1); err != nil {
					t.Error(err)
				}
				if i%5 == 0 {
					if err := s.DeleteNode(context.Background(), ten, id); err != nil && !errors.Is(err, ErrNotFound) {
						t.Error(err)
					}
				}
			}
		}
	}()
	wg.Wait()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func genObservations(n int) []ObservationInput {
	out := make([]ObservationInput, n)
	for i := range out {
		out[i] = ObservationInput{Content: fmt.Sprintf("observation %d: the auth service retries", i),
			Metadata: ObservationMeta{Paths: []string{fmt.Sprintf("src/f%d.go", i%7)}, Tags: []string{"t"}}}
	}
	return out
}

// TestAddObservationsChunked: a large batch of observations gets the same
// ids and records in chunks as in one batch, and one that fails in its
// third chunk (the embedder) leaves nothing, its new project included.
func TestAddObservationsChunked(t *testing.T) {
	add := func(s *Store, ten Tenant, in []ObservationInput) ([]string, error) {
		return s.AddObservations(context.Background(), ten, slices.Clone(in), ImportOptions{IDs: NewIDSource([]byte("obs")), Now: importNow})
	}
	in := genObservations(50)
	one, _ := openChunked(t, oneBatch, nil)
	chunked, ix := openChunked(t, chunking{nodes: 8}, nil)
	want, err := add(one, tenA, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := add(chunked, tenA, in)
	if err != nil || !slices.Equal(want, got) {
		t.Fatalf("chunked ids %v (%v), one batch %v", got, err, want)
	}
	diffDumps(t, "records", dump(t, one), dump(t, chunked))
	if len(ix.sets) < 7 {
		t.Fatalf("50 observations in %d change sets", len(ix.sets))
	}

	vz := &hashVectorizer{}
	s, _ := openChunked(t, chunking{nodes: 8}, vz)
	if _, err := add(s, tenA, in); err != nil {
		t.Fatal(err)
	}
	before := dump(t, s, keyMetaObs)
	tens := s.Tenants()
	vz.calls.Store(0)
	vz.gate = func(_ context.Context, n int64) error {
		if n == 3 {
			return errEmbedderDown
		}
		return nil
	}
	_, err = s.AddObservations(context.Background(), Tenant{Org: "org_a", Project: "fresh"}, slices.Clone(in), ImportOptions{})
	if !errors.Is(err, errEmbedderDown) {
		t.Fatalf("add: %v", err)
	}
	diffDumps(t, "records", before, dump(t, s, keyMetaObs))
	if !slices.Equal(s.Tenants(), tens) {
		t.Fatalf("tenants %v, before %v", s.Tenants(), tens)
	}
}

// TestClearProjectChunked: clearing a project in chunks deletes what one
// batch deletes (cross-project edges included) and counts the same.
func TestClearProjectChunked(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	in := genImport(rng, 400, 150)
	var stores []*Store
	var counts [][2]int
	for _, c := range []chunking{oneBatch, {triplets: 20, nodes: 9}} {
		s, _ := openChunked(t, c, nil)
		importWith(t, s, tenA, in, "x")
		importWith(t, s, Tenant{Org: "org_a", Project: "side"}, in[:100], "y")
		n, e, err := s.ClearProject(context.Background(), tenA)
		if err != nil {
			t.Fatal(err)
		}
		if st, _ := s.Stats(tenA); st.Nodes != 0 || st.Triplets != 0 {
			t.Fatalf("left %+v", st)
		}
		stores = append(stores, s)
		counts = append(counts, [2]int{n, e})
	}
	if counts[0] != counts[1] || counts[0][0] == 0 {
		t.Fatalf("one batch cleared %v, chunks %v", counts[0], counts[1])
	}
	diffDumps(t, "records", dump(t, stores[0]), dump(t, stores[1]))
}

// TestImportUndoDropsWhatAStagedWriteNames: another org's write stages a
// triplet with a relationship a bulk import created, and embeds (without
// the lock) while the import is undone, taking the relationship with it;
// the write must not commit an edge naming a dropped relationship.
func TestImportUndoDropsWhatAStagedWriteNames(t *testing.T) {
	vz := &hashVectorizer{}
	s, _ := openChunked(t, chunking{triplets: 5, nodes: 4}, vz)
	mustImport(t, s, tenA, tr("p", "calls", "q"))
	mustImport(t, s, tenB, tr("p", "calls", "q"))
	var in []TripletInput
	for i := range 30 {
		in = append(in, tr(fmt.Sprintf("a%d", i), "brand new relationship", fmt.Sprintf("b%d", i)))
	}
	var other atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	vz.gate = func(context.Context, int64) error {
		if other.CompareAndSwap(true, false) {
			entered <- struct{}{}
			<-release
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wrote chan error
	s.hooks.chunk = func(ten Tenant, done int) {
		if ten != tenA || wrote != nil {
			return
		}
		wrote = make(chan error, 1)
		other.Store(true)
		go func() {
			_, err := s.Import(context.Background(), tenB, []TripletInput{tr("x", "brand new relationship", "y")}, ImportOptions{})
			wrote <- err
		}()
		<-entered // staged, embedding
		cancel()
	}
	if _, err := s.Import(ctx, tenA, in, ImportOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("import: %v", err)
	}
	close(release)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if ts, err := s.QueryTriplets(tenB, TripletQuery{Subject: "x"}); err != nil || len(ts) != 1 || ts[0].Relationship != "brand_new_relationship" {
		t.Fatalf("the other org's triplet: %+v %v", ts, err)
	}
}

// TestImportChunkSeesWritesBetweenChunks: a chunk starts from what the
// previous one committed only while no other write changed it: a node
// deleted between two chunks is created again, not linked to while gone,
// and a weight moved between them is kept when the next chunk changes the
// node.
func TestImportChunkSeesWritesBetweenChunks(t *testing.T) {
	s, _ := openChunked(t, chunking{triplets: 10, nodes: 30}, nil)
	var in []TripletInput
	for i := range 10 {
		in = append(in, tr("hub", "calls", fmt.Sprintf("x%d", i)))
	}
	in[9] = tr("other hub", "calls", "x9")
	for i := range 10 {
		in = append(in, TripletInput{Source: "hub", Relationship: "calls", Target: fmt.Sprintf("y%d", i), SourceAliases: []string{fmt.Sprintf("hub alias %d", i)}})
	}
	in = append(in, TripletInput{Source: "other hub", Relationship: "calls", Target: "y0", SourceType: "svc"})
	var moved float64
	s.hooks.chunk = func(_ Tenant, done int) {
		if done != 10 {
			return
		}
		hub, _ := lookupID(s, tenA, "hub")
		if err := s.DeleteNode(context.Background(), tenA, hub); err != nil {
			t.Error(err)
		}
		other, _ := lookupID(s, tenA, "other hub")
		if _, err := s.MoveWeights(context.Background(), []WeightRefs{{Scope: tenA, NodeIDs: []string{other}}}, 0.5, 1); err != nil {
			t.Error(err)
		}
		n, _ := s.Node(tenA, other)
		moved = n.Weight
	}
	res := mustImport(t, s, tenA, in...)
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if res.NodesCreated != 23 { // hub twice, other hub, x0-x9, y0-y9
		t.Fatalf("%+v", res)
	}
	if ts, _ := s.QueryTriplets(tenA, TripletQuery{Subject: "hub"}); len(ts) != 10 {
		t.Fatalf("the new hub has %d triplets", len(ts))
	}
	id, _ := lookupID(s, tenA, "other hub")
	if n, _ := s.Node(tenA, id); n.Weight != moved || moved == DefaultWeight || n.Type != "svc" {
		t.Fatalf("other hub: %+v, weight moved to %v", n, moved)
	}
}
