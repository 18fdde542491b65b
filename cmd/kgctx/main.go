package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/kgctx/kgctx/api"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal the command winds down (an import stops
		// between batches and closes its store, a server drains), and says
		// so at once; a second one quits at once.
		<-sigs
		fmt.Fprintln(os.Stderr, "\nkgctx: interrupted: stopping (press Ctrl-C again to quit at once; what was committed stays)")
		cancel()
		<-sigs
		fmt.Fprintln(os.Stderr, "kgctx: quit")
		os.Exit(exitInterrupted)
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	os.Exit(report(err, os.Stderr))
}

// root is the command tree. It is built on each call (it is small) so that
// the help command can refer to it without an initialisation cycle.
func root() *command {
	return &command{
		name:    "kgctx",
		summary: "knowledge graph context blocks for AI coding agents",
		subs: []*command{
			serveCmd(), mcpCmd(), importCmd(), indexCmd(), graphCmd(), contextCmd(), observationsCmd(), nodesCmd(), projectsCmd(),
			tokenCmd(), benchCmd(), versionCmd(), helpCmd(),
		},
	}
}

// run executes the command line args (without the program name). Output
// goes to stdout and stderr; the returned error is what report prints.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = append([]string{"version"}, args[1:]...)
	}
	return root().exec(ctx, "kgctx", args, stdout, stderr)
}

// Exit statuses besides 0 and 1 (any other error).
const (
	exitUsage       = 2   // a misused command line
	exitInterrupted = 130 // stopped by SIGINT or SIGTERM, as shells report it
)

// exitError carries a process exit status whose message, if any, was
// already printed.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// cmdError is an error of one command, printed as "kgctx graph stats:
// message". usage marks a misused command line (exit 2, followed by a hint
// to --help); code, when set, is the exit status.
type cmdError struct {
	cmd   string // "kgctx graph stats"
	msg   string
	usage bool
	code  int
	err   error // wrapped, for errors.Is
}

func (e *cmdError) Error() string { return e.cmd + ": " + e.msg }
func (e *cmdError) Unwrap() error { return e.err }

// report prints err for a person and returns the process exit status.
func report(err error, stderr io.Writer) int {
	var ee exitError
	var ce *cmdError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ce):
		fmt.Fprintln(stderr, ce.Error())
		if ce.usage {
			fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", ce.cmd)
			return exitUsage
		}
		if ce.code != 0 {
			return ce.code
		}
		return 1
	}
	fmt.Fprintln(stderr, "kgctx:", api.Message(err))
	return 1
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
