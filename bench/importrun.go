package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/kgctx/kgctx/api"
	kgclient "github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/bench/workload"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/engine/tripletio"
	"github.com/kgctx/kgctx/engine/tripletload"
)

// runImport measures the two bulk paths an extractor uses, each into an
// empty store: the offline importer (`kgctx import FILE`: validate the
// file, write it in batches, return once everything is durable and
// indexed) and the server (`kgctx import --server`: NDJSON batches posted
// to POST .../triplets, two requests in flight, each answered once stored
// and indexed). The workload is FB15k-237 train, or the synthetic graph
// when Nodes is set, written once as an NDJSON file.
func runImport(ctx context.Context, cfg Config) (*Report, error) {
	rep := &Report{Scenario: cfg.Scenario, Machine: machine()}
	gcfg := cfg
	gcfg.Scenario = "fb15k"
	if cfg.Nodes > 0 {
		gcfg.Scenario = "synthetic"
		if gcfg.Edges <= 0 {
			gcfg.Edges = 5 * gcfg.Nodes
		}
	}
	cfg.say("loading workload %s", gcfg.Scenario)
	wl, err := loadWorkload(gcfg)
	if err != nil {
		return nil, err
	}
	rep.Graph = wl.desc
	tmp, err := os.MkdirTemp("", "kgctx-bench-import-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "triplets.ndjson")
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := workload.EncodeNDJSON(f, wl.source); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	files := []tripletio.File{{Path: file}}

	cfg.say("offline import (as kgctx import)")
	start := time.Now()
	app, err := service.Open(ctx, service.Config{DataDir: filepath.Join(tmp, "offline"), Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	res, err := tripletload.Load(ctx, app.Store, Tenant, files, tripletio.LoadOptions{Format: tripletio.JSONL, AllowCrossOrg: true})
	if cerr := app.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("offline import: %w", err)
	}
	rep.Import = newImport(res, time.Since(start))
	cfg.say("imported %d triplets at %.0f/s", rep.Import.Triplets, rep.Import.TripletsPerSec)

	cfg.say("server import (NDJSON batches)")
	app, err = service.Open(ctx, service.Config{DataDir: filepath.Join(tmp, "server"), Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	defer app.Close()
	srv, err := api.New(api.Config{App: app})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	tok := auth.NewTokenSecret()
	if err := app.Tokens.PutToken(tok, auth.Token{OrgID: Tenant.Org, AgentID: "bench-importer", Role: auth.RoleImporter}); err != nil {
		return nil, err
	}
	cl, err := kgclient.New("http://"+ln.Addr().String(), tok, nil)
	if err != nil {
		return nil, err
	}
	start = time.Now()
	res, err = cl.ImportFiles(ctx, Tenant.Org, Tenant.Project, files, kgclient.FileOptions{Format: tripletio.JSONL})
	if err != nil {
		return nil, fmt.Errorf("server import: %w", err)
	}
	rep.HTTPImport = newImport(res, time.Since(start))
	cfg.say("imported %d triplets at %.0f/s", rep.HTTPImport.Triplets, rep.HTTPImport.TripletsPerSec)
	rep.PeakRSSMB = peakRSSMB()
	return rep, nil
}

func newImport(res engine.ImportResult, d time.Duration) *Import {
	s := d.Seconds()
	return &Import{Triplets: res.Accepted, Nodes: res.NodesCreated, Seconds: s, TripletsPerSec: float64(res.Accepted) / max(s, 1e-9)}
}
