package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/kgctx/kgctx/internal/suggest"
)

// command is one verb of the CLI. A group (kgctx itself, graph, token) has
// subs and dispatches on its first argument; a leaf has flags and a body.
// Every command answers -h and --help with its usage on stdout (exit 0).
type command struct {
	name    string
	summary string // one line, for listings
	about   string // a paragraph for the command's own help (optional)
	args    string // positional arguments for the usage line, e.g. "FILE..."
	// flags registers a leaf's flags on fs and returns its body, which runs
	// once they are parsed and the required ones are present.
	flags func(fs *flag.FlagSet) body
	// required names flags that must be given a non-empty value; each is
	// registered by flags.
	required []string
	subs     []*command
}

type body func(ctx context.Context, c *call) error

// call is one run of a leaf.
type call struct {
	path           string   // the command as typed: "kgctx graph stats"
	args           []string // positional arguments
	stdout, stderr io.Writer
}

// usagef is a misuse of the command line: printed with a hint to --help,
// exit status 2.
func (c *call) usagef(format string, a ...any) error {
	return &cmdError{cmd: c.path, msg: fmt.Sprintf(format, a...), usage: true}
}

func isHelpArg(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

func (c *command) find(name string) *command {
	for _, s := range c.subs {
		if s.name == name {
			return s
		}
	}
	return nil
}

func (c *command) exec(ctx context.Context, path string, args []string, stdout, stderr io.Writer) error {
	if c.subs != nil {
		return c.dispatch(ctx, path, args, stdout, stderr)
	}
	fs := newFlagSet(path)
	run := c.flags(fs)
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.printHelp(stdout, path, fs)
		return nil
	}
	if err != nil {
		return &cmdError{cmd: path, msg: flagError(fs, err), usage: true}
	}
	var missing []string
	for _, name := range c.required {
		if f := fs.Lookup(name); f == nil || f.Value.String() == "" {
			missing = append(missing, flagName(name))
		}
	}
	switch n := len(missing); {
	case n == 1:
		return &cmdError{cmd: path, msg: missing[0] + " is required", usage: true}
	case n > 1:
		return &cmdError{cmd: path, msg: strings.Join(missing[:n-1], ", ") + " and " + missing[n-1] + " are required", usage: true}
	}
	return run(ctx, &call{path: path, args: pos, stdout: stdout, stderr: stderr})
}

func (c *command) dispatch(ctx context.Context, path string, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		c.printHelp(stderr, path, nil)
		return exitError{exitUsage}
	}
	if isHelpArg(args[0]) {
		c.printHelp(stdout, path, nil)
		return nil
	}
	sub := c.find(args[0])
	if sub == nil {
		names := make([]string, len(c.subs))
		for i, s := range c.subs {
			names[i] = s.name
		}
		what := "command"
		if path != "kgctx" {
			what = "subcommand"
		}
		msg := fmt.Sprintf("unknown %s %q", what, args[0])
		if strings.HasPrefix(args[0], "-") {
			msg = fmt.Sprintf("name a %s first, got the flag %s", what, args[0])
			if path == "kgctx" && suggest.Nearest(strings.TrimLeft(args[0], "-"), []string{"version"}) != "" {
				msg += "; did you mean --version?"
			}
		} else if s := suggest.Nearest(args[0], names); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		} else {
			msg += " (" + strings.Join(names, ", ") + ")"
		}
		return &cmdError{cmd: path, msg: msg, usage: true}
	}
	return sub.exec(ctx, path+" "+sub.name, args[1:], stdout, stderr)
}

