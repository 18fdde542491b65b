package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/tripletio"
)

func cmdImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("import", stderr)
	org := fs.String("org", "", "org id (required)")
	project := fs.String("project", "", "project id (required)")
	format := fs.String("format", "auto", "input format: auto, json, jsonl, tsv, csv, spo (SUBJECT|PREDICATE|OBJECT), nt (N-Triples)")
	data := fs.String("data", defaultDataDir, "data directory (offline import)")
	server := fs.String("server", "", "import through a running server at this URL instead")
	tok := fs.String("token", os.Getenv("KGCTX_TOKEN"), "bearer token for --server (default $KGCTX_TOKEN)")
	batch := fs.Int("batch", 0, "triplets per batch (default 50000 offline, 20000 per request)")
	quiet := fs.Bool("q", false, "no progress line")
	names, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return errors.New("import: name at least one FILE (- for standard input)")
	}
	ten := engine.Tenant{Org: *org, Project: *project}
	if err := engine.ValidateID(ten.Org); err != nil {
		return fmt.Errorf("--org: %w", err)
	}
	if err := engine.ValidateID(ten.Project); err != nil {
		return fmt.Errorf("--project: %w", err)
	}
	f, err := tripletio.ParseFormat(*format)
	if err != nil {
		return err
	}
	if *batch < 0 {
		return errors.New("--batch must be positive")
	}
	files := make([]tripletio.File, len(names))
	for i, name := range names {
		files[i] = tripletio.File{Path: name}
		if name != "-" {
			continue
		}
		// Standard input is spooled so that it can be read twice: once to
		// validate everything, once to write.
		tmp, err := os.CreateTemp("", "kgctx-import-*")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		if _, err := io.Copy(tmp, os.Stdin); err != nil {
			tmp.Close()
			return fmt.Errorf("read standard input: %w", err)
		}
		tmp.Close()
		files[i] = tripletio.File{Path: tmp.Name(), Name: "-"}
	}
	p := &progress{w: stderr, on: !*quiet && isTerminal(os.Stderr)}
	start := time.Now()
	var res engine.ImportResult
	if *server != "" {
		c, cerr := client.New(*server, *tok, nil)
		if cerr != nil {
			return fmt.Errorf("--server/--token: %w", cerr)
		}
		res, err = c.ImportFiles(ctx, ten.Org, ten.Project, files, client.FileOptions{Format: f, Batch: *batch,
			Validated: p.validated, Written: p.written})
	} else {
		res, err = importLocal(ctx, *data, ten, files, tripletio.LoadOptions{Format: f, Batch: *batch, AllowCrossOrg: true,
			Validated: p.validated, Written: p.written}, stderr)
	}
	p.done()
	if err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Fprintf(stdout, "imported %d triplets in %s (%.0f triplets/s): %d nodes created, %d edges created, %d merged\n",
		res.Accepted, el.Round(time.Millisecond), float64(res.Accepted)/max(el.Seconds(), 1e-9), res.NodesCreated, res.EdgesCreated, res.EdgesMerged)
	return nil
}

func importLocal(ctx context.Context, dir string, ten engine.Tenant, files []tripletio.File, o tripletio.LoadOptions, stderr io.Writer) (engine.ImportResult, error) {
	app, err := openData(ctx, dir, stderr)
	if err != nil {
		return engine.ImportResult{}, err
	}
	preds, err := app.Settings.Predicates(ten)
	if err != nil {
		app.Close()
		return engine.ImportResult{}, err
	}
	o.Relationships = preds.Set()
	res, err := tripletio.Load(ctx, app.Store, ten, files, o)
	// Close makes everything durable before the command reports success.
	if cerr := app.Close(); err == nil {
		err = cerr
	}
	return res, err
}

// progress prints one updating line on a terminal: triplets, rate, ETA.
// Safe for concurrent use (remote imports report from several requests).
type progress struct {
	w     io.Writer
	on    bool
	mu    sync.Mutex
	start time.Time
	last  time.Time
	total int
}

func (p *progress) validated(total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.start = total, time.Now()
}

func (p *progress) written(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.on || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	rate := float64(n) / max(time.Since(p.start).Seconds(), 1e-9)
	eta := "?"
	if rate > 0 && p.total > 0 {
		eta = time.Duration(float64(p.total-n) / rate * float64(time.Second)).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r%d/%d triplets, %.0f triplets/s, ETA %s   ", n, p.total, rate, eta)
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
