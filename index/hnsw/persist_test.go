package hnsw

import (
	"errors"
	"maps"
	"slices"
	"testing"
)

// store is what the caller (kgctx's engine) keeps in Badger: the meta blob,
// one record per node id, and the original vectors.
type store struct {
	meta  []byte
	nodes map[uint32][]byte
	vecs  map[uint32][]float32
}

func newStore() *store {
	return &store{nodes: map[uint32][]byte{}, vecs: map[uint32][]float32{}}
}

// flush persists what changed since the last flush, the way the engine
// does: TakeDirty, AppendNode for each, then the meta.
func (s *store) flush(g *Graph) int {
	dirty := g.TakeDirty()
	for _, id := range dirty {
		rec := g.AppendNode(nil, id)
		if len(rec) == 0 {
			delete(s.nodes, id)
		} else {
			s.nodes[id] = rec
		}
	}
	s.meta = g.MarshalMeta()
	return len(dirty)
}

func (s *store) load(opts Options) (*Graph, error) {
	return Load(opts, s.meta, func(yield func(uint32, []byte) error) error {
		for _, id := range slices.Sorted(maps.Keys(s.nodes)) {
			if err := yield(id, s.nodes[id]); err != nil {
				return err
			}
		}
		return nil
	}, func(id uint32) []float32 { return s.vecs[id] })
}

func sameResults(t *testing.T, a, b *Graph, queries [][]float32, opts SearchOptions) {
	t.Helper()
	for i, q := range queries {
		ra := a.Search(nil, q, 10, opts)
		rb := b.Search(nil, q, 10, opts)
		if !slices.Equal(ra, rb) {
			t.Fatalf("query %d: results differ after Load:\n  before %v\n  after  %v", i, ra, rb)
		}
	}
}

