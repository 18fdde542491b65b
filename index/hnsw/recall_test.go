package hnsw

import (
	"math/rand/v2"
	"testing"
	"time"
)

// clusteredN is the size of the generated recall workload: 20k for Cosine
// (the metric kgctx uses), 10k for L2 (SIFT covers L2 at full size), much
// smaller under the race detector, which slows everything ~10x.
func clusteredN(m Metric) int {
	switch {
	case raceEnabled:
		return 1200
	case m == L2:
		return 10000
	}
	return 20000
}

// TestClusteredRecall: 20k gaussian-cluster vectors, 128-d, built in
// parallel; recall@10 unfiltered, filtered at 50% and 5% density (graph
// path forced by ExactCutoff 1) and through the exact path, then after
// deleting 10%.
func TestClusteredRecall(t *testing.T) {
	for _, metric := range []Metric{Cosine, L2} {
		t.Run(metric.String(), func(t *testing.T) {
			if metric == L2 && (testing.Short() || raceEnabled) {
				t.Skip("short or race: cosine only")
			}
			n := clusteredN(metric)
			vecs := clustered(n+300, 128, 50, 51)
			queries := vecs[n:]
			vecs = vecs[:n]
			g := newGraph(t, Options{Dim: 128, Metric: metric, Seed: 6, ExactCutoff: 1})
			start := time.Now()
			if err := g.AddBatch(seqIDs(n), vecs, 2); err != nil {
				t.Fatal(err)
			}
			t.Logf("built %d in %v (2 workers)", n, time.Since(start).Round(time.Millisecond))

			gt := groundTruth(metric, vecs, queries, 10, nil)
			rec, _, cpu := measure(g, queries, gt, 10, SearchOptions{})
			t.Logf("unfiltered: recall@10 %.4f, %.1f µs/query CPU", rec, us(cpu))
			if rec < 0.95 {
				t.Errorf("unfiltered recall@10 %.4f < 0.95", rec)
			}

			// Exactly n/20 ids is not "under 1/20 of the live count", so with
			// ExactCutoff 1 both lists take the filtered graph walk.
			for _, density := range []float64{0.5, 0.05} {
				allow := bitmapN(n, int(float64(n)*density), uint64(density*100))
				gt := groundTruth(metric, vecs, queries, 10, func(id uint32) bool { return !allow.Contains(id) })
				rec, _, cpu := measure(g, queries, gt, 10, SearchOptions{Allow: allow})
				t.Logf("filtered %.0f%% (graph path): recall@10 %.4f, %.1f µs/query CPU", density*100, rec, us(cpu))
				if rec < 0.95 {
					t.Errorf("filtered %.0f%%: recall@10 %.4f < 0.95", density*100, rec)
				}
				for qi, q := range queries {
					for _, r := range g.Search(nil, q, 10, SearchOptions{Allow: allow}) {
						if !allow.Contains(r.ID) {
							t.Fatalf("query %d: id %d outside the allow-list", qi, r.ID)
						}
					}
				}
			}

			// A 5% list through the exact path.
			allow := bitmapN(n, n/20, 5)
			gt = groundTruth(metric, vecs, queries, 10, func(id uint32) bool { return !allow.Contains(id) })
			var hits, total int
			for i, q := range queries {
				got := g.Exact(nil, q, 10, allow)
				for _, r := range got {
					for _, w := range gt[i] {
						if r.ID == w {
							hits++
						}
					}
				}
				total += len(gt[i])
			}
			if rec := float64(hits) / float64(total); rec < 0.999 {
				t.Errorf("exact path recall %.4f", rec)
			}

			// Delete 10% (random), then recall against brute force over the rest.
			r := rand.New(rand.NewPCG(7, 7))
			deleted := make(map[uint32]bool)
			start = time.Now()
			for len(deleted) < n/10 {
				id := uint32(r.IntN(n))
				if !deleted[id] {
					if !g.Delete(id) {
						t.Fatalf("Delete(%d) = false", id)
					}
					deleted[id] = true
				}
			}
			t.Logf("deleted %d in %v", len(deleted), time.Since(start).Round(time.Millisecond))
			if g.Len() != n-len(deleted) {
				t.Errorf("Len %d, want %d", g.Len(), n-len(deleted))
			}
			if err := g.Check(); err != nil {
				t.Fatal(err)
			}
			gt = groundTruth(metric, vecs, queries, 10, func(id uint32) bool { return deleted[id] })
			rec, _, cpu = measure(g, queries, gt, 10, SearchOptions{})
			t.Logf("after deleting 10%%: recall@10 %.4f, %.1f µs/query CPU", rec, us(cpu))
			if rec < 0.95 {
				t.Errorf("recall after deletes %.4f < 0.95", rec)
			}
			for _, q := range queries {
				for _, res := range g.Search(nil, q, 10, SearchOptions{Ef: 200}) {
					if deleted[res.ID] {
						t.Fatalf("deleted id %d returned", res.ID)
					}
				}
			}
		})
	}
}
