package hnsw

import (
	"bufio"
	"compress/gzip"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/internal/datasets"
)

// siftPath returns sift5k/base.tsv.gz of the shared datasets, or "".
func siftPath() string {
	root, err := datasets.Find("")
	if err != nil {
		return ""
	}
	p := filepath.Join(root, "sift5k", "base.tsv.gz")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

var siftOnce struct {
	sync.Once
	vecs [][]float32
	err  error
}

// loadSIFT returns the 5,000 SIFT-5k base vectors, or skips the test when
// the shared datasets are not checked out next to the repo.
func loadSIFT(tb testing.TB) [][]float32 {
	tb.Helper()
	p := siftPath()
	if p == "" {
		tb.Skip("shared/datasets/sift5k/base.tsv.gz not found above the working directory; SIFT tests need the shared datasets next to the repo root")
	}
	siftOnce.Do(func() {
		f, err := os.Open(p)
		if err != nil {
			siftOnce.err = err
			return
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			siftOnce.err = err
			return
		}
		sc := bufio.NewScanner(zr)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			fields := strings.Split(sc.Text(), "\t")
			if len(fields) < 129 {
				continue
			}
			v := make([]float32, 128)
			for i := range v {
				x, err := strconv.ParseFloat(fields[i], 32)
				if err != nil {
					siftOnce.err = err
					return
				}
				v[i] = float32(x)
			}
			siftOnce.vecs = append(siftOnce.vecs, v)
		}
		siftOnce.err = sc.Err()
	})
	if siftOnce.err != nil {
		tb.Fatalf("read %s: %v", p, siftOnce.err)
	}
	if len(siftOnce.vecs) != 5000 {
		tb.Fatalf("read %s: %d rows, want 5000", p, len(siftOnce.vecs))
	}
	return siftOnce.vecs
}

// siftSplit holds out the last 500 rows as queries and indexes the first
// 4,500 (ids 0..4499).
func siftSplit(tb testing.TB) (base, queries [][]float32) {
	v := loadSIFT(tb)
	return v[:4500], v[4500:]
}

// clustered returns n dim-dimensional points drawn from c gaussian clusters
// (centres uniform in [-1,1]^dim, per-cluster spread 0.1..0.4).
func clustered(n, dim, c int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	centres := make([][]float32, c)
	spread := make([]float64, c)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for j := range centres[i] {
			centres[i][j] = float32(r.Float64()*2 - 1)
		}
		spread[i] = 0.1 + 0.3*r.Float64()
	}
	out := make([][]float32, n)
	for i := range out {
		k := r.IntN(c)
		v := make([]float32, dim)
		for j := range v {
			v[j] = centres[k][j] + float32(r.NormFloat64()*spread[k])
		}
		out[i] = v
	}
	return out
}

// oracleDist is a straightforward float64 implementation of the metrics,
// independent of the package's kernels.
func oracleDist(m Metric, a, b []float32) float64 {
	switch m {
	case L2:
		var s float64
		for i := range a {
			d := float64(a[i]) - float64(b[i])
			s += d * d
		}
		return s
	default:
		var dot, na, nb float64
		for i := range a {
			dot += float64(a[i]) * float64(b[i])
			na += float64(a[i]) * float64(a[i])
			nb += float64(b[i]) * float64(b[i])
		}
		return 1 - dot/math.Sqrt(na*nb)
	}
}

// bruteForce returns the ids of the k nearest vectors to q among vecs
// (id = index), skipping ids for which skip returns true.
func bruteForce(m Metric, vecs [][]float32, q []float32, k int, skip func(uint32) bool) []uint32 {
	type cand struct {
		d  float64
		id uint32
	}
	cs := make([]cand, 0, len(vecs))
	for i, v := range vecs {
		if v == nil || (skip != nil && skip(uint32(i))) {
			continue
		}
		cs = append(cs, cand{oracleDist(m, q, v), uint32(i)})
	}
	slices.SortFunc(cs, func(a, b cand) int {
		if a.d < b.d {
			return -1
		}
		if a.d > b.d {
			return 1
		}
		return int(a.id) - int(b.id)
	})
	out := make([]uint32, 0, k)
	for i := 0; i < k && i < len(cs); i++ {
		out = append(out, cs[i].id)
	}
	return out
}

// groundTruth computes bruteForce for every query.
func groundTruth(m Metric, vecs, queries [][]float32, k int, skip func(uint32) bool) [][]uint32 {
	gt := make([][]uint32, len(queries))
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < len(queries); i += 2 {
				gt[i] = bruteForce(m, vecs, queries[i], k, skip)
			}
		})
	}
	wg.Wait()
	return gt
}

// measure runs every query once and returns recall@k against gt and the mean
// wall and CPU time per query (CPU time is 0 where unsupported).
func measure(g *Graph, queries [][]float32, gt [][]uint32, k int, opts SearchOptions) (recall float64, perQuery, cpuPerQuery time.Duration) {
	var hits, total int
	dst := make([]Result, 0, k)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	start := time.Now()
	for i, q := range queries {
		dst = g.Search(dst, q, k, opts)
		for _, r := range dst {
			if slices.Contains(gt[i], r.ID) {
				hits++
			}
		}
		total += len(gt[i])
	}
	el := time.Since(start)
	cpu := threadCPU() - cpu0
	if total == 0 {
		return 1, 0, 0
	}
	n := time.Duration(len(queries))
	return float64(hits) / float64(total), el / n, cpu / n
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// newGraph builds a graph and registers Check in the test's cleanup (every
// test that builds a graph verifies its invariants at the end).
func newGraph(tb testing.TB, o Options) *Graph {
	tb.Helper()
	g, err := New(o)
	if err != nil {
		tb.Fatal(err)
	}
	checkOnCleanup(tb, g)
	return g
}

func checkOnCleanup(tb testing.TB, g *Graph) {
	tb.Cleanup(func() {
		if err := g.Check(); err != nil {
			tb.Errorf("cleanup: %v", err)
		}
	})
}

func seqIDs(n int) []uint32 {
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(i)
	}
	return ids
}

// bitmapN returns a bitmap of exactly count distinct random ids in [0,n).
func bitmapN(n, count int, seed uint64) *roaring.Bitmap {
	r := rand.New(rand.NewPCG(seed, 3))
	b := roaring.New()
	for _, i := range r.Perm(n)[:count] {
		b.Add(uint32(i))
	}
	return b
}

// bitmapOf returns a bitmap holding each id of [0,n) with probability p.
func bitmapOf(n int, p float64, seed uint64) *roaring.Bitmap {
	r := rand.New(rand.NewPCG(seed, 2))
	b := roaring.New()
	for i := range n {
		if r.Float64() < p {
			b.Add(uint32(i))
		}
	}
	return b
}
