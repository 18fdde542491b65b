package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/tripletio"
)

// importBatch is the number of triplets written per engine batch (offline)
// or per request (through a server).
const importBatch = 50_000

func cmdImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("import", stderr)
	org := fs.String("org", "", "org id (required)")
	project := fs.String("project", "", "project id (required)")
	format := fs.String("format", "auto", "input format: auto, json, jsonl, tsv, csv")
	data := fs.String("data", defaultDataDir, "data directory (offline import)")
	server := fs.String("server", "", "import through a running server at this URL instead")
	tok := fs.String("token", os.Getenv("KGCTX_TOKEN"), "bearer token for --server (default $KGCTX_TOKEN)")
	batch := fs.Int("batch", importBatch, "triplets per batch")
	quiet := fs.Bool("q", false, "no progress line")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
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
	if *batch <= 0 {
		return errors.New("--batch must be positive")
	}
	// Standard input is spooled so that it can be read twice: once to
	// validate everything, once to write.
	var cleanup []func()
	defer func() {
		for _, c := range cleanup {
			c()
		}
	}()
	for i, name := range files {
		if name != "-" {
			continue
		}
		tmp, err := os.CreateTemp("", "kgctx-import-*")
		if err != nil {
			return err
		}
		cleanup = append(cleanup, func() { os.Remove(tmp.Name()) })
		if _, err := io.Copy(tmp, os.Stdin); err != nil {
			tmp.Close()
			return fmt.Errorf("read standard input: %w", err)
		}
		tmp.Close()
		files[i] = tmp.Name()
	}
	p := &progress{w: stderr, on: !*quiet && isTerminal(os.Stderr), start: time.Now()}
	var res engine.ImportResult
	if *server != "" {
		res, err = importRemote(ctx, *server, *tok, ten, files, f, *batch, p)
	} else {
		res, err = importLocal(ctx, *data, ten, files, f, *batch, p, stderr)
	}
	p.done()
	if err != nil {
		return err
	}
	el := time.Since(p.start)
	fmt.Fprintf(stdout, "imported %d triplets in %s (%.0f triplets/s): %d nodes created, %d edges created, %d merged\n",
		res.Accepted, el.Round(time.Millisecond), float64(res.Accepted)/max(el.Seconds(), 1e-9), res.NodesCreated, res.EdgesCreated, res.EdgesMerged)
	return nil
}

// displayName is how errors name a file (the spool of stdin as "-").
func displayName(path string) string {
	if strings.Contains(path, "kgctx-import-") {
		return "-"
	}
	return path
}

// eachBatch streams files in batches of n triplets with their line numbers.
func eachBatch(files []string, f tripletio.Format, n int, fn func(file string, ts []engine.TripletInput, lines []int) error) error {
	for _, name := range files {
		rc, err := tripletio.OpenFile(name)
		if err != nil {
			return err
		}
		r, err := tripletio.NewReader(rc, f)
		if err != nil {
			rc.Close()
			return fmt.Errorf("%s: %w", displayName(name), err)
		}
		var ts []engine.TripletInput
		var lines []int
		for {
			var errs []*tripletio.LineError
			ts, lines, errs, err = tripletio.ReadBatch(r, ts[:0], lines[:0], n)
			if len(errs) > 0 {
				rc.Close()
				return fmt.Errorf("%s: %w", displayName(name), errs[0])
			}
			if err != nil && err != io.EOF {
				rc.Close()
				return fmt.Errorf("%s: %w", displayName(name), err)
			}
			if len(ts) > 0 {
				if ferr := fn(name, ts, lines); ferr != nil {
					rc.Close()
					return ferr
				}
			}
			if err == io.EOF {
				break
			}
		}
		rc.Close()
	}
	return nil
}

// validateFiles parses and validates every record; the first bad line is
// the error, naming file and line.
func validateFiles(files []string, f tripletio.Format, dim int, p *progress) (int, error) {
	total := 0
	err := eachBatch(files, f, 10_000, func(name string, ts []engine.TripletInput, lines []int) error {
		for i := range ts {
			if err := engine.ValidateTriplet(&ts[i], engine.Limits{}, dim); err != nil {
				return fmt.Errorf("%s: line %d: %w", displayName(name), lines[i], err)
			}
		}
		total += len(ts)
		p.scan(total)
		return nil
	})
	return total, err
}

