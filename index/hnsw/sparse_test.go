package hnsw

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// sparseVecs returns n vectors of dim components with 0 to maxNZ nonzero
// ones (some more than a sparse slot holds), a few carrying -0
// components, and a few all zero but for one.
func sparseVecs(n, dim, maxNZ int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 3))
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, dim)
		nz := 1 + r.IntN(maxNZ)
		for range nz {
			v[r.IntN(dim)] = float32(r.NormFloat64())
		}
		if i%17 == 0 {
			v[r.IntN(dim)] = float32(math.Copysign(0, -1))
		}
		out[i] = v
	}
	return out
}

// TestSparseLayoutSameResults: a graph under Options.Sparse is the dense
// layout's graph (the oracle: the same options without Sparse, the same
// calls): the same links, the same search and exact results to the bit,
// the same vectors back, through batches, single adds, replacements that
// move a vector between the slot and the whole form, deletes, re-adds and
// a persist round trip.
func TestSparseLayoutSameResults(t *testing.T) {
	n := 3000
	if raceEnabled {
		n = 600
	}
	for _, c := range []struct {
		metric Metric
		dim    int // 200: a mask of four words, the last one partly used
	}{{Cosine, 64}, {L2, 64}, {Cosine, 200}} {
		dim, k := c.dim, c.dim/4
		metric := c.metric
		t.Run(fmt.Sprintf("%v/%d", metric, dim), func(t *testing.T) {
			vecs := sparseVecs(n+200, dim, dim/2, 5)
			queries := vecs[n:]
			vecs = vecs[:n]
			dense := Options{Dim: dim, M: 8, EfConstruction: 64, Metric: metric, Seed: 3}
			sparse := dense
			sparse.Sparse = k
			stores := [2]*store{newStore(), newStore()}
			var gs [2]*Graph
			for i, o := range []Options{dense, sparse} {
				g := newGraph(t, o)
				if err := g.AddBatch(seqIDs(n/2), vecs[:n/2], 2); err != nil {
					t.Fatal(err)
				}
				for id := n / 2; id < n; id++ {
					if err := g.Add(uint32(id), vecs[id]); err != nil {
						t.Fatal(err)
					}
				}
				for id := 0; id < n; id += 7 { // replaced: other nonzeros, some past k
					if err := g.Add(uint32(id), vecs[(id*31+5)%n]); err != nil {
						t.Fatal(err)
					}
				}
				for id := 3; id < n; id += 11 {
					g.Delete(uint32(id))
				}
				for id := 3; id < n; id += 55 { // re-added after the delete
					if err := g.Add(uint32(id), vecs[(id*13+1)%n]); err != nil {
						t.Fatal(err)
					}
				}
				if err := g.Check(); err != nil {
					t.Fatal(err)
				}
				gs[i] = g
			}
			// Persisted (before graphDump takes the dirty ids), loaded below.
			for i, g := range gs {
				for id := range uint32(n) {
					if v := gs[0].Vector(id); v != nil { // the store keeps the vectors given
						stores[i].vecs[id] = slices.Clone(v)
					}
				}
				stores[i].flush(g)
			}
			if len(stores[1].nodes) < n/2 {
				t.Fatalf("%d records persisted", len(stores[1].nodes))
			}
			sameDump(t, "links", graphDump(gs[0]), graphDump(gs[1]))
			whole, slot := 0, 0
			for id := range uint32(n) {
				a, b := gs[0].Vector(id), gs[1].Vector(id)
				if !slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) }) {
					t.Fatalf("vector %d: %v, sparse layout %v", id, a, b)
				}
				if a == nil {
					continue
				}
				nz := 0
				for _, x := range a {
					if math.Float32bits(x) != 0 {
						nz++
					}
				}
				if nz > k {
					whole++
				} else {
					slot++
				}
			}
			if whole == 0 || slot == 0 {
				t.Fatalf("%d vectors kept whole, %d in the slot: the workload must exercise both", whole, slot)
			}
			allow := roaring.New()
			for id := uint32(0); id < uint32(n); id += 3 {
				allow.Add(id)
			}
			for i, q := range queries {
				for _, o := range []SearchOptions{{}, {Allow: allow}} {
					ra, rb := gs[0].Search(nil, q, 10, o), gs[1].Search(nil, q, 10, o)
					if !slices.Equal(ra, rb) {
						t.Fatalf("query %d: %v, sparse layout %v", i, ra, rb)
					}
				}
				ea, eb := gs[0].Exact(nil, q, 10, allow), gs[1].Exact(nil, q, 10, allow)
				if !slices.Equal(ea, eb) || len(ea) == 0 {
					t.Fatalf("exact %d: %v, sparse layout %v", i, ea, eb)
				}
			}
			la, err := stores[0].load(dense)
			if err != nil {
				t.Fatal(err)
			}
			lb, err := stores[1].load(sparse)
			if err != nil {
				t.Fatal(err)
			}
			sameResults(t, la, lb, queries, SearchOptions{})
			sameDump(t, "links after Load", graphDump(la), graphDump(lb))
		})
	}
}

// Options.Sparse is refused out of [0, Dim] and beyond a byte's indexes.
func TestSparseOptionsRefused(t *testing.T) {
	for _, o := range []Options{{Dim: 8, Sparse: -1}, {Dim: 8, Sparse: 9}, {Dim: 300, Sparse: 40}} {
		if _, err := New(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: %v, want ErrInvalidOptions", o, err)
		}
	}
	if _, err := New(Options{Dim: 256, Sparse: 256}); err != nil {
		t.Errorf("Dim 256, Sparse 256: %v", err)
	}
}
