package main

import (
	"context"
	"flag"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/kgctx/kgctx/bench"
)

func benchCmd() *command {
	return &command{
		name:    "bench",
		summary: "run a benchmark scenario: fb15k, synthetic, hnsw, session, insession or rag",
		args:    "[SCENARIO]",
		about: "Build or load a graph and report p50/p95/p99 latency, throughput, import rate,\n" +
			"recall and memory. SCENARIO is fb15k (default), synthetic, hnsw, session,\n" +
			"insession or rag.",
		flags: benchFlags,
	}
}

func benchFlags(fs *flag.FlagSet) body {
	nodes := fs.Int("nodes", 0, "synthetic: nodes (default 100000); hnsw: generated vectors (default 100000)")
	edges := fs.Int("edges", 0, "synthetic: edges (default 5 x nodes)")
	queries := fs.Int("queries", 2000, "blocks per latency series")
	observations := fs.Int("observations", 100_000, "session: generated observations")
	workers := fs.Int("workers", 2, "concurrent HTTP clients for the throughput run")
	duration := fs.Duration("duration", 5*time.Second, "length of the throughput run")
	datasets := fs.String("datasets", "", "shared datasets folder (default: search upwards, or $KGCTX_DATASETS)")
	data := fs.String("data", "", "keep the store in this directory (reused when it already holds the graph); default: a temporary one")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	memProfile := fs.String("memprofile", "", "write a heap profile taken at the end of the run, store still open, to this file")
	return func(ctx context.Context, c *call) error {
		return runBench(ctx, c, bench.Config{Nodes: *nodes, Edges: *edges, Queries: *queries, Workers: *workers,
			Duration: *duration, Datasets: *datasets, DataDir: *data, Observations: *observations}, *asJSON, *cpuProfile, *memProfile)
	}
}

func runBench(ctx context.Context, c *call, cfg bench.Config, asJSON bool, cpuProfile, memProfile string) error {
	stdout, stderr, pos := c.stdout, c.stderr, c.args
	scenario := "fb15k"
	if len(pos) > 0 {
		scenario = pos[0]
	}
	if len(pos) > 1 {
		return c.usagef("one scenario at a time, got %v", pos)
	}
	cfg.Scenario = scenario
	if !asJSON || isTerminal(os.Stderr) {
		cfg.Progress = stderr
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if memProfile != "" {
		cfg.AtEnd = func() error {
			f, err := os.Create(memProfile)
			if err != nil {
				return err
			}
			runtime.GC()
			if err := pprof.WriteHeapProfile(f); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		}
	}
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if asJSON {
		return rep.WriteJSON(stdout)
	}
	rep.WriteText(stdout)
	return nil
}
