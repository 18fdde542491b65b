package hnsw

import (
	"runtime"
	"testing"
	"time"
)

// TestSIFTRecall indexes 4,500 real SIFT descriptors (M 16, efConstruction
// 200), queries the 500 held-out rows and compares with brute force in the
// same metric. hnswlib's reference on the CI machine: ef 32 recall 0.974,
// ef 64 recall 0.993.
func TestSIFTRecall(t *testing.T) {
	base, queries := siftSplit(t)
	if raceEnabled {
		base, queries = base[:1500], queries[:100]
	}
	for _, metric := range []Metric{L2, Cosine} {
		t.Run(metric.String(), func(t *testing.T) {
			g := newGraph(t, Options{Dim: 128, M: 16, EfConstruction: 200, Metric: metric, Seed: 1})
			runtime.LockOSThread()
			cpu0, start := threadCPU(), time.Now()
			for i, v := range base {
				if err := g.Add(uint32(i), v); err != nil {
					t.Fatal(err)
				}
			}
			build, buildCPU := time.Since(start), threadCPU()-cpu0
			runtime.UnlockOSThread()
			t.Logf("%v build: %.0f inserts/s wall, %.0f inserts/s CPU", metric,
				float64(len(base))/build.Seconds(), float64(len(base))/buildCPU.Seconds())
			gt := groundTruth(metric, base, queries, 10, nil)
			for _, ef := range []int{32, 64} {
				r, per, cpu := measure(g, queries, gt, 10, SearchOptions{Ef: ef})
				t.Logf("%v ef=%d: recall@10 %.4f, %.1f µs/query wall, %.1f µs/query CPU", metric, ef, r, us(per), us(cpu))
				if ef == 64 && r < 0.95 {
					t.Errorf("%v ef=64: recall@10 %.4f < 0.95", metric, r)
				}
			}
		})
	}
}
