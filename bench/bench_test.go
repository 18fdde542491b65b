package bench

import (
	"context"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/bench/workload"
	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/policy"
)

// fb15kApp loads FB15k-237 once per test binary into a temporary store
// ($KGCTX_BENCH_DATA keeps it between runs).
var fb15k struct {
	once    sync.Once
	app     *api.App
	queries []string
	err     error
}

func loadFB15k(b *testing.B) (*api.App, []string) {
	fb15k.once.Do(func() {
		fb, err := workload.LoadFB15k("")
		if err != nil {
			fb15k.err = err
			return
		}
		dir := os.Getenv("KGCTX_BENCH_DATA")
		if dir == "" {
			dir, _ = os.MkdirTemp("", "kgctx-benchfb-*")
		}
		app, err := api.OpenApp(context.Background(), api.AppConfig{DataDir: dir})
		if err != nil {
			fb15k.err = err
			return
		}
		if st, _ := app.Store.Stats(Tenant); st.Triplets == 0 {
			if _, err := ImportSource(context.Background(), app.Store, Tenant, fb, 50_000); err != nil {
				fb15k.err = err
				return
			}
		}
		fb15k.app, fb15k.queries = app, fb.Queries
	})
	if fb15k.err != nil {
		b.Skip(fb15k.err)
	}
	return fb15k.app, fb15k.queries
}

func BenchmarkGraphBlock_FB15k(b *testing.B) {
	app, queries := loadFB15k(b)
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
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		app, err := api.OpenApp(ctx, api.AppConfig{DataDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := ImportSource(ctx, app.Store, Tenant, fb, 50_000); err != nil {
			b.Fatal(err)
		}
		if err := app.Close(); err != nil { // durable at the end
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(fb.Triplets))*float64(b.N)/b.Elapsed().Seconds(), "triplets/s")
}
