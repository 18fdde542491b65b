package main

import (
	"cmp"
	"context"
	"flag"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/kgctx/kgctx/bench"
	"github.com/kgctx/kgctx/bench/relevance"
)

func benchCmd() *command {
	return &command{
		name:    "bench",
		summary: "run a benchmark scenario: fb15k, synthetic, hnsw, session, insession, rag, import, fairwrites, code, relevance or cluster",
		args:    "[SCENARIO]",
		about: "Build or load a graph and report p50/p95/p99 latency, throughput, import rate,\n" +
			"recall and memory. SCENARIO is fb15k (default), synthetic, hnsw, session,\n" +
			"insession, rag, import or fairwrites (another org's small writes during a\n" +
			"200k-triplet import), code (a Go module indexed, then code blocks for its doc\n" +
			"sentences; --src DIR); relevance measures what blocks hold on the dev sets\n" +
			"(MetaQA, FB15k-237 questions, codeloc, LoCoMo; with --code-src, also\n" +
			"codeindex: kgctx index of the codeloc repositories against an Aider-style\n" +
			"repo map; --sets codelangs asks the same of three Python and three TypeScript\n" +
			"repositories, --sets codego of nats.go, each from its history) against\n" +
			"baselines; cluster\n" +
			"measures write throughput and block latency of kgctx serve alone, a cluster of\n" +
			"one node and a cluster of three (processes on loopback) on FB15k-237, an org's\n" +
			"move between shards under writes (--move-triplets), and with --upgrade-from OLD\n" +
			"a rolling upgrade from the binary OLD to this one.",
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
	var sets stringsFlag
	fs.Var(&sets, "sets", "relevance: families to run, comma-separated (default: "+strings.Join(relevance.Families, ",")+"; also "+strings.Join(relevance.ExtraFamilies, ",")+")")
	codeSrc := fs.String("code-src", "", "relevance: folder of the codeloc repositories' git repositories (DIR/cobra, DIR/chi, DIR/cli, DIR/mux, DIR/zerolog), for --sets codelangs the CodeSets' (DIR/click, DIR/starlette, DIR/rich, DIR/got, DIR/immer, DIR/vue), for --sets codego the GoSets' (DIR/nats: nats-io/nats.go); given, a run without --sets adds the codeindex set")
	src := fs.String("src", "", "code: the Go module to index (default: the current directory)")
	questions := fs.Int("questions", relevance.DefaultQuestions, "relevance: questions sampled per set and hop (0: all)")
	seed := fs.Uint64("seed", 1, "relevance: seed of the samples and of the generated questions' wording")
	markdown := fs.Bool("markdown", false, "relevance: print the results as markdown tables (bench/README.md)")
	misses := fs.String("misses", "", "relevance: write every kgctx block that misses (question, gold, block) to this file")
	upgradeFrom := fs.String("upgrade-from", "", "cluster: also a rolling upgrade under writes, from this older kgctx binary to this one (three nodes, one at a time)")
	moveTriplets := fs.Int("move-triplets", 20_000, "cluster: also an org's move between shards under writes (three nodes, R2), the org holding this many triplets (0: no move)")
	triplets := fs.Int("triplets", 50_000, "cluster: FB15k-237 triplets imported; fairwrites: the bulk import's triplets (default 200000)")
	return func(ctx context.Context, c *call) error {
		if len(c.args) == 1 && c.args[0] == "cluster" {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			n := *queries
			if !isSet(fs, "queries") {
				n = 500
			}
			rep, err := bench.RunCluster(ctx, bench.ClusterConfig{Executable: exe, Datasets: *datasets, Triplets: *triplets,
				Workers: *workers, Queries: n, Seed: *seed, Progress: c.stderr, UpgradeFrom: *upgradeFrom, MoveTriplets: *moveTriplets})
			if rep == nil {
				return err
			}
			werr := rep.WriteText(c.stdout)
			if *asJSON {
				werr = rep.WriteJSON(c.stdout)
			}
			return cmp.Or(err, werr)
		}
		if len(c.args) > 0 && c.args[0] == "relevance" {
			if len(c.args) > 1 {
				return c.usagef("one scenario at a time, got %v", c.args)
			}
			rc := relevance.Config{Datasets: *datasets, Sets: sets, Questions: *questions, Seed: *seed, CodeSrc: *codeSrc}
			if *misses != "" {
				f, err := os.Create(*misses)
				if err != nil {
					return err
				}
				defer f.Close()
				rc.Misses = f
			}
			if (!*asJSON && !*markdown) || isTerminal(os.Stderr) {
				rc.Progress = c.stderr
			}
			rep, err := relevance.Run(ctx, rc)
			switch {
			case err != nil:
				return err
			case *asJSON:
				return rep.WriteJSON(c.stdout)
			case *markdown:
				return rep.WriteMarkdown(c.stdout)
			}
			return rep.WriteText(c.stdout)
		}
		cfg := bench.Config{Nodes: *nodes, Edges: *edges, Queries: *queries, Workers: *workers,
			Duration: *duration, Datasets: *datasets, DataDir: *data, Observations: *observations, Src: *src}
		if isSet(fs, "triplets") {
			cfg.Triplets = *triplets
		}
		return runBench(ctx, c, cfg, *asJSON, *cpuProfile, *memProfile)
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

// isSet reports whether the command line gave flag name.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
