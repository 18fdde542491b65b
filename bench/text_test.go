package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/bench/workload"
	"github.com/kgctx/kgctx/index/text"
)

// Text-index benchmarks on the synthetic code-architecture corpus: one
// text.Doc per node (name, kind as type, description), tenant o/p, the
// workload's queries. They live here rather than in index/text because
// the corpus generator is part of bench, which index may not import.

const (
	synthOrg     = "o"
	synthProject = "p"
	synthK       = 30 // the seed-search depth index.Index asks for
	// synthBuiltKey marks a cached on-disk index as completely built.
	synthBuiltKey = "bench/synthetic-built"
)

var synthFilter = text.Filter{Org: synthOrg, Project: synthProject}

func synthCorpus(n int) *workload.Synthetic {
	return workload.NewSynthetic(workload.SyntheticOptions{Nodes: n, Edges: 5 * n})
}

// synthDocs returns the docs of nodes [from, to) of s.
func synthDocs(tb testing.TB, s *workload.Synthetic, from, to int) []text.Doc {
	tb.Helper()
	docs := make([]text.Doc, 0, to-from)
	for id := from; id < to; id++ {
		name, kind, desc, err := s.Node(id)
		if err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, text.Doc{ID: uint32(id), Org: synthOrg, Project: synthProject, Name: name, Type: kind.String(), Description: desc})
	}
	return docs
}

var textIndexes sync.Map // "n/budget" -> *textIndex

type textIndex struct {
	once sync.Once
	ix   *text.Index
	err  error
}

// openTextSynthetic returns an on-disk index of the n-node synthetic
// graph, shared by the benchmarks of this test binary. With
// $KGCTX_BENCH_DATA set the index is kept there between runs (building 1M
// documents takes minutes); otherwise it lives in the benchmark's
// temporary directory. $KGCTX_TEXT_MAX_POSTINGS sets the posting budget
// the index is opened with, to compare budgets on the same documents.
func openTextSynthetic(b *testing.B, n int) *text.Index {
	budget, _ := strconv.Atoi(os.Getenv("KGCTX_TEXT_MAX_POSTINGS"))
	v, _ := textIndexes.LoadOrStore(fmt.Sprint(n, "/", budget), &textIndex{})
	ti := v.(*textIndex)
	ti.once.Do(func() {
		dir := filepath.Join(benchTempDir(), "ix")
		if root := os.Getenv("KGCTX_BENCH_DATA"); root != "" {
			dir = filepath.Join(root, fmt.Sprintf("text-synthetic-%d", n))
		}
		ti.ix, ti.err = buildTextSynthetic(b, dir, n, budget)
	})
	if ti.err != nil {
		b.Fatal(ti.err)
	}
	return ti.ix
}

func buildTextSynthetic(b *testing.B, dir string, n, budget int) (*text.Index, error) {
	ix, err := text.Open(text.Options{Path: dir, MaxPostings: budget})
	if err != nil {
		return nil, err
	}
	if _, err := ix.GetMeta(synthBuiltKey); err == nil {
		return ix, nil
	}
	s := synthCorpus(n)
	var el time.Duration
	for from := 0; from < n; from += 50_000 {
		docs := synthDocs(b, s, from, min(n, from+50_000))
		start := time.Now()
		if err := ix.Upsert(docs); err != nil {
			return nil, err
		}
		el += time.Since(start)
	}
	b.Logf("built synthetic-%d text index in %v (%.0f docs/s)", n, el.Round(time.Millisecond), float64(n)/el.Seconds())
	if err := ix.SetMeta(synthBuiltKey, []byte{1}); err != nil {
		return nil, err
	}
	// Let scorch finish merging the upserted segments so that background
	// merges are not measured.
	time.Sleep(5 * time.Second)
	return ix, nil
}

