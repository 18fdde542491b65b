package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index/embed"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	data := fs.String("data", defaultDataDir, "data directory")
	addr := fs.String("addr", "127.0.0.1:7070", "listen address")
	sync := fs.Bool("sync", false, "fsync every write (survives power loss, slower)")
	adminToken := fs.String("admin-token", "", "operator token (default $KGCTX_ADMIN_TOKEN; generated into DIR/admin.token when the store has none)")
	maxImport := fs.Int64("max-import-bytes", 64<<20, "body limit of import routes")
	maxBody := fs.Int64("max-body-bytes", 1<<20, "body limit of every other route")
	verbose := fs.Bool("v", false, "debug logging")
	embURL := fs.String("embed-url", "", "OpenAI-compatible embeddings server (e.g. http://127.0.0.1:11434); default: the built-in lexical embedder")
	embModel := fs.String("embed-model", "", "embedding model name (with --embed-url)")
	embDim := fs.Int("embed-dim", 0, "embedding dimension (with --embed-url)")
	var tune tuning
	tune.register(fs)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := logger(stderr, level)
	var emb embed.Embedder
	if *embURL != "" {
		h, err := embed.NewHTTP(embed.HTTPOptions{BaseURL: *embURL, Model: *embModel, Dim: *embDim, APIKey: os.Getenv("KGCTX_EMBED_API_KEY")})
		if err != nil {
			return err
		}
		emb = h
	}
	start := time.Now()
	cfg := api.AppConfig{DataDir: *data, SyncWrites: *sync, Embedder: emb, Logger: log}
	if err := tune.apply(&cfg); err != nil {
		return err
	}
	app, err := api.OpenApp(ctx, cfg)
	if err != nil {
		return fmt.Errorf("open %s: %w", *data, err)
	}
	defer func() {
		if err := app.Close(); err != nil {
			log.Error("close store", "err", err)
		}
	}()
	if err := bootstrap(app, *data, *adminToken, stdout); err != nil {
		return err
	}
	srv, err := api.New(api.Config{App: app, MaxImportBytes: *maxImport, MaxBodyBytes: *maxBody})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "kgctx listening on http://%s (data %s, ready in %s)\n", ln.Addr(), *data, time.Since(start).Round(time.Millisecond))
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

// bootstrap makes sure an operator can get in: the given token (flag or
// $KGCTX_ADMIN_TOKEN) is registered as operator; with none given and no
// token in the store, one is generated into DIR/admin.token.
func bootstrap(app *api.App, dir, flagToken string, stdout io.Writer) error {
	secret := flagToken
	if secret == "" {
		secret = os.Getenv("KGCTX_ADMIN_TOKEN")
	}
	op := engine.Token{AgentID: "admin", Role: engine.RoleOperator}
	if secret != "" {
		if err := app.Store.PutToken(secret, op); err != nil {
			return fmt.Errorf("admin token: %w", err)
		}
		return nil
	}
	if app.Store.TokenCount() > 0 {
		return nil
	}
	secret = engine.NewTokenSecret()
	path := filepath.Join(dir, "admin.token")
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return fmt.Errorf("write admin token: %w", err)
	}
	if err := app.Store.PutToken(secret, op); err != nil {
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
