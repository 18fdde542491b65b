package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/kgctx/kgctx/compose/service"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/bench/workload"
	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/policy"
)

// Scenarios lists the scenario names Run knows.
var Scenarios = []string{"fb15k", "synthetic", "hnsw", "session", "insession", "rag", "import", "fairwrites", "code"}

// Config is one run. Zero fields mean defaults.
type Config struct {
	Scenario string // default "fb15k"
	// Nodes and Edges size the synthetic graph (default 100,000 / 500,000);
	// for hnsw, Nodes is the size of the generated clustered set (default
	// 100,000).
	Nodes, Edges int
	// Queries is the number of blocks asked per latency series (default
	// 2,000).
	Queries int
	// Workers is the number of concurrent HTTP clients of the throughput
	// run (default 2).
	Workers int
	// Duration of the throughput run (default 5 s).
	Duration time.Duration
	// Datasets is the shared datasets folder ("" = search upwards).
	Datasets string
	// DataDir holds the store; "" uses a temporary directory, removed after.
	DataDir string
	// BudgetTokens, TopK and Depth shape the blocks (defaults 500, 10, 2).
	BudgetTokens, TopK, Depth int
	// Observations is the number of generated observations of the session
	// scenario (default 100,000).
	Observations int
	// Triplets is the size of the fairwrites scenario's bulk import
	// (default 200,000); Writes its number of small writes (default 20).
	Triplets, Writes int
	// Src is the code scenario's Go module directory (default ".").
	Src string
	// Seed drives query sampling (default 1).
	Seed   uint64
	Logger *slog.Logger
	// AtEnd, when set, runs at the end of a graph scenario with the store
	// still open (the CLI writes a heap profile there).
	AtEnd func() error
	// Progress, when set, receives one line per phase.
	Progress io.Writer
}

func (c *Config) defaults() {
	if c.Scenario == "" {
		c.Scenario = "fb15k"
	}
	if c.Queries <= 0 {
		c.Queries = 2000
	}
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.Duration <= 0 {
		c.Duration = 5 * time.Second
	}
	if c.BudgetTokens <= 0 {
		c.BudgetTokens = compose.DefaultBudgetTokens
		if c.Scenario == "code" {
			c.BudgetTokens = 750 // a bug_fix session's
		}
	}
	if c.TopK <= 0 {
		c.TopK = compose.DefaultTopK
	}
	if c.Depth <= 0 {
		c.Depth = compose.DefaultDepth
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Scenario == "synthetic" {
		if c.Nodes <= 0 {
			c.Nodes = 100_000
		}
		if c.Edges <= 0 {
			c.Edges = 5 * c.Nodes
		}
	}
	if c.Scenario == "hnsw" && c.Nodes <= 0 {
		c.Nodes = 100_000
	}
	if c.Observations <= 0 {
		c.Observations = 100_000
	}
}

func (c *Config) say(format string, a ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", a...)
	}
}

// Run runs one scenario and returns its report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	switch cfg.Scenario {
	case "fb15k", "synthetic":
		return runGraph(ctx, cfg)
	case "hnsw":
		return runHNSW(ctx, cfg)
	case "session":
		return runSession(ctx, cfg)
	case "insession":
		return runInSession(ctx, cfg)
	case "rag":
		return runRAG(ctx, cfg)
	case "import":
		return runImport(ctx, cfg)
	case "fairwrites":
		return runFairWrites(ctx, cfg)
	case "code":
		return runCode(ctx, cfg)
	}
	return nil, fmt.Errorf("%w: %q (want one of %v)", ErrUnknownScenario, cfg.Scenario, Scenarios)
}

// Tenant is where the scenarios put their graph.
var Tenant = engine.Tenant{Org: "bench_org", Project: "bench_proj"}

// graphWorkload is a graph to import and the queries to ask of it.
type graphWorkload struct {
	desc    string
	source  workload.Source
	queries []string
}

func loadWorkload(cfg Config) (*graphWorkload, error) {
	switch cfg.Scenario {
	case "fb15k":
		fb, err := workload.LoadFB15k(cfg.Datasets)
		if err != nil {
			return nil, err
		}
		return &graphWorkload{desc: fmt.Sprintf("FB15k-237 train: %d triplets, %d entities", len(fb.Triplets), fb.Entities),
			source: fb, queries: fb.Queries}, nil
	default:
		s := workload.NewSynthetic(workload.SyntheticOptions{Nodes: cfg.Nodes, Edges: cfg.Edges})
		return &graphWorkload{desc: fmt.Sprintf("synthetic code graph: %d nodes, %d edges", cfg.Nodes, cfg.Edges),
			source: s, queries: s.Queries(max(cfg.Queries, 1000))}, nil
	}
}

