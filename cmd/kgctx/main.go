package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"
)

const usage = `kgctx: knowledge graph context blocks for AI coding agents

Usage:
  kgctx serve   [--data DIR] [--addr HOST:PORT] [--sync] [--admin-token T]
  kgctx import  FILE... --org ORG --project PROJECT [--format auto|json|jsonl|tsv|csv|spo|nt]
                [--data DIR | --server URL --token T]
  kgctx graph   status|stats|query|clear|add|export|import [--data DIR] [--org ORG --project PROJECT] [--json]
  kgctx context --org ORG --project PROJECT --query TEXT [--budget N] [--top-k N] [--depth N] [--json]
  kgctx token   create --org ORG --agent AGENT --role ROLE [--project P]... [--data DIR]
  kgctx bench   [fb15k|synthetic|hnsw|session|insession|rag] [--nodes N] [--edges N] [--queries N] [--json]

Run "kgctx COMMAND -h" for a command's flags.
`

// exitError carries a process exit status.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	var ee exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		os.Exit(ee.code)
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "kgctx:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError{2}
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return cmdServe(ctx, rest, stdout, stderr)
	case "import":
		return cmdImport(ctx, rest, stdout, stderr)
	case "graph":
		return cmdGraph(ctx, rest, stdout, stderr)
	case "context":
		return cmdContext(ctx, rest, stdout, stderr)
	case "token":
		return cmdToken(ctx, rest, stdout, stderr)
	case "bench":
		return cmdBench(ctx, rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "kgctx: unknown command %q\n\n%s", cmd, usage)
	return exitError{2}
}

// parse parses flags that may come before, between or after positional
// arguments ("kgctx import a.tsv b.tsv --org o"), which package flag alone
// does not allow. It returns the positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("kgctx "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// defaultDataDir is API.md's default data directory.
const defaultDataDir = "./kgctx-data"

func logger(stderr io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

// stringsFlag collects a repeatable flag.
type stringsFlag []string

func (s *stringsFlag) String() string { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

// isTerminal reports whether f is a terminal (not merely a character
// device: /dev/null is one too), where progress lines and prompts make sense.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
