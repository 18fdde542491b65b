package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/kgctx/kgctx/compose/service"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/kgctx/kgctx/engine"
)

// openMode says whether a command may create the store it opens.
type openMode bool

const (
	// readOnly commands (graph status, stats, query, export; context)
	// refuse a directory without a store and create nothing: a mistyped
	// --data must not look like an empty graph.
	readOnly openMode = false
	// create commands (serve, import, graph add/import/clear, token
	// create) make the store when it is absent.
	create openMode = true
)

// hasStore reports whether dir holds a kgctx store: the Badger manifest in
// DIR/store, where service.Open keeps the engine's records (a test checks
// this against a store openData creates). A path that is missing, or not a
// directory, holds none.
func hasStore(dir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dir, "store", "MANIFEST"))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return false, nil
	}
	return false, err
}

// errNoStore is returned by read-only commands for a directory without a
// store; noStoreError names the directory.
var errNoStore = errors.New("no kgctx store")

func noStoreError(dir string) error {
	return fmt.Errorf("%w in %s (create one with kgctx serve or kgctx import)", errNoStore, dir)
}

// lockedError says in plain words that another process holds the store;
// it wraps engine.ErrLocked.
type lockedError struct {
	dir  string
	hint string // extra advice, e.g. the --server alternative of import
	err  error
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("the store in %s is in use by another kgctx process (Badger directory lock); stop it or use another --data directory%s", e.dir, e.hint)
}

func (e *lockedError) Unwrap() error { return e.err }

// openApp opens cfg.DataDir as serve and the offline commands do. In
// readOnly mode a directory without a store is refused before anything is
// created; a store locked by another process gets a plain message.
func openApp(ctx context.Context, cfg service.Config, mode openMode) (*service.App, error) {
	if mode == readOnly {
		ok, err := hasStore(cfg.DataDir)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", cfg.DataDir, err)
		}
		if !ok {
			return nil, noStoreError(cfg.DataDir)
		}
	}
	app, err := service.Open(ctx, cfg)
	if errors.Is(err, engine.ErrLocked) {
		return nil, &lockedError{dir: cfg.DataDir, err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", cfg.DataDir, err)
	}
	return app, nil
}

// openData opens the data directory for an offline command.
func openData(ctx context.Context, dir string, mode openMode, stderr io.Writer) (*service.App, error) {
	return openApp(ctx, service.Config{DataDir: dir, Logger: logger(stderr, slog.LevelWarn)}, mode)
}
