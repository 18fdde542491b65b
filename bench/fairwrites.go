package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/bench/workload"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
)

// FairWrites reports the fairwrites scenario: one org's bulk import, and
// the latency of another org's one-triplet writes issued while it runs.
type FairWrites struct {
	// Triplets is the size of the bulk import (one request).
	Triplets int `json:"triplets"`
	// Writes is the number of small writes per run.
	Writes int `json:"writes"`
	// IntervalMs is the time between two small writes' starts.
	IntervalMs float64 `json:"intervalMs"`
	// ImportAlone is the import into an idle store, Idle the small
	// writes after it (the reference figures).
	ImportAlone *Import  `json:"importAlone,omitempty"`
	Idle        *Latency `json:"idle,omitempty"`
	InProcess   *FairRun `json:"inProcess,omitempty"`
	HTTP        *FairRun `json:"http,omitempty"`
}

// FairRun is one bulk import with small writes of another org beside it.
type FairRun struct {
	Import Import `json:"import"`
	// Small is the latency of the other org's writes; During counts those
	// that were answered before the import was.
	Small  Latency `json:"small"`
	During int     `json:"during"`
}

// fairOrgs are the two orgs of the scenario: the importer and the org
// whose small writes must not wait for it.
var (
	fairBulk  = engine.Tenant{Org: "bulk_org", Project: "bulk_proj"}
	fairSmall = engine.Tenant{Org: "small_org", Project: "small_proj"}
)

// fairInterval is the time between the starts of two small writes: 20 of
// them span 2 s of the import, which takes several seconds on FB15k.
const fairInterval = 100 * time.Millisecond

// runFairWrites measures what one org's large import costs another org's
// small writes (issue 19, item 9). The bulk import is cfg.Triplets of
// FB15k-237's train split (default 200,000) sent as one write, answered
// once durable and indexed; 250 ms after it starts, cfg.Writes (default
// 20) one-triplet writes into another org start every 100 ms, each on its
// own goroutine (open loop: a stalled write does not delay the next one's
// start), and their latencies are reported. It runs in process (through
// service.App.Write with the server's 60 s request timeout as a context
// deadline) and over HTTP on loopback through the real server, each into
// a fresh store, after a reference run of the import alone.
func runFairWrites(ctx context.Context, cfg Config) (*Report, error) {
	rep := &Report{Scenario: "fairwrites", Machine: machine()}
	n := cfg.Triplets
	if n <= 0 {
		n = 200_000
	}
	writes := cfg.Writes
	if writes <= 0 {
		writes = 20
	}
	cfg.say("loading FB15k-237")
	fb, err := workload.LoadFB15k(cfg.Datasets)
	if err != nil {
		return nil, err
	}
	n = min(n, len(fb.Triplets))
	bulk := fb.Triplets[:n]
	rep.Graph = fmt.Sprintf("FB15k-237 train, first %d triplets, into %s; %d one-triplet writes into %s", n, fairBulk.Org, writes, fairSmall.Org)
	fw := &FairWrites{Triplets: n, Writes: writes, IntervalMs: ms(fairInterval)}
	rep.FairWrites = fw
	tmp, err := os.MkdirTemp("", "kgctx-bench-fair-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	open := func(name string) (*service.App, error) {
		return service.Open(ctx, service.Config{DataDir: filepath.Join(tmp, name), Logger: cfg.Logger})
	}

	// The import alone, and the small writes alone, for reference.
	cfg.say("import alone (%d triplets)", n)
	app, err := open("alone")
	if err != nil {
		return nil, err
	}
	im, err := fairImport(ctx, app, bulk)
	if err == nil {
		fw.ImportAlone = &im
		cfg.say("imported at %.0f triplets/s", im.TripletsPerSec)
		var idle []time.Duration
		for i := range writes {
			start := time.Now()
			if err = fairSmallWrite(ctx, app, i); err != nil {
				break
			}
			idle = append(idle, time.Since(start))
		}
		l := summarize(idle)
		fw.Idle = &l
	}
	if cerr := app.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}

	cfg.say("in process: import with small writes beside it")
	app, err = open("inprocess")
	if err != nil {
		return nil, err
	}
	run, err := fairRun(ctx, writes, func(ctx context.Context) (Import, error) { return fairImport(ctx, app, bulk) },
		func(ctx context.Context, i int) error { return fairSmallWrite(ctx, app, i) })
	if cerr := app.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("in process: %w", err)
	}
	fw.InProcess = run
	cfg.say("small writes p50 %.1f ms, p99 %.1f ms (%d of %d during the import)", run.Small.P50, run.Small.P99, run.During, writes)

	cfg.say("over HTTP: import with small writes beside it")
	app, err = open("http")
	if err != nil {
		return nil, err
	}
	defer app.Close()
	run, err = fairHTTP(ctx, app, bulk, writes)
	if err != nil {
		return nil, fmt.Errorf("over HTTP: %w", err)
	}
	fw.HTTP = run
	cfg.say("small writes p50 %.1f ms, p99 %.1f ms (%d of %d during the import)", run.Small.P50, run.Small.P99, run.During, writes)
	rep.PeakRSSMB = peakRSSMB()
	return rep, nil
}

// requestTimeout is the server's default request timeout (api.Config).
const requestTimeout = 60 * time.Second

