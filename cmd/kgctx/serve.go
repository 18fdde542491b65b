package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/kgctx/kgctx/compose/service"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/index/embed"
	"github.com/kgctx/kgctx/internal/secretfile"
)

func serveCmd() *command {
	return &command{
		name:    "serve",
		summary: "run the HTTP server on a data directory (created if absent)",
		flags: func(fs *flag.FlagSet) body {
			data := fs.String("data", defaultDataDir, "data directory")
			addr := fs.String("addr", "127.0.0.1:7070", "listen address")
			sync := fs.Bool("sync", false, "fsync every write (survives power loss, slower)")
			adminToken := fs.String("admin-token", "", "operator token, 32+ characters (visible to other users in ps: prefer $KGCTX_ADMIN_TOKEN or --admin-token-file; generated into DIR/admin.token when none is given and the store has none)")
			adminTokenFile := fs.String("admin-token-file", "", "read the operator token from this file (mode 0600 or stricter)")
			maxImport := fs.Int64("max-import-bytes", 64<<20, "body limit of import routes")
			maxBody := fs.Int64("max-body-bytes", 1<<20, "body limit of every other route")
			verbose := fs.Bool("v", false, "debug logging")
			metricsAddr := fs.String("metrics-addr", "", "also serve /metrics without a token on this address (HOST:PORT; a bare :PORT binds 127.0.0.1)")
			logFormat := fs.String("log-format", "text", "log lines as text (key=value) or json; one access line per request (method, route, status, bytes, durationMs, org, requestId)")
			embURL := fs.String("embed-url", "", "OpenAI-compatible embeddings server (e.g. http://127.0.0.1:11434); default: the built-in lexical embedder")
			embModel := fs.String("embed-model", "", "embedding model name (with --embed-url)")
			embDim := fs.Int("embed-dim", 0, "embedding dimension (with --embed-url)")
			readHeader := fs.Duration("read-header-timeout", api.DefaultReadHeaderTimeout, "time allowed to read a request's headers")
			readTimeout := fs.Duration("read-timeout", api.DefaultReadTimeout, "time allowed to read a whole request, body included (a stalled body gets 408)")
			idleTimeout := fs.Duration("idle-timeout", api.DefaultIdleTimeout, "how long a kept-alive connection may wait for its next request")
			var tune tuning
			tune.register(fs)
			var cl clusterFlags
			cl.register(fs)
			return func(ctx context.Context, c *call) error {
				if len(c.args) > 0 {
					return c.usagef("unexpected argument %q", c.args[0])
				}
				level := slog.LevelInfo
				if *verbose {
					level = slog.LevelDebug
				}
				var log *slog.Logger
				switch *logFormat {
				case "text":
					log = logger(c.stderr, level)
				case "json":
					log = slog.New(slog.NewJSONHandler(c.stderr, &slog.HandlerOptions{Level: level}))
				default:
					return c.usagef("--log-format %q: want text or json", *logFormat)
				}
				cfg := service.Config{DataDir: *data, SyncWrites: *sync, Logger: log}
				if *embURL != "" {
					h, err := embed.NewHTTP(embed.HTTPOptions{BaseURL: *embURL, Model: *embModel, Dim: *embDim, APIKey: os.Getenv("KGCTX_EMBED_API_KEY")})
					if err != nil {
						return c.usagef("--embed-url: %v", err)
					}
					cfg.Embedder = h
				}
				if err := tune.apply(&cfg); err != nil {
					return c.usagef("%v", err)
				}
				for _, d := range []struct {
					name string
					v    time.Duration
				}{{"read-header-timeout", *readHeader}, {"read-timeout", *readTimeout}, {"idle-timeout", *idleTimeout}} {
					if d.v <= 0 {
						return c.usagef("--%s must be positive", d.name)
					}
				}
				for _, a := range []struct{ flag, v string }{{"addr", *addr}, {"metrics-addr", *metricsAddr}} {
					if a.v == "" && a.flag == "metrics-addr" {
						continue
					}
					if err := checkAddr(a.v); err != nil {
						return c.usagef("--%s %q: %v", a.flag, a.v, err)
					}
				}
				admin, err := adminSecret(*adminToken, *adminTokenFile, c.stderr)
				if err != nil {
					return c.usagef("%v", err)
				}
				if err := cl.check(*addr, admin); err != nil {
					return c.usagef("%v", err)
				}
				return serve(ctx, c, cfg, *addr, admin, *metricsAddr, cl, api.Config{MaxImportBytes: *maxImport, MaxBodyBytes: *maxBody,
					ReadHeaderTimeout: *readHeader, ReadTimeout: *readTimeout, IdleTimeout: *idleTimeout, Version: buildVersion()})
			}
		},
	}
}

