package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"

	"github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/compose/codeindex"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
)

func indexCmd() *command {
	return &command{
		name:    "index",
		summary: "index a Go module's code as triplets (offline, or through a running server)",
		about: "Turn the Go module in DIR into a code graph with go/parser and go/types: packages, files,\n" +
			"functions, methods, types and interfaces; contains, defines, has_method, calls,\n" +
			"calls_via_interface, implements, embeds, uses_type, imports, tests. No LLM, no network:\n" +
			"imports outside the module and the standard library are left unresolved.\n" +
			"Incremental: a second run reads again only the packages whose files changed (by content,\n" +
			"or by git with --since REV), deletes what vanished and keeps learnt weights. The run's\n" +
			"state is kept in the user cache directory, per module, store and project; --full ignores it.",
		args:     "DIR",
		required: []string{"org", "project"},
		flags: func(fs *flag.FlagSet) body {
			var ten engine.Tenant
			fs.StringVar(&ten.Org, "org", "", "org id")
			fs.StringVar(&ten.Project, "project", "", "project id")
			data := fs.String("data", defaultDataDir, "data directory (offline index; the store must not be in use)")
			server := fs.String("server", "", "index through a running server at this URL instead")
			token := fs.String("token", os.Getenv("KGCTX_TOKEN"), "bearer token for --server (default $KGCTX_TOKEN)")
			since := fs.String("since", "", "take the changed files from git: those changed since this revision (and untracked ones)")
			full := fs.Bool("full", false, "read every package again, ignoring the previous run's state")
			tests := fs.Bool("tests", true, "index the _test.go files: test functions and what they test (--tests=false leaves them out)")
			modPath := fs.String("module", "", "import path of a tree without go.mod (go.mod's wins)")
			stateDir := fs.String("state-dir", "", "where the run's state is kept (default: the user cache directory, kgctx/index)")
			return func(ctx context.Context, c *call) error {
				if len(c.args) != 1 {
					return c.usagef("name one module directory (DIR)")
				}
				if err := engine.ValidateID(ten.Org); err != nil {
					return c.usagef("--org %q: %v", ten.Org, err)
				}
				if err := engine.ValidateID(ten.Project); err != nil {
					return c.usagef("--project %q: %v", ten.Project, err)
				}
				dir, err := filepath.Abs(c.args[0])
				if err != nil {
					return err
				}
				if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil && *modPath == "" {
					return fmt.Errorf("%s is not a Go module: no go.mod there (give its import path with --module to read it anyway)", c.args[0])
				}
				var sink codeindex.Sink
				target := ""
				if *server != "" {
					cl, err := client.New(*server, *token, nil)
					if err != nil {
						return c.usagef("--server/--token: %v", err)
					}
					sink, target = &serverSink{c: cl, t: ten}, *server
				} else {
					app, err := openData(ctx, *data, create, c.stderr)
					if err != nil {
						var le *lockedError
						if errors.As(err, &le) {
							le.hint = ", or index through the running server with --server URL"
						}
						return err
					}
					defer app.Close()
					abs, _ := filepath.Abs(*data)
					sink, target = &storeSink{app: app, t: ten}, abs
				}
				if *stateDir == "" {
					cache, err := os.UserCacheDir()
					if err != nil {
						return fmt.Errorf("no cache directory for the index state (%v): give --state-dir", err)
					}
					*stateDir = filepath.Join(cache, "kgctx", "index")
				}
				key := sha256.Sum256([]byte(dir + "\x00" + target + "\x00" + ten.Org + "\x00" + ten.Project))
				stateFile := filepath.Join(*stateDir, hex.EncodeToString(key[:12])+".state")
				prev, err := codeindex.LoadState(stateFile)
				if err != nil {
					return err
				}
				next, res, err := codeindex.Run(ctx, dir, prev, sink, codeindex.Options{Full: *full, Since: *since, ModulePath: *modPath, NoTests: !*tests,
					TypeCache: filepath.Join(*stateDir, "types-"+hex.EncodeToString(key[:12]))})
				if err != nil {
					return err
				}
				if err := next.Save(stateFile); err != nil {
					return fmt.Errorf("the index is written but its state is not (%v): the next run will read everything", err)
				}
				fmt.Fprintln(c.stdout, res)
				return nil
			}
		},
	}
}

// storeSink writes an index into an open store (offline).
type storeSink struct {
	app *service.App
	t   engine.Tenant
}

func (s *storeSink) Import(ctx context.Context, ts []engine.TripletInput) error {
	_, err := s.app.Import(ctx, s.t, ts, engine.ImportOptions{})
	return err
}

func (s *storeSink) DeleteTriplet(ctx context.Context, src, rel, dst string) error {
	return notFoundOK(s.app.Store.DeleteTriplet(ctx, s.t, src, rel, dst))
}

func (s *storeSink) DeleteNode(ctx context.Context, name string) error {
	id, ok, err := s.nodeID(name)
	if err != nil || !ok {
		return err
	}
	return notFoundOK(s.app.Store.DeleteNode(ctx, s.t, id))
}

func (s *storeSink) HasNode(_ context.Context, name string) (bool, error) {
	_, ok, err := s.nodeID(name)
	return ok, err
}

func (s *storeSink) nodeID(name string) (id string, ok bool, err error) {
	err = s.app.Store.View(func(v *engine.View) error {
		var n uint32
		if n, ok = v.Lookup(s.t, name); ok {
			id = v.NodeID(n)
		}
		return nil
	})
	return id, ok, err
}

func notFoundOK(err error) error {
	if errors.Is(err, engine.ErrNotFound) {
		return nil
	}
	return err
}

// serverSink writes an index through a running server.
type serverSink struct {
	c *client.Client
	t engine.Tenant
}

func (s *serverSink) Import(ctx context.Context, ts []engine.TripletInput) error {
	_, err := s.c.ImportTriplets(ctx, s.t.Org, s.t.Project, ts)
	return err
}

func (s *serverSink) DeleteTriplet(ctx context.Context, src, rel, dst string) error {
	err := s.c.DeleteJSON(ctx, client.ProjectPath(s.t.Org, s.t.Project)+"/triplets",
		map[string]string{"source": src, "relationship": rel, "target": dst})
	return apiNotFoundOK(err)
}

func (s *serverSink) DeleteNode(ctx context.Context, name string) error {
	id, ok, err := s.nodeID(ctx, name)
	if err != nil || !ok {
		return err
	}
	return apiNotFoundOK(s.c.DeleteJSON(ctx, client.ProjectPath(s.t.Org, s.t.Project)+"/nodes/"+url.PathEscape(id), nil))
}

func (s *serverSink) HasNode(ctx context.Context, name string) (bool, error) {
	_, ok, err := s.nodeID(ctx, name)
	return ok, err
}

// nodeID finds a node's id through the triplet query: every node of an
// index is the source or the target of a triplet.
func (s *serverSink) nodeID(ctx context.Context, name string) (string, bool, error) {
	for _, side := range []string{"subject", "object"} {
		var out struct {
			Triplets []engine.Triplet `json:"triplets"`
		}
		q := url.Values{side: {name}, "limit": {"1"}}
		if err := s.c.GetJSON(ctx, client.ProjectPath(s.t.Org, s.t.Project)+"/graph/triplets?"+q.Encode(), &out); err != nil {
			return "", false, err
		}
		if len(out.Triplets) > 0 {
			if side == "subject" {
				return out.Triplets[0].SourceNodeID, true, nil
			}
			return out.Triplets[0].TargetNodeID, true, nil
		}
	}
	return "", false, nil
}

func apiNotFoundOK(err error) error {
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return nil
	}
	return err
}