func importLocal(ctx context.Context, dir string, ten engine.Tenant, files []string, f tripletio.Format, n int, p *progress, stderr io.Writer) (engine.ImportResult, error) {
	var sum engine.ImportResult
	app, err := openData(ctx, dir, stderr)
	if err != nil {
		return sum, err
	}
	// Pass 1: every line parses and validates, or nothing is written.
	p.total, err = validateFiles(files, f, app.Store.Dim(), p)
	if err != nil {
		app.Close()
		return sum, err
	}
	p.start = time.Now()
	err = eachBatch(files, f, n, func(name string, ts []engine.TripletInput, lines []int) error {
		res, err := app.Store.Import(ctx, ten, ts, engine.ImportOptions{AllowCrossOrg: true, Lines: lines, NoWait: true})
		if err != nil {
			return fmt.Errorf("%s: %w", displayName(name), err)
		}
		addResult(&sum, res)
		p.add(res.Accepted)
		return nil
	})
	// Close makes everything durable before the command reports success.
	if cerr := app.Close(); err == nil {
		err = cerr
	}
	return sum, err
}

func importRemote(ctx context.Context, server, tok string, ten engine.Tenant, files []string, f tripletio.Format, n int, p *progress) (engine.ImportResult, error) {
	var sum engine.ImportResult
	if tok == "" {
		return sum, errors.New("--server needs --token (or $KGCTX_TOKEN)")
	}
	// Pass 1: every line parses and validates before the first request
	// (vector lengths are the server's to check).
	var err error
	if p.total, err = validateFiles(files, f, -1, p); err != nil {
		return sum, err
	}
	p.start = time.Now()
	u := strings.TrimRight(server, "/") + "/v1/orgs/" + url.PathEscape(ten.Org) + "/projects/" + url.PathEscape(ten.Project) + "/triplets"
	client := &http.Client{Timeout: 10 * time.Minute}
	var buf bytes.Buffer
	err = eachBatch(files, f, min(n, 20_000), func(name string, ts []engine.TripletInput, lines []int) error {
		buf.Reset()
		enc := tripletio.NewEncoder(&buf)
		for i := range ts {
			if err := enc.Encode(&ts[i]); err != nil {
				return err
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(buf.Bytes()))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-ndjson")
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			var e struct {
				Error struct {
					Message string
					Lines   []engine.LineError
				}
			}
			if json.Unmarshal(body, &e) == nil && len(e.Error.Lines) > 0 {
				// The server numbers lines within the request.
				l := e.Error.Lines[0]
				return fmt.Errorf("%s: line %d: %s (server answered %d; earlier batches were imported)", displayName(name), lines[l.Line-1], l.Err, resp.StatusCode)
			}
			return fmt.Errorf("%s: server answered %d: %s", displayName(name), resp.StatusCode, strings.TrimSpace(string(body)))
		}
		var res engine.ImportResult
		if err := json.Unmarshal(body, &res); err != nil {
			return fmt.Errorf("server answer: %w", err)
		}
		addResult(&sum, res)
		p.add(res.Accepted)
		return nil
	})
	return sum, err
}

func addResult(sum *engine.ImportResult, r engine.ImportResult) {
	sum.Accepted += r.Accepted
	sum.NodesCreated += r.NodesCreated
	sum.EdgesCreated += r.EdgesCreated
	sum.EdgesMerged += r.EdgesMerged
}

// progress prints one updating line on a terminal: triplets, rate, ETA.
type progress struct {
	w     io.Writer
	on    bool
	start time.Time
	last  time.Time
	total int
	n     int
}

func (p *progress) scan(n int) {
	if p.on && time.Since(p.last) > 200*time.Millisecond {
		p.last = time.Now()
		fmt.Fprintf(p.w, "\rvalidating: %d triplets", n)
	}
}

func (p *progress) add(n int) {
	p.n += n
	if !p.on || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	el := time.Since(p.start).Seconds()
	rate := float64(p.n) / max(el, 1e-9)
	eta := "?"
	if rate > 0 && p.total > 0 {
		eta = (time.Duration(float64(p.total-p.n)/rate) * time.Second).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r%d/%d triplets, %.0f triplets/s, ETA %s   ", p.n, p.total, rate, eta)
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
