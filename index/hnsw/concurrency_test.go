package hnsw

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrent runs inserts (batched and single), replacements, deletes,
// re-adds, searches (plain, filtered, exact) and persistence reads at the
// same time. Run it with -race. At the end the graph must pass Check and
// recall must still be high.
func TestConcurrent(t *testing.T) {
	n := 6000
	if raceEnabled {
		n = 2000
	}
	vecs := clustered(n, 32, 20, 61)
	g := newGraph(t, Options{Dim: 32, M: 8, EfConstruction: 64, Seed: 8})
	// Seed part of the graph so searches have something to find at once.
	if err := g.AddBatch(seqIDs(n/4), vecs[:n/4], 2); err != nil {
		t.Fatal(err)
	}
	var writers, readers sync.WaitGroup
	var stop atomic.Bool
	var deletedMu sync.Mutex
	deleted := map[uint32]bool{}

	// Two batch inserters over disjoint halves of the rest.
	rest := seqIDs(n)[n/4:]
	for w := range 2 {
		writers.Go(func() {
			var ids []uint32
			var vs [][]float32
			for i := w; i < len(rest); i += 2 {
				ids = append(ids, rest[i])
				vs = append(vs, vecs[rest[i]])
				if len(ids) == 100 {
					if err := g.AddBatch(ids, vs, 2); err != nil {
						t.Error(err)
					}
					ids, vs = ids[:0], vs[:0]
				}
			}
			if err := g.AddBatch(ids, vs, 1); err != nil {
				t.Error(err)
			}
		})
	}
	// A deleter/re-adder on the seeded quarter.
	writers.Go(func() {
		r := rand.New(rand.NewPCG(1, 1))
		for i := 0; i < n/10; i++ {
			id := uint32(r.IntN(n / 4))
			switch r.IntN(3) {
			case 0, 1:
				if g.Delete(id) {
					deletedMu.Lock()
					deleted[id] = true
					deletedMu.Unlock()
				}
			case 2: // replace or re-add with the same vector
				deletedMu.Lock()
				if err := g.Add(id, vecs[id]); err != nil {
					t.Error(err)
				}
				delete(deleted, id)
				deletedMu.Unlock()
			}
		}
	})
	// Searchers.
	var searches atomic.Int64
	for w := range 2 {
		readers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 2))
			allow := bitmapOf(n, 0.3, uint64(w))
			dst := make([]Result, 0, 10)
			for !stop.Load() {
				q := vecs[r.IntN(n)]
				switch r.IntN(3) {
				case 0:
					dst = g.Search(dst, q, 10, SearchOptions{})
				case 1:
					dst = g.Search(dst, q, 10, SearchOptions{Allow: allow})
					for _, res := range dst {
						if !allow.Contains(res.ID) {
							t.Errorf("id %d outside allow-list", res.ID)
						}
					}
				case 2:
					dst = g.Exact(dst, q, 5, allow)
				}
				for i := 1; i < len(dst); i++ {
					if dst[i].Distance < dst[i-1].Distance {
						t.Errorf("unsorted results %v", dst)
					}
				}
				searches.Add(1)
			}
		})
	}
	// Persistence reader.
	readers.Go(func() {
		var buf []byte
		for !stop.Load() {
			for _, id := range g.TakeDirty() {
				buf = g.AppendNode(buf[:0], id)
			}
			_ = g.MarshalMeta()
		}
	})
	writers.Wait()
	stop.Store(true)
	readers.Wait()

	if err := g.Check(); err != nil {
		t.Fatal(err)
	}
	live := 0
	for id := range uint32(n) {
		if g.Contains(id) {
			live++
			if deleted[id] {
				t.Errorf("deleted id %d is live", id)
			}
		} else if !deleted[id] {
			t.Errorf("id %d missing", id)
		}
	}
	if live != g.Len() {
		t.Errorf("Len %d, counted %d", g.Len(), live)
	}
	t.Logf("%d searches ran concurrently; %d live, %d deleted", searches.Load(), live, len(deleted))
	queries := vecs[:200]
	gt := groundTruth(Cosine, vecs, queries, 10, func(id uint32) bool { return deleted[id] })
	if rec, _, _ := measure(g, queries, gt, 10, SearchOptions{Ef: 100}); rec < 0.9 {
		t.Errorf("recall after concurrent build %.3f", rec)
	}
}