// printHelp writes the usage of c, typed as path; fs holds a leaf's flags.
func (c *command) printHelp(w io.Writer, path string, fs *flag.FlagSet) {
	if c.subs != nil {
		what := "SUBCOMMAND"
		if path == "kgctx" {
			what = "COMMAND"
			fmt.Fprintf(w, "kgctx: %s\n\n", c.summary)
		}
		fmt.Fprintf(w, "Usage: %s %s [flags]\n\n", path, what)
		if c.about != "" {
			fmt.Fprintf(w, "%s\n\n", c.about)
		}
		if what == "COMMAND" {
			fmt.Fprintln(w, "Commands:")
		} else {
			fmt.Fprintln(w, "Subcommands:")
		}
		tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
		for _, s := range c.subs {
			fmt.Fprintf(tw, "  %s\t%s\n", s.name, s.summary)
		}
		tw.Flush()
		fmt.Fprintf(w, "\nRun '%s %s --help' for its flags.\n", path, what)
		if path == "kgctx" {
			fmt.Fprintln(w, "Run 'kgctx --version' for the version and VCS commit.")
		}
		return
	}
	line := path
	for _, name := range c.required {
		line += " " + flagName(name) + " " + metavar(fs.Lookup(name))
	}
	line += " [flags]"
	if c.args != "" {
		line += " " + c.args
	}
	fmt.Fprintf(w, "Usage: %s\n\n", line)
	about := c.about
	if about == "" {
		about = strings.ToUpper(c.summary[:1]) + c.summary[1:] + "."
	}
	fmt.Fprintf(w, "%s\n\nFlags:\n", about)
	required := map[string]bool{}
	for _, n := range c.required {
		required[n] = true
	}
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		name := flagName(f.Name)
		if mv := metavar(f); mv != "" {
			name += " " + mv
		}
		usage := f.Usage
		switch {
		case required[f.Name]:
			usage += " (required)"
		case !isZeroDefault(f):
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(tw, "  %s\t%s\n", name, usage)
	})
	fmt.Fprintf(tw, "  -h, --help\tprint this help\n")
	tw.Flush()
}

// flagName is how the CLI writes a flag: --name, or -x for one letter.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// metavar names a flag's value in usage lines: "" for booleans, N for
// integers, X for other numbers, a word from metavars, else the last word
// of the flag's name in capitals (--embed-model MODEL).
func metavar(f *flag.Flag) string {
	if f == nil {
		return ""
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return ""
	}
	if mv, ok := metavars[f.Name]; ok {
		return mv
	}
	switch kind, _ := flag.UnquoteUsage(f); kind {
	case "int", "uint":
		return "N"
	case "float":
		return "X"
	case "duration":
		return "DURATION"
	}
	return strings.ToUpper(f.Name[strings.LastIndexByte(f.Name, '-')+1:])
}

var metavars = map[string]string{"data": "DIR", "datasets": "DIR", "addr": "HOST:PORT", "server": "URL", "embed-url": "URL",
	"cpuprofile": "FILE", "memprofile": "FILE"}

func isZeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return true
	}
	return false
}

func newFlagSet(path string) *flag.FlagSet {
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	// Errors and help are printed by exec, in the CLI's own words.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseArgs parses flags that may come before, between or after positional
// arguments ("kgctx import a.tsv b.tsv --org o"), which package flag alone
// does not allow. It returns the positional arguments; "--" ends the flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
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

var (
	undefinedFlagRE = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	flagRefRE       = regexp.MustCompile(`(flag|argument:|for) -([A-Za-z0-9][-A-Za-z0-9_]*)`)
)

// flagError rewrites a package flag parse error in the CLI's words: an
// unknown flag gets the nearest defined one suggested, and flags are
// written --name.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if m := undefinedFlagRE.FindStringSubmatch(msg); m != nil {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		out := "unknown flag " + flagName(m[1])
		if s := suggest.Nearest(m[1], names); s != "" {
			out += "; did you mean " + flagName(s) + "?"
		}
		return out
	}
	return flagRefRE.ReplaceAllStringFunc(msg, func(s string) string {
		m := flagRefRE.FindStringSubmatch(s)
		return m[1] + " " + flagName(m[2])
	})
}