// ImportSource writes src into the store in batches of batch triplets and
// reports the rate; the store and its indexes are up to date and durable
// when it returns (indexing of one batch overlaps storing the next).
func ImportSource(ctx context.Context, st *engine.Store, t engine.Tenant, src workload.Source, batch int) (Import, error) {
	start := time.Now()
	buf := make([]engine.TripletInput, 0, batch)
	var res Import
	flush := func() error {
		r, err := st.Import(ctx, t, buf, engine.ImportOptions{NoWait: true})
		if err != nil {
			return err
		}
		res.Triplets += r.Accepted
		res.Nodes += r.NodesCreated
		buf = buf[:0]
		return nil
	}
	err := src.Each(func(tr *engine.TripletInput) error {
		buf = append(buf, *tr)
		if len(buf) == batch {
			return flush()
		}
		return nil
	})
	if err == nil && len(buf) > 0 {
		err = flush()
	}
	if err == nil {
		err = st.Sync(ctx)
	}
	res.Seconds = time.Since(start).Seconds()
	res.TripletsPerSec = float64(res.Triplets) / max(res.Seconds, 1e-9)
	return res, err
}

// openData opens the run's store (cfg.DataDir, or a temporary directory)
// and imports src into it unless it holds the graph already. When probe is
// set, the store is then closed and reopened, and the time from the start
// of the reopen to the first successful probe (a served block) is reported
// with the resident set at that moment. close closes the app and removes
// a temporary directory.
func openData(ctx context.Context, cfg Config, src workload.Source, rep *Report, probe func(*service.App) error) (app *service.App, close func(), err error) {
	dir := cfg.DataDir
	cleanup := func() {}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "kgctx-bench-*"); err != nil {
			return nil, nil, err
		}
		cleanup = func() { os.RemoveAll(dir) }
	}
	open := func() (err error) {
		app, err = service.Open(ctx, service.Config{DataDir: dir, Logger: cfg.Logger})
		return err
	}
	start := time.Now()
	if err = open(); err != nil {
		cleanup()
		return nil, nil, err
	}
	opened := time.Since(start)
	close = func() { app.Close(); cleanup() }
	if st, _ := app.Store.Stats(Tenant); st.Triplets == 0 {
		cfg.say("importing")
		imp, err := ImportSource(ctx, app.Store, Tenant, src, 50_000)
		if err != nil {
			close()
			return nil, nil, fmt.Errorf("import: %w", err)
		}
		rep.Import = &imp
		cfg.say("imported %d triplets at %.0f/s", imp.Triplets, imp.TripletsPerSec)
	} else {
		rep.Notes = append(rep.Notes, fmt.Sprintf("reused the graph already in %s (%d triplets): no import measured; reopen measured in this fresh process", dir, st.Triplets))
		if probe != nil {
			// This open was the reopen: a fresh process loading the store.
			if err := probe(app); err != nil {
				close()
				return nil, nil, fmt.Errorf("first block after reopen: %w", err)
			}
			rep.Reopen = &Reopen{OpenSeconds: opened.Seconds(), FirstBlockSeconds: time.Since(start).Seconds(), RSSMB: rssMB(), AnonMB: anonMB()}
		}
		return app, close, nil
	}
	if probe == nil {
		return app, close, nil
	}
	cfg.say("reopening")
	if err := app.Close(); err != nil {
		cleanup()
		return nil, nil, err
	}
	runtime.GC()
	debug.FreeOSMemory()
	start = time.Now()
	if err = open(); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("reopen: %w", err)
	}
	opened = time.Since(start)
	if err := probe(app); err != nil {
		close()
		return nil, nil, fmt.Errorf("first block after reopen: %w", err)
	}
	rep.Reopen = &Reopen{OpenSeconds: opened.Seconds(), FirstBlockSeconds: time.Since(start).Seconds(), RSSMB: rssMB(), AnonMB: anonMB()}
	return app, close, nil
}

