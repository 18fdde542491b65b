package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/kgctx/kgctx/bench/workload"
	"github.com/kgctx/kgctx/index/hnsw"
)

// EfValues are the efSearch settings the hnsw scenario reports.
var EfValues = []int{16, 32, 64, 128, 256}

func runHNSW(ctx context.Context, cfg Config) (*Report, error) {
	rep := &Report{Scenario: "hnsw", Machine: machine()}
	sift, err := workload.LoadSIFT(cfg.Datasets, 500)
	if err != nil {
		return nil, err
	}
	cfg.say("SIFT-5k")
	r, err := HNSWRecall("sift5k (L2)", sift.Base, sift.Queries, hnsw.L2)
	if err != nil {
		return nil, err
	}
	rep.HNSW = append(rep.HNSW, r)
	cfg.say("clustered %d", cfg.Nodes)
	base := workload.Clustered(cfg.Nodes+1000, 128, 100, 7)
	r, err = HNSWRecall(fmt.Sprintf("clustered %d (cosine)", cfg.Nodes), base[:cfg.Nodes], base[cfg.Nodes:], hnsw.Cosine)
	if err != nil {
		return nil, err
	}
	rep.HNSW = append(rep.HNSW, r)
	rep.PeakRSSMB = peakRSSMB()
	return rep, ctx.Err()
}

// HNSWRecall builds an index of base (M 16, efConstruction 200, one
// thread, like the hnswlib reference), then measures recall@10 against
// brute force and single-threaded query time at each of EfValues.
func HNSWRecall(name string, base, queries [][]float32, metric hnsw.Metric) (HNSWRun, error) {
	run := HNSWRun{Data: name, Vectors: len(base), Queries: len(queries), Dim: len(base[0])}
	g, err := hnsw.New(hnsw.Options{Dim: run.Dim, M: 16, EfConstruction: 200, Metric: metric, Seed: 1})
	if err != nil {
		return run, err
	}
	start := time.Now()
	for i, v := range base {
		if err := g.Add(uint32(i), v); err != nil {
			return run, err
		}
	}
	run.BuildSeconds = time.Since(start).Seconds()
	run.InsertsPerSec = float64(len(base)) / run.BuildSeconds
	truth := workload.GroundTruth(base, queries, 10, metric == hnsw.Cosine)
	var res []hnsw.Result
	start = time.Now()
	for _, q := range queries {
		res = g.Exact(res, q, 10, nil)
	}
	run.ExactMicros = float64(time.Since(start).Microseconds()) / float64(len(queries))
	for _, ef := range EfValues {
		hits := 0
		var el time.Duration
		for qi, q := range queries {
			t := time.Now()
			res = g.Search(res, q, 10, hnsw.SearchOptions{Ef: ef})
			el += time.Since(t)
			for _, r := range res {
				for _, t := range truth[qi] {
					if r.ID == t {
						hits++
						break
					}
				}
			}
		}
		run.Points = append(run.Points, HNSWPoint{Ef: ef, Recall: float64(hits) / float64(10*len(queries)),
			MicrosPerQ: float64(el.Microseconds()) / float64(len(queries)), QueriesPerSec: float64(len(queries)) / el.Seconds()})
	}
	return run, nil
}
