package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/codeindex"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/policy"
)

// runCode is the "code" scenario: a Go module (Config.Src) indexed as
// `kgctx index` does it, imported into an in-memory store, then code blocks
// (the graph block at the bug_fix budget, code map included) asked for work
// items made of the module's own doc sentences, in process and over HTTP.
func runCode(ctx context.Context, cfg Config) (*Report, error) {
	rep := &Report{Scenario: cfg.Scenario, Machine: machine()}
	src := cfg.Src
	if src == "" {
		src = "."
	}
	lines, files, err := goLines(src)
	if err != nil {
		return nil, err
	}
	cfg.say("indexing %s (%d lines in %d .go files)", src, lines, files)
	t0 := time.Now()
	ts, err := codeindex.Extract(ctx, src, codeindex.Options{})
	if err != nil {
		return nil, err
	}
	indexSecs := time.Since(t0).Seconds()
	app, err := service.Open(ctx, service.Config{InMemory: true, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	defer app.Close()
	t1 := time.Now()
	const batch = 50_000
	nodes := 0
	for i := 0; i < len(ts); i += batch {
		r, err := app.Store.Import(ctx, Tenant, slices.Clone(ts[i:min(i+batch, len(ts))]), engine.ImportOptions{NoWait: true})
		if err != nil {
			return nil, err
		}
		nodes += r.NodesCreated
	}
	if err := app.Store.Sync(ctx); err != nil {
		return nil, err
	}
	secs := time.Since(t1).Seconds()
	rep.Import = &Import{Triplets: len(ts), Nodes: nodes, Seconds: secs, TripletsPerSec: float64(len(ts)) / max(secs, 1e-9)}
	rep.Graph = fmt.Sprintf("Go module %s: %d lines in %d .go files, %d triplets, extracted in %.1f s", src, lines, files, len(ts), indexSecs)

	queries := codeQueries(ts, cfg.Queries, cfg.Seed)
	if len(queries) == 0 {
		return nil, fmt.Errorf("%w: %s has no documented function to ask about", ErrNoWorkload, src)
	}
	req := func(q string) compose.GraphRequest {
		return compose.GraphRequest{Identity: policy.Identity{AgentID: "bench", OrgID: Tenant.Org, Role: policy.RoleAgent},
			Scope: Tenant, QueryText: q, BudgetTokens: cfg.BudgetTokens, TopK: cfg.TopK, Depth: cfg.Depth}
	}
	cfg.say("in-process latency (%d blocks)", cfg.Queries)
	var bs BlockStats
	l, err := series(cfg.Queries, func(i int, record bool) error {
		b, err := app.Composer.GraphBlock(ctx, req(queries[i%len(queries)]))
		if err == nil && record {
			if b.Block != "" {
				bs.NonEmpty++
			}
			bs.MeanTriplets += float64(len(b.Triplets))
			bs.MeanSymbols += float64(len(b.CodeMap))
			bs.MeanTokens += float64(b.ActualTokens)
			bs.MeanCandidates += float64(b.Candidates)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	n := float64(cfg.Queries)
	bs.MeanTriplets, bs.MeanSymbols, bs.MeanTokens, bs.MeanCandidates = bs.MeanTriplets/n, bs.MeanSymbols/n, bs.MeanTokens/n, bs.MeanCandidates/n
	rep.Blocks = &bs
	rep.InProcess = &l
	bodies := make([][]byte, len(queries))
	for i, q := range queries {
		bodies[i], _ = json.Marshal(map[string]any{"scope": map[string]string{"orgId": Tenant.Org, "projectId": Tenant.Project},
			"queryText": q, "budgetTokens": cfg.BudgetTokens, "topK": cfg.TopK, "neighborhoodDepth": cfg.Depth})
	}
	if err := measureHTTP(ctx, cfg, app, rep, "/v1/context/graph", func(i int) []byte { return bodies[i%len(bodies)] }, cfg.Queries); err != nil {
		return nil, err
	}
	rep.RSSMB, rep.AnonMB, rep.PeakRSSMB = rssMB(), anonMB(), peakRSSMB()
	return rep, nil
}

// codeQueries samples n work items (with repeats when there are fewer):
// the doc sentences of the module's functions and methods, tests left out,
// in a seeded order.
func codeQueries(ts []engine.TripletInput, n int, seed uint64) []string {
	seen := map[string]bool{}
	var docs []string
	add := func(name, typ, desc string) {
		if (typ == codeindex.KindFunction || typ == codeindex.KindMethod) && desc != "" && !seen[desc] &&
			!strings.Contains(name, ".Test") && !strings.Contains(name, ".Benchmark") {
			seen[desc] = true
			docs = append(docs, desc)
		}
	}
	for _, t := range ts {
		add(t.Source, t.SourceType, t.SourceDescription)
		add(t.Target, t.TargetType, t.TargetDescription)
	}
	if len(docs) == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]string, n)
	for i := range out {
		out[i] = docs[rng.IntN(len(docs))]
	}
	return out
}

// goLines counts the lines of the .go files under dir (vendor and
// testdata directories aside, as go build sees a module).
func goLines(dir string) (lines, files int, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != dir && (n == "vendor" || n == "testdata" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines += strings.Count(string(b), "\n")
		files++
		return nil
	})
	return lines, files, err
}