// processCPU returns the CPU time (user + system) of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchTextSearch runs the queries round-robin and reports, per query:
// wall time mean (µs/query), median (p50-µs) and 99th percentile (p99-µs),
// and process CPU per query (cpu-µs/query: includes GC and background
// merging, but not time lost to other processes).
func benchTextSearch(b *testing.B, ix *text.Index, qs []string, k int, f text.Filter) {
	var dst []text.Hit
	var err error
	// Warm up: page in the mmap'd segments.
	for _, q := range qs {
		if dst, err = ix.Search(dst, q, k, f); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, 4096)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; b.Loop(); i++ {
		s := time.Now()
		dst, err = ix.Search(dst, qs[i%len(qs)], k, f)
		lat = append(lat, time.Since(s))
		if err != nil {
			b.Fatal(err)
		}
	}
	cpu := processCPU() - cpu0
	slices.Sort(lat)
	pct := func(p int) float64 { return float64(lat[min(len(lat)-1, len(lat)*p/100)].Nanoseconds()) / 1e3 }
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	n := float64(len(lat))
	b.ReportMetric(float64(sum.Nanoseconds())/1e3/n, "µs/query")
	b.ReportMetric(pct(50), "p50-µs")
	b.ReportMetric(pct(99), "p99-µs")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/n, "cpu-µs/query")
}

// BenchmarkText_SearchSynthetic searches the synthetic text index with
// 1000 workload queries, k=30.
//
//   - 100k: tenant filter only.
//   - 100k/allow-all: with every node in Filter.Allow, as index.Index
//     passes the scope's nodes.
//   - 1m: only with KGCTX_BENCH_LARGE=1 and without -short (set
//     KGCTX_BENCH_DATA to keep the index between runs).
func BenchmarkText_SearchSynthetic(b *testing.B) {
	b.Run("100k", func(b *testing.B) {
		benchTextSearch(b, openTextSynthetic(b, 100_000), synthCorpus(100_000).Queries(1000), synthK, synthFilter)
	})
	b.Run("100k/allow-all", func(b *testing.B) {
		const n = 100_000
		f := synthFilter
		f.Allow = roaring.New()
		f.Allow.AddRange(0, n)
		benchTextSearch(b, openTextSynthetic(b, n), synthCorpus(n).Queries(1000), synthK, f)
	})
	b.Run("1m", func(b *testing.B) {
		if testing.Short() {
			b.Skip("-short")
		}
		if os.Getenv("KGCTX_BENCH_LARGE") != "1" {
			b.Skip("set KGCTX_BENCH_LARGE=1 (and KGCTX_BENCH_DATA to keep the index) to run")
		}
		benchTextSearch(b, openTextSynthetic(b, 1_000_000), synthCorpus(1_000_000).Queries(1000), synthK, synthFilter)
	})
}

// BenchmarkText_UpsertSynthetic measures bulk Upsert of the 100k-node
// synthetic graph into a fresh on-disk index (durable, fsync'd), in calls
// of 10k docs as a bulk import would make them ($KGCTX_TEXT_UPSERT_CHUNK,
// $KGCTX_TEXT_BATCH override the call and batch sizes).
func BenchmarkText_UpsertSynthetic(b *testing.B) {
	const n = 100_000
	chunk := 10_000
	if c, err := strconv.Atoi(os.Getenv("KGCTX_TEXT_UPSERT_CHUNK")); err == nil {
		chunk = c
	}
	docs := synthDocs(b, synthCorpus(n), 0, n)
	bs, _ := strconv.Atoi(os.Getenv("KGCTX_TEXT_BATCH"))
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		ix, err := text.Open(text.Options{Path: b.TempDir(), BatchSize: bs})
		if err != nil {
			b.Fatal(err)
		}
		cpu0 := processCPU()
		b.StartTimer()
		for from := 0; from < n; from += chunk {
			if err := ix.Upsert(docs[from:min(n, from+chunk)]); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		cpu += processCPU() - cpu0
		_ = ix.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/upsert")
}