// serve binds addr, opens the store, makes sure an operator token exists
// and serves until ctx is done. The listener is bound first: a second
// server on a busy port fails before it touches the data directory (no
// store created, no admin.token or token written).
func serve(ctx context.Context, c *call, cfg service.Config, addr, adminToken, metricsAddr string, cl clusterFlags, scfg api.Config) error {
	log := cfg.Logger
	start := time.Now()
	listen := func(addr, flag string) (net.Listener, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			var oe *net.OpError
			if errors.As(err, &oe) && oe.Err != nil {
				err = oe.Err
			}
			return nil, fmt.Errorf("cannot listen on %s: %w (is another server using that port? choose another with %s); nothing was written to %s", addr, err, flag, cfg.DataDir)
		}
		return ln, nil
	}
	ln, err := listen(addr, "--addr")
	if err != nil {
		return err
	}
	served := false
	defer func() {
		if !served {
			ln.Close()
		}
	}()
	var mln net.Listener
	if metricsAddr != "" {
		if strings.HasPrefix(metricsAddr, ":") {
			metricsAddr = "127.0.0.1" + metricsAddr
		}
		if mln, err = listen(metricsAddr, "--metrics-addr"); err != nil {
			return err
		}
		defer mln.Close()
	}
	app, err := openApp(ctx, cfg, create)
	if err != nil {
		return err
	}
	defer func() {
		if err := app.Close(); err != nil {
			log.Error("close store", "err", err)
		}
	}()
	if err := bootstrap(app, cfg.DataDir, adminToken, c.stdout); err != nil {
		return err
	}
	if cfg.Embedder != nil {
		checkEmbedder(ctx, app, c.stderr)
	}
	if cl.name != "" {
		node, err := cl.start(ctx, app, cfg.DataDir, ln.Addr().String(), log)
		if err != nil {
			return err
		}
		defer node.Close()
		app.Writer, scfg.Cluster = node, clusterNode{node}
		fmt.Fprintf(c.stdout, "kgctx node %s of cluster %s (shards %s)\n", cl.nodeID, cl.name, strings.Join(node.Status().Serving, " "))
	}
	scfg.App = app
	srv, err := api.New(scfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "kgctx listening on http://%s (data %s, ready in %s)\n", ln.Addr(), cfg.DataDir, time.Since(start).Round(time.Millisecond))
	if mln != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", srv.MetricsHandler())
		msrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go msrv.Serve(mln)
		defer msrv.Close()
		fmt.Fprintf(c.stdout, "kgctx metrics on http://%s/metrics\n", mln.Addr())
	}
	served = true
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	return <-errc
}

