package bench

import (
	"context"
	"fmt"
	"github.com/kgctx/kgctx/compose/service"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kgctx/kgctx/bench/workload"
	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/policy"
)

// loaded graphs, one per scenario and size, shared by the benchmarks of a
// test binary. $KGCTX_BENCH_DATA names a directory that keeps them between
// runs (one subdirectory each).
var loaded sync.Map // name -> *loadedGraph

type loadedGraph struct {
	once    sync.Once
	app     *service.App
	queries []string
	err     error
}

// benchTemps are the temporary directories of graphs and indexes shared
// by several benchmarks; TestMain removes them when the binary exits.
var (
	benchTempsMu sync.Mutex
	benchTemps   []string
)

// benchTempDir returns a new temporary directory removed at exit.
func benchTempDir() string {
	dir, err := os.MkdirTemp("", "kgctx-bench-*")
	if err != nil {
		panic(err)
	}
	benchTempsMu.Lock()
	benchTemps = append(benchTemps, dir)
	benchTempsMu.Unlock()
	return dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range benchTemps {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

func loadGraph(b *testing.B, cfg Config) (*service.App, []string) {
	cfg.defaults()
	name := cfg.Scenario
	if cfg.Scenario == "synthetic" {
		name = fmt.Sprintf("synthetic-%d-%d", cfg.Nodes, cfg.Edges)
	}
	v, _ := loaded.LoadOrStore(name, &loadedGraph{})
	lg := v.(*loadedGraph)
	lg.once.Do(func() {
		wl, err := loadWorkload(cfg)
		if err != nil {
			lg.err = err
			return
		}
		dir := os.Getenv("KGCTX_BENCH_DATA")
		if dir == "" {
			dir = benchTempDir()
		} else {
			dir = filepath.Join(dir, name)
		}
		app, err := service.Open(context.Background(), service.Config{DataDir: dir})
		if err != nil {
			lg.err = err
			return
		}
		if st, _ := app.Store.Stats(Tenant); st.Triplets == 0 {
			if _, err := ImportSource(context.Background(), app.Store, Tenant, wl.source, 50_000); err != nil {
				lg.err = err
				return
			}
		}
		lg.app, lg.queries = app, wl.queries
	})
	if lg.err != nil {
		b.Skip(lg.err)
	}
	return lg.app, lg.queries
}

func BenchmarkGraphBlock_FB15k(b *testing.B) {
	app, queries := loadGraph(b, Config{Scenario: "fb15k"})
	benchBlocks(b, app, queries)
}

func BenchmarkGraphBlock_Synthetic(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			app, queries := loadGraph(b, Config{Scenario: "synthetic", Nodes: n, Edges: 5 * n})
			benchBlocks(b, app, queries)
		})
	}
}

func benchBlocks(b *testing.B, app *service.App, queries []string) {
	rng := rand.New(rand.NewPCG(1, 2))
	reqs := make([]compose.GraphRequest, 1024)
	for i := range reqs {
		reqs[i] = compose.GraphRequest{Identity: policy.Identity{AgentID: "bench", OrgID: Tenant.Org, Role: policy.RoleAgent},
			Scope: Tenant, QueryText: queries[rng.IntN(len(queries))], BudgetTokens: 500, TopK: 10, Depth: 2}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := app.Composer.GraphBlock(ctx, reqs[i%len(reqs)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "blocks/s")
}

func BenchmarkImport_FB15k(b *testing.B) {
	fb, err := workload.LoadFB15k("")
	if err != nil {
		b.Skip(err)
	}
	benchImport(b, fb, len(fb.Triplets))
}

// BenchmarkImport_Synthetic imports the 100k-node / 500k-edge synthetic
// graph: ten times FB15k's nodes, so embedding and indexing weigh more.
func BenchmarkImport_Synthetic(b *testing.B) {
	benchImport(b, workload.NewSynthetic(workload.SyntheticOptions{Nodes: 100_000, Edges: 500_000}), 500_000)
}

func benchImport(b *testing.B, src workload.Source, triplets int) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		app, err := service.Open(ctx, service.Config{DataDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := ImportSource(ctx, app.Store, Tenant, src, 50_000); err != nil {
			b.Fatal(err)
		}
		if err := app.Close(); err != nil { // durable at the end
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(triplets)*float64(b.N)/b.Elapsed().Seconds(), "triplets/s")
}
