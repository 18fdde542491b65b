package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/tripletio"
	"github.com/kgctx/kgctx/engine/tripletload"
)

func importCmd() *command {
	return &command{
		name:    "import",
		summary: "import triplet files into a project (offline, or through a running server)",
		about: "Import triplet files into a project: offline into a data directory (created if\n" +
			"absent), or through a running server with --server. FILE - is standard input;\n" +
			".gz files are decompressed. All or nothing as far as the input goes: every line\n" +
			"is checked first and a bad one is named (FILE: line N) with nothing written.\n" +
			"Imports merge: running the same import again creates nothing new.",
		args:     "FILE...",
		required: []string{"org", "project"},
		flags: func(fs *flag.FlagSet) body {
			var j importJob
			fs.StringVar(&j.ten.Org, "org", "", "org id")
			fs.StringVar(&j.ten.Project, "project", "", "project id")
			format := fs.String("format", "auto", "input format: auto, json, jsonl, tsv, csv, spo (SUBJECT|PREDICATE|OBJECT), nt (N-Triples)")
			fs.StringVar(&j.data, "data", defaultDataDir, "data directory (offline import)")
			fs.StringVar(&j.server, "server", "", "import through a running server at this URL instead")
			fs.StringVar(&j.token, "token", os.Getenv("KGCTX_TOKEN"), "bearer token for --server (default $KGCTX_TOKEN)")
			fs.IntVar(&j.batch, "batch", 0, "triplets per batch (default 50000 offline, 20000 per request)")
			fs.BoolVar(&j.quiet, "q", false, "no progress line")
			return func(ctx context.Context, c *call) error {
				if len(c.args) == 0 {
					return c.usagef("name at least one FILE (- for standard input)")
				}
				if err := engine.ValidateID(j.ten.Org); err != nil {
					return c.usagef("--org %q: %v", j.ten.Org, err)
				}
				if err := engine.ValidateID(j.ten.Project); err != nil {
					return c.usagef("--project %q: %v", j.ten.Project, err)
				}
				f, err := tripletio.ParseFormat(*format)
				if err != nil {
					return c.usagef("--format: %v", err)
				}
				if j.batch < 0 {
					return c.usagef("--batch must be positive")
				}
				j.format = f
				return j.run(ctx, c)
			}
		},
	}
}

// importJob is one kgctx import, flags parsed.
type importJob struct {
	ten                 engine.Tenant
	format              tripletio.Format
	data, server, token string
	batch               int
	quiet               bool
	// written, if set, is called after each batch written with the running
	// count (a hook for tests to interrupt an import part way).
	written func(n int)
}

func (j *importJob) run(ctx context.Context, c *call) error {
	files := make([]tripletio.File, len(c.args))
	for i, name := range c.args {
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
	p := &progress{w: c.stderr, on: !j.quiet && isTerminal(os.Stderr)}
	written := func(n int) {
		p.written(n)
		if j.written != nil {
			j.written(n)
		}
	}
	start := time.Now()
	var res engine.ImportResult
	var err error
	if j.server != "" {
		cl, cerr := client.New(j.server, j.token, nil)
		if cerr != nil {
			return c.usagef("--server/--token: %v", cerr)
		}
		res, err = cl.ImportFiles(ctx, j.ten.Org, j.ten.Project, files, client.FileOptions{Format: j.format, Batch: j.batch,
			Validated: p.validated, Written: written})
	} else {
		res, err = importLocal(ctx, j.data, j.ten, files, tripletio.LoadOptions{Format: j.format, Batch: j.batch, AllowCrossOrg: true,
			Validated: p.validated, Written: written}, c.stderr)
	}
	p.done()
	if err != nil {
		return importFailed(ctx, c, err, res, p.totalCount(), j.server != "")
	}
	el := time.Since(start)
	fmt.Fprintf(c.stdout, "imported %d triplets in %s (%.0f triplets/s): %d nodes created, %d edges created, %d merged\n",
		res.Accepted, el.Round(time.Millisecond), float64(res.Accepted)/max(el.Seconds(), 1e-9), res.NodesCreated, res.EdgesCreated, res.EdgesMerged)
	return nil
}

// importFailed turns the error of an import into what the person sees.
// After an interruption (Ctrl-C, SIGTERM) it says how far the import got:
// every batch is written all or nothing, so res counts exactly the
// committed triplets of an offline import (a server may also have written
// the requests in flight), and running the same import again merges: the
// triplets already written create nothing new. total is the number of
// triplets the input holds, 0 while it was still being checked.
func importFailed(ctx context.Context, c *call, err error, res engine.ImportResult, total int, remote bool) error {
	if ctx.Err() == nil {
		var le *tripletio.LineError
		if errors.As(err, &le) {
			// "FILE: line N: ...": a record of the input could not be read
			// or is invalid; the whole input is checked before anything
			// is written.
			return &cmdError{cmd: c.path, msg: api.Message(err) + " (nothing was written)", err: err}
		}
		return err
	}
	var msg string
	switch {
	case total == 0 && res.Accepted == 0:
		msg = "interrupted while checking the input; nothing was written"
	case remote:
		msg = fmt.Sprintf("interrupted: the server confirmed %d of %d triplets (requests in flight may have been written too)", res.Accepted, total)
	default:
		msg = fmt.Sprintf("interrupted: %d of %d triplets written (committed), the rest not", res.Accepted, total)
	}
	if res.Accepted > 0 || remote {
		msg += "; run the same import again to finish it: imports merge, so the triplets already written create nothing new"
	}
	return &cmdError{cmd: c.path, msg: msg, code: exitInterrupted, err: ctx.Err()}
}

// importLocal loads files into the store in dir, creating it if absent.
// The input is checked in full before anything is written; for a store
// that does not exist yet that check runs before it is created, so a bad
// file leaves no empty store behind. (Vector lengths are checked against
// the store, once it exists: a first import with vectors of the wrong
// length fails after creating it, still writing no triplet.)
func importLocal(ctx context.Context, dir string, ten engine.Tenant, files []tripletio.File, o tripletio.LoadOptions, stderr io.Writer) (engine.ImportResult, error) {
	exists, err := hasStore(dir)
	if err != nil {
		return engine.ImportResult{}, err
	}
	if !exists {
		if _, err := tripletio.ValidateFiles(files, o.Format, -1, nil, nil); err != nil {
			return engine.ImportResult{}, err
		}
	}
	app, err := openData(ctx, dir, create, stderr)
	if err != nil {
		var le *lockedError
		if errors.As(err, &le) {
			le.hint = ", or import through the running server with --server URL"
		}
		return engine.ImportResult{}, err
	}
	preds, err := app.Settings.Predicates(ten)
	if err != nil {
		app.Close()
		return engine.ImportResult{}, err
	}
	o.Relationships = preds.Set()
	res, err := tripletload.Load(ctx, app.Store, ten, files, o)
	// Close makes everything durable before the command reports success
	// (or how far an interrupted import got). Interrupted, it does not wait
	// for the indexes to catch up: they replay the store's change log at
	// the next open, and the person who pressed Ctrl-C gets the prompt back
	// at once.
	closeApp := app.Close
	if ctx.Err() != nil {
		closeApp = app.CloseQuick
	}
	if cerr := closeApp(); err == nil {
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

func (p *progress) totalCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total
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
