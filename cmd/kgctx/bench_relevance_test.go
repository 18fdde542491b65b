package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/bench/relevance"
	"github.com/kgctx/kgctx/internal/datasets"
)

func TestBenchRelevanceFlags(t *testing.T) {
	ctx := context.Background()
	var out, errb bytes.Buffer
	err := run(ctx, []string{"bench", "relevance", "--sets", "codeloc,nope", "--datasets", t.TempDir()}, &out, &errb)
	if !errors.Is(err, relevance.ErrUnknownSet) {
		t.Fatalf("unknown set: err %v", err)
	}
	dir, err := datasets.Find("")
	if err != nil || !datasets.IsDir(filepath.Join(dir, "codeloc")) {
		t.Skip("codeloc dev set not available")
	}
	out.Reset()
	if err := run(ctx, []string{"bench", "relevance", "--sets", "codeloc", "--questions", "5", "--seed", "2", "--markdown", "--datasets", dir},
		&out, &errb); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "| codeloc | function recall | 500 |") || !strings.Contains(s, "| codeloc | 750 | kgctx session") ||
		!strings.Contains(s, ", 5 of ") {
		t.Fatalf("markdown:\n%s", s)
	}
}
