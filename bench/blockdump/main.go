//go:build ignore

// blockdump composes graph blocks for the queries `kgctx bench` asks of a
// graph scenario and prints each as one JSON line, without its timings,
// so that two builds can be compared byte for byte over the same store
// (scripts/blockdiff.sh builds it into each revision's tree). It opens the
// data directory itself: no server may hold it.
//
// With --time it prints no block but measures what one costs: --warm
// blocks one at a time, then --workers goroutines composing blocks for
// the given duration, with the process's CPU time a block (getrusage),
// blocks a second, the resident set, the bytes allocated a block and the
// runtime's memory classes; --cpuprofile profiles that timed part alone
// (not the store's load), --memprofile writes a heap profile at the end.
// Built into an older revision's tree as blockdiff.sh does, it measures
// that revision the same way:
//
//	go run bench/blockdump/main.go --data DIR --nodes 1000000 --time 20s --cpuprofile cpu.out
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

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
	var t timing
	flag.DurationVar(&t.dur, "time", 0, "measure instead of dumping: the timed part's length")
	flag.IntVar(&t.warm, "warm", 1000, "--time: blocks composed one at a time first")
	flag.IntVar(&t.workers, "workers", 2, "--time: goroutines of the timed part")
	flag.StringVar(&t.cpuprof, "cpuprofile", "", "--time: CPU profile of the timed part")
	flag.StringVar(&t.memprof, "memprofile", "", "--time: heap profile at the end")
	flag.Parse()
	if err := run(*data, *scenario, *nodes, *edges, *n, *budget, t); err != nil {
		fmt.Fprintln(os.Stderr, "blockdump:", err)
		os.Exit(1)
	}
}

func run(data, scenario string, nodes, edges, n, budget int, t timing) error {
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
	t0 := time.Now()
	app, err := service.Open(ctx, service.Config{DataDir: data, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer app.Close()
	ten := engine.Tenant{Org: "bench_org", Project: "bench_proj"}
	if t.dur > 0 {
		fmt.Printf("open %.1f s; %s\n", time.Since(t0).Seconds(), status())
		return t.run(func(q string) error {
			_, err := app.Composer.GraphBlock(ctx, compose.GraphRequest{
				Identity: policy.Identity{AgentID: "bench", OrgID: ten.Org, Role: policy.RoleAgent},
				Scope:    ten, QueryText: q, BudgetTokens: budget, TopK: 10, Depth: 2})
			return err
		}, qs)
	}
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

// timing is the --time mode's settings.
type timing struct {
	dur              time.Duration
	warm, workers    int
	cpuprof, memprof string
}

// run composes t.warm blocks one at a time, then blocks from t.workers
// goroutines for t.dur, and prints what they cost.
func (t timing) run(block func(string) error, qs []string) error {
	rng := rand.New(rand.NewPCG(1, 2))
	c0 := cpuTime()
	for range t.warm {
		if err := block(qs[rng.IntN(len(qs))]); err != nil {
			return err
		}
	}
	if t.warm > 0 {
		fmt.Printf("warm: %d blocks, %.3f ms CPU a block; %s\n", t.warm, float64(cpuTime()-c0)/float64(t.warm)/1e6, status())
	}
	if t.cpuprof != "" {
		f, err := os.Create(t.cpuprof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	var n atomic.Int64
	var wg sync.WaitGroup
	var firstErr atomic.Value
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	deadline := time.Now().Add(t.dur)
	c0, t0 := cpuTime(), time.Now()
	for w := range t.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w)+10, 3))
			for time.Now().Before(deadline) {
				if err := block(qs[r.IntN(len(qs))]); err != nil {
					firstErr.Store(err)
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	wall, cpu := time.Since(t0), cpuTime()-c0
	if t.cpuprof != "" {
		pprof.StopCPUProfile()
	}
	if err, ok := firstErr.Load().(error); ok {
		return err
	}
	if n.Load() == 0 {
		return fmt.Errorf("no block composed in %v", t.dur)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("timed: %d blocks, %.0f blocks/s, %.3f ms CPU a block; %s; %d GCs, %.1f KiB allocated a block\n",
		n.Load(), float64(n.Load())/wall.Seconds(), float64(cpu)/float64(n.Load())/1e6, status(),
		ms.NumGC-ms0.NumGC, float64(ms.TotalAlloc-ms0.TotalAlloc)/float64(n.Load())/1024)
	printMemory()
	if t.memprof != "" {
		f, err := os.Create(t.memprof)
		if err != nil {
			return err
		}
		defer f.Close()
		runtime.GC()
		if err := pprof.WriteHeapProfile(f); err != nil {
			return err
		}
	}
	return nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func status() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return ""
	}
	defer f.Close()
	var parts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "VmRSS") || strings.HasPrefix(l, "VmHWM") {
			parts = append(parts, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(parts, ", ")
}

// printMemory prints where the runtime's memory goes (runtime/metrics),
// in MiB.
func printMemory() {
	names := []string{"/gc/heap/live:bytes", "/gc/heap/goal:bytes", "/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/unused:bytes", "/memory/classes/heap/free:bytes", "/memory/classes/heap/released:bytes",
		"/memory/classes/heap/stacks:bytes", "/memory/classes/metadata/other:bytes", "/memory/classes/metadata/mspan/inuse:bytes",
		"/memory/classes/other:bytes", "/memory/classes/total:bytes", "/gc/gogc:percent"}
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	metrics.Read(samples)
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v := s.Value.Uint64()
			if strings.HasSuffix(s.Name, "bytes") {
				v >>= 20
			}
			fmt.Printf("  %-45s %d\n", s.Name, v)
		}
	}
}
