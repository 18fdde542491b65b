//go:build ignore

// blockdump composes graph blocks for the queries `kgctx bench` asks of a
// graph scenario and prints each as one JSON line, without its timings,
// so that two builds can be compared byte for byte over the same store
// (scripts/blockdiff.sh builds it into each revision's tree). It opens the
// data directory itself: no server may hold it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"

	"github.com/kgctx/kgctx/bench/workload"
	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/policy"
)

func main() {
	data := flag.String("data", "", "data directory of a `kgctx bench --data` run")
	scenario := flag.String("scenario", "synthetic", "synthetic or fb15k (the queries)")
	nodes := flag.Int("nodes", 100_000, "synthetic: nodes")
	edges := flag.Int("edges", 0, "synthetic: edges (default 5 x nodes)")
	n := flag.Int("n", 500, "blocks")
	budget := flag.Int("budget", 500, "token budget")
	flag.Parse()
	if err := run(*data, *scenario, *nodes, *edges, *n, *budget); err != nil {
		fmt.Fprintln(os.Stderr, "blockdump:", err)
		os.Exit(1)
	}
}

func run(data, scenario string, nodes, edges, n, budget int) error {
	if data == "" {
		return fmt.Errorf("--data is required")
	}
	var qs []string
	switch scenario {
	case "fb15k":
		dir, err := workload.FindDatasets(".")
		if err != nil {
			return err
		}
		fb, err := workload.LoadFB15k(dir)
		if err != nil {
			return err
		}
		qs = fb.Queries
	case "synthetic":
		if edges <= 0 {
			edges = 5 * nodes
		}
		qs = workload.NewSynthetic(workload.SyntheticOptions{Nodes: nodes, Edges: edges}).Queries(max(n, 1000))
	default:
		return fmt.Errorf("unknown scenario %q", scenario)
	}
	if len(qs) == 0 {
		return fmt.Errorf("no queries")
	}
	ctx := context.Background()
	app, err := service.Open(ctx, service.Config{DataDir: data, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer app.Close()
	ten := engine.Tenant{Org: "bench_org", Project: "bench_proj"}
	rng := rand.New(rand.NewPCG(1, 2)) // bench's query sampling
	enc := json.NewEncoder(os.Stdout)
	for range n {
		b, err := app.Composer.GraphBlock(ctx, compose.GraphRequest{
			Identity: policy.Identity{AgentID: "bench", OrgID: ten.Org, Role: policy.RoleAgent},
			Scope:    ten, QueryText: qs[rng.IntN(len(qs))], BudgetTokens: budget, TopK: 10, Depth: 2, Explain: true})
		if err != nil {
			return err
		}
		j, err := json.Marshal(b)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(j, &m); err != nil {
			return err
		}
		delete(m, "timings") // wall-clock times: the one part that may differ
		if err := enc.Encode(m); err != nil {
			return err
		}
	}
	return nil
}