// TestPersistRoundTrip: build, delete, persist, Load; identical results and
// a valid graph. Then change more (adds, updates, deletes, re-adds), persist
// only the dirty records, Load again: identical again.
func TestPersistRoundTrip(t *testing.T) {
	n := 5000
	if raceEnabled {
		n = 800
	}
	for _, metric := range []Metric{Cosine, L2} {
		t.Run(metric.String(), func(t *testing.T) {
			vecs := clustered(n+100, 48, 15, 71)
			queries := vecs[n:]
			vecs = vecs[:n]
			opts := Options{Dim: 48, M: 12, EfConstruction: 100, Metric: metric, Seed: 9}
			g := newGraph(t, opts)
			st := newStore()
			for i, v := range vecs[:n/2] {
				st.vecs[uint32(i)] = v
			}
			if err := g.AddBatch(seqIDs(n/2), vecs[:n/2], 2); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < n/2; i += 7 {
				g.Delete(uint32(i))
			}
			if got := st.flush(g); got != n/2 {
				t.Errorf("first TakeDirty: %d ids, want %d", got, n/2)
			}
			if d := g.TakeDirty(); len(d) != 0 {
				t.Errorf("TakeDirty after TakeDirty: %d ids", len(d))
			}

			g2, err := st.load(Options{}) // everything from meta
			if err != nil {
				t.Fatal(err)
			}
			checkOnCleanup(t, g2)
			if err := g2.Check(); err != nil {
				t.Fatal(err)
			}
			if g2.Len() != g.Len() || g2.Options() != g.Options() {
				t.Fatalf("Len %d/%d, options %+v / %+v", g2.Len(), g.Len(), g2.Options(), g.Options())
			}
			if d := g2.TakeDirty(); len(d) != 0 {
				t.Errorf("freshly loaded graph has %d dirty ids", len(d))
			}
			sameResults(t, g, g2, queries, SearchOptions{})
			sameResults(t, g, g2, queries, SearchOptions{Allow: bitmapOf(n, 0.5, 3), Ef: 40})

			// Second round: more changes, incremental flush.
			for i := n / 2; i < n; i++ {
				st.vecs[uint32(i)] = vecs[i]
			}
			if err := g.AddBatch(seqIDs(n)[n/2:], vecs[n/2:], 2); err != nil {
				t.Fatal(err)
			}
			for i := 1; i < n; i += 11 {
				g.Delete(uint32(i))
			}
			for i := 0; i < n/2; i += 14 { // re-add some deleted ids
				if err := g.Add(uint32(i), vecs[i]); err != nil {
					t.Fatal(err)
				}
			}
			for i := 3; i < 200; i += 5 { // replace vectors
				v := vecs[n-1-i]
				st.vecs[uint32(i)] = v
				if err := g.Add(uint32(i), v); err != nil {
					t.Fatal(err)
				}
			}
			st.flush(g)
			g3, err := st.load(Options{EfSearch: 80})
			if err != nil {
				t.Fatal(err)
			}
			checkOnCleanup(t, g3)
			if g3.Len() != g.Len() {
				t.Fatalf("Len %d, want %d", g3.Len(), g.Len())
			}
			sameResults(t, g, g3, queries, SearchOptions{Ef: 80})
			// The loaded graph keeps working: insert and delete.
			if err := g3.Add(uint32(n+5), vecs[0]); err != nil {
				t.Fatal(err)
			}
			g3.Delete(2)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	vecs := clustered(50, 4, 2, 81)
	g := newGraph(t, Options{Dim: 4, M: 4, Seed: 1})
	if err := g.AddBatch(seqIDs(50), vecs, 1); err != nil {
		t.Fatal(err)
	}
	st := newStore()
	for i, v := range vecs {
		st.vecs[uint32(i)] = v
	}
	st.flush(g)
	if _, err := st.load(Options{Dim: 4, M: 4, Metric: Cosine}); err != nil {
		t.Fatalf("matching options: %v", err)
	}

	for name, c := range map[string]struct {
		opts   Options
		mutate func(s *store)
		want   error
	}{
		"dim":      {Options{Dim: 5}, nil, ErrIncompatible},
		"m":        {Options{M: 8}, nil, ErrIncompatible},
		"metric":   {Options{Metric: L2}, nil, ErrIncompatible},
		"negative": {Options{EfSearch: -1}, nil, ErrInvalidOptions},
		"version":  {Options{}, func(s *store) { s.meta = append([]byte{9}, s.meta[1:]...) }, ErrVersion},
		"meta":     {Options{}, func(s *store) { s.meta = s.meta[:5] }, ErrCorrupt},
		"metaTail": {Options{}, func(s *store) { s.meta = append(s.meta, 0) }, ErrCorrupt},
		"record":   {Options{}, func(s *store) { s.nodes[3] = s.nodes[3][:2] }, ErrCorrupt},
		"flags":    {Options{}, func(s *store) { s.nodes[3] = append([]byte{0x80}, s.nodes[3][1:]...) }, ErrCorrupt},
		"missing":  {Options{}, func(s *store) { delete(s.nodes, 7) }, ErrCorrupt},
		"vector":   {Options{}, func(s *store) { s.vecs[9] = []float32{1} }, ErrDimensionMismatch},
	} {
		t.Run(name, func(t *testing.T) {
			s := &store{meta: slices.Clone(st.meta), nodes: maps.Clone(st.nodes), vecs: maps.Clone(st.vecs)}
			if c.mutate != nil {
				c.mutate(s)
			}
			_, err := s.load(c.opts)
			if !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
		})
	}

	// A record whose vector the store no longer holds (the node was deleted
	// after the record was saved; the store replays the deletion after the
	// load) loads as a tombstone, and the graph stays searchable.
	gone := &store{meta: slices.Clone(st.meta), nodes: maps.Clone(st.nodes), vecs: maps.Clone(st.vecs)}
	delete(gone.vecs, 9)
	lg, err := gone.load(Options{})
	if err != nil {
		t.Fatalf("a missing vector: %v", err)
	}
	if lg.Contains(9) {
		t.Fatal("a node without its vector is live")
	}
	if res := lg.Search(nil, vecs[9], 5, SearchOptions{}); len(res) != 5 || slices.ContainsFunc(res, func(r Result) bool { return r.ID == 9 }) {
		t.Fatalf("search after a tombstone load: %v", res)
	}

	// An iterator error is returned as is (wrapped).
	boom := errors.New("boom")
	_, err = Load(Options{}, st.meta, func(yield func(uint32, []byte) error) error { return boom }, nil)
	if !errors.Is(err, boom) {
		t.Errorf("iterator error: %v", err)
	}
	// Duplicate records.
	_, err = Load(Options{}, st.meta, func(yield func(uint32, []byte) error) error {
		for range 2 {
			if err := yield(1, st.nodes[1]); err != nil {
				return err
			}
		}
		return nil
	}, func(id uint32) []float32 { return st.vecs[id] })
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("duplicate record: %v", err)
	}
}

// TestLoadDropsLinksToDeleted: records written while deletes ran may link to
// a node whose newer record says deleted; Load drops those links and reports
// the node dirty.
func TestLoadDropsLinksToDeleted(t *testing.T) {
	vecs := clustered(200, 8, 3, 91)
	g := newGraph(t, Options{Dim: 8, Seed: 1})
	if err := g.AddBatch(seqIDs(200), vecs, 1); err != nil {
		t.Fatal(err)
	}
	st := newStore()
	for i, v := range vecs {
		st.vecs[uint32(i)] = v
	}
	st.flush(g)
	g.Delete(10)
	st.nodes[10] = g.AppendNode(nil, 10) // only the deleted node's record is updated
	g2, err := st.load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := g2.Check(); err != nil {
		t.Fatal(err)
	}
	if len(g2.TakeDirty()) == 0 {
		t.Error("nodes whose links were dropped are not reported dirty")
	}
	if g2.Contains(10) || g2.Len() != 199 {
		t.Errorf("deleted node: Contains %v, Len %d", g2.Contains(10), g2.Len())
	}
}
