package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/kgctx/kgctx/api"
)

// openData opens the data directory for an offline command. Badger locks the
// directory, so this fails while a server runs on it; the message says so.
func openData(ctx context.Context, dir string, stderr io.Writer) (*api.App, error) {
	app, err := api.OpenApp(ctx, api.AppConfig{DataDir: dir, Logger: logger(stderr, slog.LevelWarn)})
	if err != nil {
		if strings.Contains(err.Error(), "lock") {
			return nil, fmt.Errorf("open %s: %w (is a kgctx server running on it? stop it, or use --server)", dir, err)
		}
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return app, nil
}
