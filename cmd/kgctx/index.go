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
	"strings"

	"github.com/kgctx/kgctx/api/client"
	"github.com/kgctx/kgctx/compose/codeindex"
	"github.com/kgctx/kgctx/compose/service"
	"github.com/kgctx/kgctx/engine"
)

func indexCmd() *command {
	return &command{
		name:    "index",
		summary: "index a repository's code as triplets: Go, Python, TypeScript/JavaScript, Java, Rust (offline, or through a running server)",
		about: "Turn the Go module in DIR into a code graph with go/parser and go/types: packages, files,\n" +
			"functions, methods, types and interfaces; contains, defines, has_method, calls,\n" +
			"calls_via_interface, implements, implemented_by, embeds, uses_type, imports, tests.\n" +
			"Python, TypeScript, JavaScript, Java and Rust files in DIR (with or without a go.mod) are\n" +
			"read with tree-sitter grammars run in WebAssembly: modules, files, functions, classes,\n" +
			"methods, interfaces and traits; contains, defines, has_method, calls and tests resolved by\n" +
			"name within the repository (import-aware), extends, implements, implemented_by, imports.\n" +
			"Dependency and build folders (node_modules, vendor, target, dist, build, virtual\n" +
			"environments, hidden folders) and generated or minified files are skipped.\n" +
			"Names are exact (Conn.close and Conn.Close are two nodes; init functions are\n" +
			"pkg.init@file.go); every symbol carries its file, line span and signature. Every file is\n" +
			"read whatever its build tags or platform (//go:build ignore aside). No LLM, no network:\n" +
			"imports outside the module are left unresolved; the standard library is no node.\n" +
			"Incremental: a second run reads again only the packages whose files changed (by content,\n" +
			"or by git with --since REV), deletes what vanished and keeps learnt weights. It deletes\n" +
			"only nodes of the kinds it writes and edges of its relationships.\n" +
			"\n" +
			"DIR is untrusted input. Skipped, with a note on stderr: files and directories reached\n" +
			"through symbolic links that leave DIR (counted, the first named; links that stay inside\n" +
			"are followed for files, never for directories), .go files over 1 MiB (named, with their\n" +
			"size) and .go names that are not regular files. An import cycle between the module's\n" +
			"packages is an error, and nothing is written. SIGINT or SIGTERM stops the run at once;\n" +
			"what was written stays, and the next run finishes it.\n" +
			"\n" +
			"The run's state (what it wrote, which a later run may delete) and a cache of imported\n" +
			"packages' declarations are kept in --state-dir (default: the user cache directory,\n" +
			"kgctx/index, made 0700), in files of mode 0600, one per module, store and project.\n" +
			"A state is used only by a run for the same store (offline: the store's id; else the\n" +
			"server's URL), org, project and module directory; one that does not match or decode is\n" +
			"ignored, with a note, and the module indexed afresh. A state directory that another user\n" +
			"owns or that group or others may write is refused. --full ignores the state.",
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
			stateDir := fs.String("state-dir", "", "where the run's state is kept, files of mode 0600 (default: the user cache directory, kgctx/index, mode 0700); refused if another user owns it or group or others may write it")
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
				if err := codeindex.Indexable(ctx, dir, *modPath); errors.Is(err, codeindex.ErrNotModule) {
					return fmt.Errorf("%s is not a Go module (no go.mod: give its import path with --module to read its Go files) and holds no Python, TypeScript, JavaScript, Java or Rust file", c.args[0])
				} else if err != nil {
					return err
				}
				// The state binds to the module's real directory: the
				// indexer reads it with links resolved.
				if dir, err = filepath.EvalSymlinks(dir); err != nil {
					return err
				}
				tighten := false // only a directory of our naming is tightened
				if *stateDir == "" {
					cache, err := os.UserCacheDir()
					if err != nil {
						return fmt.Errorf("no cache directory for the index state (%v): give --state-dir", err)
					}
					*stateDir, tighten = filepath.Join(cache, "kgctx", "index"), true
				}
				if err := codeindex.PrepareStateDir(*stateDir, tighten); err != nil {
					if errors.Is(err, codeindex.ErrUntrusted) {
						return &cmdError{cmd: c.path, msg: strings.TrimPrefix(err.Error(), "codeindex: ") +
							": whoever can write there could plant a state that names what to delete; give another --state-dir", err: err}
					}
					return fmt.Errorf("state directory: %w", err)
				}
				var sink codeindex.Sink
				bind := codeindex.Binding{Org: ten.Org, Project: ten.Project, Root: dir}
				if *server != "" {
					cl, err := client.New(*server, *token, nil)
					if err != nil {
						return c.usagef("--server/--token: %v", err)
					}
					sink, bind.Store = &serverSink{c: cl, t: ten}, "server:"+*server
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
					id, err := app.Store.ID()
					if err != nil {
						return fmt.Errorf("store id: %w", err)
					}
					sink, bind.Store = &storeSink{app: app, t: ten}, "store:"+id
				}
				key := sha256.Sum256([]byte(bind.Root + "\x00" + bind.Store + "\x00" + bind.Org + "\x00" + bind.Project))
				name := hex.EncodeToString(key[:12])
				stateFile := filepath.Join(*stateDir, name+".state")
				warn := func(msg string) { fmt.Fprintf(c.stderr, "%s: %s\n", c.path, msg) }
				prev, ignored, err := codeindex.LoadState(stateFile, bind)
				if err != nil {
					return fmt.Errorf("index state: %w", err)
				}
				if ignored != "" {
					warn(strings.TrimPrefix(ignored, "codeindex: ") + ": ignored, indexing afresh")
				}
				next, res, err := codeindex.Run(ctx, dir, prev, sink, codeindex.Options{Full: *full, Since: *since, ModulePath: *modPath, NoTests: !*tests,
					TypeCache: filepath.Join(*stateDir, "types-"+name), ParserCache: filepath.Join(*stateDir, "parsers"), Binding: bind, Warn: warn})
				if err != nil {
					return indexFailed(ctx, c, err, res, *server != "")
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

// indexFailed turns the error of an index run into what the person sees.
// The state is saved only after a run that finished, so after any failure
// the previous state stays: the next run computes the same changes again
// and finishes what this one began (imports merge; deletes of what is
// gone succeed).
func indexFailed(ctx context.Context, c *call, err error, res codeindex.Result, remote bool) error {
	if ctx.Err() != nil {
		msg := "interrupted before writing; nothing was written"
		if res.WriteStarted {
			msg = fmt.Sprintf("interrupted while writing: %d triplets written, %d triplets and %d nodes deleted", res.Imported, res.DeletedTriplets, res.DeletedNodes)
			if remote {
				msg += " (a request in flight may have been written too)"
			}
			msg += "; the state is not saved, so the next run makes the same changes again and finishes them"
		}
		return &cmdError{cmd: c.path, msg: msg, code: exitInterrupted, err: ctx.Err()}
	}
	if errors.Is(err, codeindex.ErrImportCycle) {
		return &cmdError{cmd: c.path, msg: strings.TrimPrefix(err.Error(), "codeindex: ") + " (Go refuses it too); nothing was written", err: err}
	}
	return err
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

func (s *storeSink) DeleteNode(ctx context.Context, id string) error {
	return notFoundOK(s.app.Store.DeleteNode(ctx, s.t, id))
}

func (s *storeSink) Node(_ context.Context, name string) (n codeindex.NodeRef, ok bool, err error) {
	err = s.app.Store.View(func(v *engine.View) error {
		var d uint32
		if d, ok = v.Lookup(s.t, name); ok {
			n = codeindex.NodeRef{ID: v.NodeID(d), Type: v.NodeType(d), Exact: v.NodeExact(d)}
		}
		return nil
	})
	return n, ok, err
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

func (s *serverSink) DeleteNode(ctx context.Context, id string) error {
	return apiNotFoundOK(s.c.DeleteJSON(ctx, client.ProjectPath(s.t.Org, s.t.Project)+"/nodes/"+url.PathEscape(id), nil))
}

func (s *serverSink) Node(ctx context.Context, name string) (codeindex.NodeRef, bool, error) {
	id, ok, err := s.nodeID(ctx, name)
	if err != nil || !ok {
		return codeindex.NodeRef{}, false, err
	}
	var n engine.Node
	if err := s.c.GetJSON(ctx, client.ProjectPath(s.t.Org, s.t.Project)+"/nodes/"+url.PathEscape(id), &n); err != nil {
		if apiNotFoundOK(err) == nil {
			return codeindex.NodeRef{}, false, nil
		}
		return codeindex.NodeRef{}, false, err
	}
	if n.OrgID != s.t.Org || n.ProjectID != s.t.Project {
		return codeindex.NodeRef{}, false, nil // an endpoint in another project: not ours
	}
	return codeindex.NodeRef{ID: n.ID, Type: n.Type, Exact: n.Exact}, true, nil
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
