//go:build ignore

// build_codesets builds the codelangs relevance sets
// (relevance.CodeSets) from the repositories' git history and writes them
// to the shared datasets folder (codelangs/NAME.jsonl.gz): names, paths,
// commit ids and subjects, never the repositories' code.
//
//	go run ./bench/relevance/build_codesets.go -src DIR [-out DIR]
//
// DIR/NAME is a git repository (a work tree or a bare one) of each set's
// repository: DIR/click for pallets/click, and so on.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/kgctx/kgctx/bench/relevance"
	"github.com/kgctx/kgctx/compose/codeindex/treesitter"
	"github.com/kgctx/kgctx/internal/datasets"
)

func main() {
	src := flag.String("src", "", "folder of the repositories' git repositories (DIR/click, DIR/got, ...)")
	out := flag.String("out", "", "where to write the sets (default: the shared datasets folder's codelangs/)")
	flag.Parse()
	if err := run(*src, *out); err != nil {
		fmt.Fprintln(os.Stderr, "codesets:", err)
		os.Exit(1)
	}
}

func run(src, out string) error {
	if src == "" {
		return fmt.Errorf("give -src DIR")
	}
	if out == "" {
		dir, err := datasets.Find("")
		if err != nil {
			return err
		}
		out = filepath.Join(dir, relevance.CodeLangsDir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rt, err := treesitter.New(ctx, nil)
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())
	tmp, err := os.MkdirTemp("", "codesets-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, cs := range relevance.CodeSets {
		r, err := relevance.BuildCodeSet(ctx, cs, filepath.Join(src, cs.Name), tmp, rt)
		if err != nil {
			return fmt.Errorf("%s: %w", cs.Name, err)
		}
		file := filepath.Join(out, cs.Name+".jsonl.gz")
		if err := relevance.WriteCodeSet(file, r); err != nil {
			return err
		}
		fmt.Printf("%s: %s\n", file, relevance.Describe(r))
	}
	return nil
}