// fairImport writes ts into the bulk org as one write, as the import route
// does, and returns once searches see it.
func fairImport(ctx context.Context, app *service.App, ts []engine.TripletInput) (Import, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	in := append([]engine.TripletInput(nil), ts...) // validation trims in place
	start := time.Now()
	res, err := app.Write(ctx, service.Write{Kind: service.WriteImport, Org: fairBulk.Org, Project: fairBulk.Project, Triplets: in})
	if err != nil {
		return Import{}, err
	}
	return *newImport(res.Import, time.Since(start)), nil
}

// fairTriplet is the i-th small write's triplet.
func fairTriplet(i int) engine.TripletInput {
	return engine.TripletInput{Source: fmt.Sprintf("probe service %d", i), Relationship: "depends_on", Target: fmt.Sprintf("probe store %d", i)}
}

func fairSmallWrite(ctx context.Context, app *service.App, i int) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	_, err := app.Write(ctx, service.Write{Kind: service.WriteImport, Org: fairSmall.Org, Project: fairSmall.Project,
		Triplets: []engine.TripletInput{fairTriplet(i)}})
	return err
}

// fairRun runs bulk and, starting 250 ms later, writes small writes every
// fairInterval, each on its own goroutine.
func fairRun(ctx context.Context, writes int, bulk func(context.Context) (Import, error), small func(context.Context, int) error) (*FairRun, error) {
	var (
		run      FairRun
		bulkErr  error
		bulkDone = make(chan struct{})
		doneAt   time.Time
	)
	go func() {
		defer close(bulkDone)
		run.Import, bulkErr = bulk(ctx)
		doneAt = time.Now()
	}()
	lat := make([]time.Duration, writes)
	ends := make([]time.Time, writes)
	errs := make([]error, writes)
	var wg sync.WaitGroup
	time.Sleep(250 * time.Millisecond)
	tick := time.NewTicker(fairInterval)
	defer tick.Stop()
	for i := range writes {
		if i > 0 {
			<-tick.C
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			errs[i] = small(ctx, i)
			ends[i] = time.Now()
			lat[i] = ends[i].Sub(start)
		}()
	}
	wg.Wait()
	<-bulkDone
	if bulkErr != nil {
		return nil, fmt.Errorf("bulk import: %w", bulkErr)
	}
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("small write %d: %w", i, err)
		}
		if ends[i].Before(doneAt) {
			run.During++
		}
	}
	run.Small = summarize(lat)
	return &run, nil
}

// fairHTTP is fairRun through the real server on loopback, with its
// default request timeout (60 s) and an import body limit raised to take
// the whole import in one request (FB15k-237's lines carry descriptions).
func fairHTTP(ctx context.Context, app *service.App, ts []engine.TripletInput, writes int) (*FairRun, error) {
	srv, err := api.New(api.Config{App: app, MaxImportBytes: 1 << 30})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	base := "http://" + ln.Addr().String()
	bulkTok, smallTok := auth.NewTokenSecret(), auth.NewTokenSecret()
	if err := app.Tokens.PutToken(bulkTok, auth.Token{OrgID: fairBulk.Org, AgentID: "bench-bulk", Role: auth.RoleImporter}); err != nil {
		return nil, err
	}
	if err := app.Tokens.PutToken(smallTok, auth.Token{OrgID: fairSmall.Org, AgentID: "bench-small", Role: auth.RoleImporter}); err != nil {
		return nil, err
	}
	var body bytes.Buffer
	if err := workload.EncodeNDJSON(&body, workload.SliceSource(ts)); err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func(ctx context.Context, tok string, t engine.Tenant, ctype string, b []byte) (engine.ImportResult, error) {
		var res engine.ImportResult
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/orgs/"+t.Org+"/projects/"+t.Project+"/triplets", bytes.NewReader(b))
		if err != nil {
			return res, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", ctype)
		resp, err := client.Do(req)
		if err != nil {
			return res, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return res, err
		}
		if resp.StatusCode != http.StatusOK {
			return res, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(data))
		}
		return res, json.Unmarshal(data, &res)
	}
	return fairRun(ctx, writes,
		func(ctx context.Context) (Import, error) {
			start := time.Now()
			res, err := post(ctx, bulkTok, fairBulk, "application/x-ndjson", body.Bytes())
			if err != nil {
				return Import{}, err
			}
			return *newImport(res, time.Since(start)), nil
		},
		func(ctx context.Context, i int) error {
			b, err := json.Marshal([]engine.TripletInput{fairTriplet(i)})
			if err != nil {
				return err
			}
			_, err = post(ctx, smallTok, fairSmall, "application/json", b)
			return err
		})
}

func (f *FairWrites) writeText(w io.Writer) {
	if i := f.ImportAlone; i != nil {
		fmt.Fprintf(w, "import alone:     %d triplets, %d nodes in %.2f s = %.0f triplets/s\n", i.Triplets, i.Nodes, i.Seconds, i.TripletsPerSec)
	}
	if l := f.Idle; l != nil {
		fmt.Fprintf(w, "small, idle:      p50 %.1f ms  p99 %.1f ms  max %.1f ms  (%d writes)\n", l.P50, l.P99, l.Max, l.N)
	}
	for _, r := range []struct {
		name string
		run  *FairRun
	}{{"in process", f.InProcess}, {"over HTTP", f.HTTP}} {
		if r.run == nil {
			continue
		}
		i, l := r.run.Import, r.run.Small
		fmt.Fprintf(w, "%-17s import %.2f s = %.0f triplets/s; small writes p50 %.1f ms  p99 %.1f ms  max %.1f ms  (%d of %d answered during the import, one every %.0f ms)\n",
			r.name+":", i.Seconds, i.TripletsPerSec, l.P50, l.P99, l.Max, r.run.During, l.N, f.IntervalMs)
	}
}
