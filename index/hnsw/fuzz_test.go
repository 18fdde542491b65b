package hnsw

import (
	"maps"
	"slices"
	"testing"
)

// FuzzLoad feeds mutated node records and meta to Load: it must return an
// error or a graph that passes Check, never panic.
func FuzzLoad(f *testing.F) {
	vecs := clustered(60, 4, 3, 101)
	g, err := New(Options{Dim: 4, M: 3, EfConstruction: 8, Seed: 1})
	if err != nil {
		f.Fatal(err)
	}
	if err := g.AddBatch(seqIDs(60), vecs, 1); err != nil {
		f.Fatal(err)
	}
	for i := 0; i < 60; i += 9 {
		g.Delete(uint32(i))
	}
	base := newStore()
	for i, v := range vecs {
		base.vecs[uint32(i)] = v
	}
	base.flush(g)
	for _, id := range []uint32{1, 9, 30} {
		f.Add(id, base.nodes[id], []byte(nil))
	}
	f.Add(uint32(2), []byte{0, 1, 2, 3, 4}, base.meta)
	f.Add(uint32(5), []byte{1, 31}, []byte{1, 4, 3, 8, 64, 1, 1, 0, 1, 200, 31, 0, 0})

	f.Fuzz(func(t *testing.T, id uint32, rec, meta []byte) {
		s := &store{meta: base.meta, nodes: maps.Clone(base.nodes), vecs: base.vecs}
		s.nodes[id%64] = rec
		if len(meta) > 0 {
			s.meta = meta
		}
		g2, err := s.load(Options{})
		if err != nil {
			return
		}
		if err := g2.Check(); err != nil {
			t.Fatalf("Load accepted records that break invariants: %v", err)
		}
		q := vecs[int(id)%len(vecs)]
		rs := g2.Search(nil, q, 5, SearchOptions{})
		if !slices.IsSortedFunc(rs, func(a, b Result) int {
			switch {
			case a.Distance < b.Distance:
				return -1
			case a.Distance > b.Distance:
				return 1
			}
			return 0
		}) {
			t.Fatalf("unsorted results %v", rs)
		}
	})
}