func runGraph(ctx context.Context, cfg Config) (*Report, error) {
	rep := &Report{Scenario: cfg.Scenario, Machine: machine()}
	cfg.say("loading workload %s", cfg.Scenario)
	wl, err := loadWorkload(cfg)
	if err != nil {
		return nil, err
	}
	rep.Graph = wl.desc
	rng := rand.New(rand.NewPCG(cfg.Seed, 2))
	queries := make([]string, cfg.Queries)
	for i := range queries {
		queries[i] = wl.queries[rng.IntN(len(wl.queries))]
	}
	req := func(q string) compose.GraphRequest {
		return compose.GraphRequest{Identity: policy.Identity{AgentID: "bench", OrgID: Tenant.Org, Role: policy.RoleAgent},
			Scope: Tenant, QueryText: q, BudgetTokens: cfg.BudgetTokens, TopK: cfg.TopK, Depth: cfg.Depth}
	}
	app, closeData, err := openData(ctx, cfg, wl.source, rep, func(app *service.App) error {
		_, err := app.Composer.GraphBlock(ctx, req(queries[0]))
		return err
	})
	if err != nil {
		return nil, err
	}
	defer closeData()
	// In process, then over HTTP through the real server and a real token.
	cfg.say("in-process latency (%d blocks)", len(queries))
	var bs BlockStats
	l, err := series(len(queries), func(i int, record bool) error {
		b, err := app.Composer.GraphBlock(ctx, req(queries[i]))
		if err == nil && record {
			if b.Block != "" {
				bs.NonEmpty++
			}
			bs.MeanTriplets += float64(len(b.Triplets))
			bs.MeanTokens += float64(b.ActualTokens)
			bs.MeanCandidates += float64(b.Candidates)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	n := float64(len(queries))
	bs.MeanTriplets, bs.MeanTokens, bs.MeanCandidates = bs.MeanTriplets/n, bs.MeanTokens/n, bs.MeanCandidates/n
	rep.Blocks = &bs
	rep.InProcess = &l
	bodies := make([][]byte, len(queries))
	for i, q := range queries {
		bodies[i], _ = json.Marshal(map[string]any{"scope": map[string]string{"orgId": Tenant.Org, "projectId": Tenant.Project},
			"queryText": q, "budgetTokens": cfg.BudgetTokens, "topK": cfg.TopK, "neighborhoodDepth": cfg.Depth})
	}
	if err := measureHTTP(ctx, cfg, app, rep, "/v1/context/graph", func(i int) []byte { return bodies[i%len(bodies)] }, len(queries)); err != nil {
		return nil, err
	}
	rep.RSSMB, rep.AnonMB = rssMB(), anonMB()
	rep.PeakRSSMB = peakRSSMB()
	if cfg.AtEnd != nil {
		if err := cfg.AtEnd(); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// series runs fn for i in [0, n) after a warm-up of min(200, n) calls
// (record false) and returns the latencies.
func series(n int, fn func(i int, record bool) error) (Latency, error) {
	for i := range min(200, n) {
		if err := fn(i, false); err != nil {
			return Latency{}, err
		}
	}
	lat := make([]time.Duration, 0, n)
	for i := range n {
		t := time.Now()
		if err := fn(i, true); err != nil {
			return Latency{}, err
		}
		lat = append(lat, time.Since(t))
	}
	return summarize(lat), nil
}

// measureHTTP serves app on loopback, then measures n sequential POSTs of
// body(i) to path (latency) and cfg.Workers concurrent clients for
// cfg.Duration (throughput), with a real agent token.
func measureHTTP(ctx context.Context, cfg Config, app *service.App, rep *Report, path string, body func(i int) []byte, n int) error {
	return measureHTTPPaths(ctx, cfg, app, rep, func(i int) (string, []byte) { return path, body(i) }, n)
}

// measureHTTPPaths is measureHTTP with a path per request.
func measureHTTPPaths(ctx context.Context, cfg Config, app *service.App, rep *Report, req func(i int) (string, []byte), n int) error {
	srv, err := api.New(api.Config{App: app})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	tok := auth.NewTokenSecret()
	if err := app.Tokens.PutToken(tok, auth.Token{OrgID: Tenant.Org, AgentID: "bench", Role: auth.RoleAgent}); err != nil {
		return err
	}
	cl := &client{url: "http://" + ln.Addr().String(), tok: tok,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
	cfg.say("HTTP latency (%d requests)", n)
	l, err := series(n, func(i int, _ bool) error { return cl.post(req(i)) })
	if err != nil {
		return err
	}
	rep.HTTP = &l
	cfg.say("HTTP throughput (%d workers, %s)", cfg.Workers, cfg.Duration)
	var done atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	stop := time.Now().Add(cfg.Duration)
	start := time.Now()
	for w := range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; time.Now().Before(stop); i += cfg.Workers {
				if err := cl.post(req(n + i)); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	secs := time.Since(start).Seconds()
	rep.Throughput = &Throughput{Workers: cfg.Workers, Blocks: int(done.Load()), Seconds: secs, BlocksPerSec: float64(done.Load()) / secs}
	return ctx.Err()
}

type client struct {
	url, tok string
	http     *http.Client
}

func (c *client) post(path string, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, c.url+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("bench: server answered %d: %s", resp.StatusCode, b)
	}
	return nil
}