// checkAddr checks a listen address: HOST:PORT or :PORT.
func checkAddr(addr string) error {
	if !strings.Contains(addr, ":") {
		return fmt.Errorf("an address needs a host and a colon before the port (127.0.0.1:%s), or at least the colon (:%s)", addr, addr)
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("want HOST:PORT, e.g. 127.0.0.1:7070")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return nil
}

// adminSecret is the operator token serve was given: --admin-token-file,
// else --admin-token (with a warning: argv is visible in ps), else
// $KGCTX_ADMIN_TOKEN; "" for none. It is checked here, before anything is
// created: at least auth.MinSecretLen characters, and a file that only its
// owner can read.
func adminSecret(flagToken, file string, stderr io.Writer) (string, error) {
	var secret, from string
	switch {
	case file != "" && flagToken != "":
		return "", errors.New("give --admin-token or --admin-token-file, not both")
	case file != "":
		b, err := secretfile.Read(file, 64<<10)
		if err != nil {
			return "", fmt.Errorf("--admin-token-file: %w", err)
		}
		secret, from = string(bytes.TrimSpace(b)), "--admin-token-file "+file
	case flagToken != "":
		fmt.Fprintln(stderr, "kgctx serve: warning: --admin-token is visible to every user of this machine (ps); prefer $KGCTX_ADMIN_TOKEN or --admin-token-file")
		secret, from = flagToken, "--admin-token"
	default:
		secret, from = os.Getenv("KGCTX_ADMIN_TOKEN"), "$KGCTX_ADMIN_TOKEN"
	}
	secret = strings.TrimSpace(secret)
	if secret != "" && len(secret) < auth.MinSecretLen {
		return "", fmt.Errorf("the operator token of %s has %d characters; at least %d are needed (for example: openssl rand -hex 24)", from, len(secret), auth.MinSecretLen)
	}
	return secret, nil
}

// bootstrap makes sure an operator can get in: the given token (flag, file
// or $KGCTX_ADMIN_TOKEN) is registered as the bootstrap operator token,
// replacing any earlier one; with none given and no token in the store,
// one is generated into DIR/admin.token.
func bootstrap(app *service.App, dir, secret string, stdout io.Writer) error {
	path := filepath.Join(dir, "admin.token")
	if secret != "" {
		n, err := app.Tokens.SetBootstrap(secret)
		if err != nil {
			return fmt.Errorf("admin token: %w", err)
		}
		if n > 0 {
			fmt.Fprintf(stdout, "the operator token given replaces the earlier one (revoked)\n")
			// A generated token in DIR/admin.token no longer works.
			if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) != secret {
				if err := os.Remove(path); err != nil {
					return fmt.Errorf("remove the revoked %s: %w", path, err)
				}
			}
		}
		return nil
	}
	if app.Tokens.TokenCount() > 0 {
		return nil
	}
	secret = auth.NewTokenSecret()
	if err := writePrivate(path, []byte(secret+"\n")); err != nil {
		return fmt.Errorf("write admin token: %w", err)
	}
	if _, err := app.Tokens.SetBootstrap(secret); err != nil {
		os.Remove(path)
		return fmt.Errorf("admin token: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	fmt.Fprintf(stdout, "operator token written to %s\n", abs)
	return nil
}

// writePrivate puts data in a new file of mode 0600 (os.CreateTemp) in
// path's directory, then renames it to path: whatever was at path, a file
// readable by others or a symbolic link, is replaced, never written
// through.
func writePrivate(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		if err := os.Remove(f.Name()); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("%w (and removing %s: %v)", werr, f.Name(), err)
		}
	}
	return werr
}

// embedderCheckTimeout bounds the start-up probe of an HTTP embedder.
const embedderCheckTimeout = 10 * time.Second

// checkEmbedder embeds one short text to find out, at start-up, whether
// the configured embedding server answers. It does not stop the server
// (graph blocks still work from what is indexed, and the embedder may come
// up later); it says plainly what will fail until it does.
func checkEmbedder(ctx context.Context, app *service.App, stderr io.Writer) {
	ctx, cancel := context.WithTimeout(ctx, embedderCheckTimeout)
	defer cancel()
	if _, err := app.Index.Embed(ctx, nil, "kgctx start-up check"); err != nil {
		fmt.Fprintf(stderr, "kgctx serve: warning: the embedding server (%s) cannot be used: %v\n"+
			"  imports and observations will be answered 503 (with Retry-After), and blocks will be empty, until it answers\n",
			app.Index.EmbedderName(), err)
	}
}
