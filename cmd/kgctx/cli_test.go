package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// runCLI runs a command line in process, as main does, and returns what it
// printed and its exit status.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	code = report(err, &errb)
	return out.String(), errb.String(), code
}

// walk calls fn for every command of the tree with the words that name it.
func walk(c *command, path []string, fn func(path []string, c *command)) {
	fn(path, c)
	for _, s := range c.subs {
		walk(s, append(slices.Clone(path), s.name), fn)
	}
}

// leafFlags lists the flags a leaf registers.
func leafFlags(c *command) []*flag.Flag {
	if c.flags == nil {
		return nil
	}
	fs := newFlagSet("test")
	c.flags(fs)
	var out []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f) })
	return out
}

// TestHelpEveryCommand: every command and subcommand answers -h and --help
// with its usage on stdout and exit status 0, listing its flags (a leaf)
// or its subcommands (a group), and touches nothing on disk.
func TestHelpEveryCommand(t *testing.T) {
	t.Chdir(t.TempDir()) // the default --data is relative: it must stay absent
	n := 0
	walk(root(), nil, func(path []string, c *command) {
		for _, h := range []string{"-h", "--help"} {
			n++
			name := strings.TrimSpace("kgctx " + strings.Join(path, " "))
			t.Run(name+" "+h, func(t *testing.T) {
				out, errOut, code := runCLI(t, append(slices.Clone(path), h)...)
				if code != 0 || errOut != "" {
					t.Fatalf("exit %d, stderr %q", code, errOut)
				}
				if !strings.Contains(out, "Usage: "+name+" ") {
					t.Fatalf("no usage line for %q:\n%s", name, out)
				}
				for _, s := range c.subs {
					if !strings.Contains(out, "\n  "+s.name+" ") {
						t.Errorf("help does not list %s:\n%s", s.name, out)
					}
				}
				if c.subs == nil {
					for _, f := range leafFlags(c) {
						if !strings.Contains(out, "  "+flagName(f.Name)+" ") {
							t.Errorf("help does not list %s:\n%s", flagName(f.Name), out)
						}
					}
					for _, r := range c.required {
						if !strings.Contains(out, flagName(r)+" ") || !strings.Contains(out, "(required)") {
							t.Errorf("help does not mark %s required:\n%s", r, out)
						}
					}
				}
			})
		}
	})
	if n < 2*16 {
		t.Fatalf("walked %d help runs; the tree lost commands", n)
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Fatalf("help created %v", entries)
	}
	// kgctx --help names every command; kgctx help CMD is CMD --help.
	out, _, code := runCLI(t, "--help")
	for _, c := range root().subs {
		if code != 0 || !strings.Contains(out, "\n  "+c.name+" ") {
			t.Errorf("kgctx --help does not list %s:\n%s", c.name, out)
		}
	}
	direct, _, _ := runCLI(t, "graph", "stats", "--help")
	viaHelp, _, code := runCLI(t, "help", "graph", "stats")
	if code != 0 || viaHelp != direct {
		t.Fatalf("kgctx help graph stats (exit %d):\n%s\nwant:\n%s", code, viaHelp, direct)
	}
	// Help wins over a missing required flag, wherever it appears.
	if _, errOut, code := runCLI(t, "import", "a.tsv", "--help"); code != 0 || errOut != "" {
		t.Fatalf("import a.tsv --help: exit %d %q", code, errOut)
	}
}

// TestNoArgumentsIsUsageError: kgctx and a group alone print their usage
// to stderr and exit 2.
func TestNoArgumentsIsUsageError(t *testing.T) {
	for _, args := range [][]string{nil, {"graph"}, {"token"}} {
		out, errOut, code := runCLI(t, args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "Usage: kgctx") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestSuggestions: a mistyped flag, command or subcommand gets the nearest
// name suggested; one far from every name gets none. Exit status 2.
func TestSuggestions(t *testing.T) {
	cases := []struct {
		args []string
		want string // the first line of stderr
	}{
		{[]string{"graph", "stats", "--projet", "p"}, `kgctx graph stats: unknown flag --projet; did you mean --project?`},
		{[]string{"graph", "stats", "-dta", "d"}, `kgctx graph stats: unknown flag --dta; did you mean --data?`},
		{[]string{"import", "x.tsv", "--fromat", "tsv"}, `kgctx import: unknown flag --fromat; did you mean --format?`},
		{[]string{"serve", "--adr", ":1"}, `kgctx serve: unknown flag --adr; did you mean --addr?`},
		{[]string{"context", "--top_k", "3"}, `kgctx context: unknown flag --top_k; did you mean --top-k?`},
		{[]string{"graph", "stats", "--zzzzzzzz"}, `kgctx graph stats: unknown flag --zzzzzzzz`},
		{[]string{"imprt", "x"}, `kgctx: unknown command "imprt"; did you mean "import"?`},
		{[]string{"grpah", "stats"}, `kgctx: unknown command "grpah"; did you mean "graph"?`},
		{[]string{"servr"}, `kgctx: unknown command "servr"; did you mean "serve"?`},
		{[]string{"graph", "stat"}, `kgctx graph: unknown subcommand "stat"; did you mean "stats"?`},
		{[]string{"graph", "exprot"}, `kgctx graph: unknown subcommand "exprot"; did you mean "export"?`},
		{[]string{"token", "creat"}, `kgctx token: unknown subcommand "creat"; did you mean "create"?`},
		{[]string{"--verison"}, `kgctx: name a command first, got the flag --verison; did you mean --version?`},
		{[]string{"frobnicate"}, `kgctx: unknown command "frobnicate" (serve, mcp, import, index, graph, context, observations, nodes, projects, token, bench, version, help)`},
		{[]string{"graph", "query", "--org", "o", "--project", "p", "--limit", "x"}, `kgctx graph query: invalid value "x" for flag --limit: parse error`},
		{[]string{"graph", "stats", "--org"}, `kgctx graph stats: flag needs an argument: --org`},
	}
	for _, c := range cases {
		out, errOut, code := runCLI(t, c.args...)
		first, rest, _ := strings.Cut(errOut, "\n")
		if code != exitUsage || out != "" || first != c.want || !strings.HasPrefix(rest, "Run 'kgctx") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// TestRequiredFlagsNamed: leaving out a required flag names it plainly
// (not the validation error of an empty id), exit 2, and creates nothing.
// Table-driven over every leaf of the tree.
func TestRequiredFlagsNamed(t *testing.T) {
	t.Chdir(t.TempDir())
	checked := 0
	walk(root(), nil, func(path []string, c *command) {
		hasData := slices.ContainsFunc(leafFlags(c), func(f *flag.Flag) bool { return f.Name == "data" })
		for _, omit := range c.required {
			args := slices.Clone(path)
			for _, r := range c.required {
				if r != omit {
					args = append(args, flagName(r), "x1")
				}
			}
			if hasData {
				args = append(args, "--data", "fresh")
			}
			if c.args != "" {
				args = append(args, "input.tsv")
			}
			want := "kgctx " + strings.Join(path, " ") + ": " + flagName(omit) + " is required"
			out, errOut, code := runCLI(t, args...)
			if first, _, _ := strings.Cut(errOut, "\n"); code != exitUsage || out != "" || first != want {
				t.Errorf("%v: exit %d, stderr %q; want %q", args, code, errOut, want)
			}
			checked++
		}
	})
	if checked < 15 {
		t.Fatalf("only %d required flags checked", checked)
	}
	if _, errOut, code := runCLI(t, "graph", "stats"); code != exitUsage || !strings.HasPrefix(errOut, "kgctx graph stats: --org and --project are required\n") {
		t.Errorf("both missing: %d %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, "token", "create", "--agent", "a", "--data", "fresh"); code != exitUsage || !strings.HasPrefix(errOut, "kgctx token create: --org is required (except with --role operator)\n") {
		t.Errorf("token create without --org: %d %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, "graph", "stats", "--org", "bad org", "--project", "p", "--data", "fresh"); code != exitUsage || !strings.HasPrefix(errOut, `kgctx graph stats: --org "bad org": `) {
		t.Errorf("invalid --org: %d %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, "graph", "status", "--org", "o", "--data", "fresh"); code != exitUsage || !strings.HasPrefix(errOut, "kgctx graph status: --org and --project go together\n") {
		t.Errorf("status with --org alone: %d %q", code, errOut)
	}
	// serve's mistakes are refused before anything is created.
	t.Setenv("KGCTX_ADMIN_TOKEN", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--data", "fresh", "--addr", "7070"}, "needs a host and a colon"},
		{[]string{"serve", "--data", "fresh", "--addr", "127.0.0.1:http"}, "not a number"},
		{[]string{"serve", "--data", "fresh", "--admin-token", "short"}, "at least 32"},
		{[]string{"serve", "--data", "fresh", "--admin-token-file", "nowhere.secret"}, "--admin-token-file"},
	} {
		if _, errOut, code := runCLI(t, c.args...); code != exitUsage || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "engine:") {
			t.Errorf("%v: %d %q", c.args, code, errOut)
		}
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Fatalf("usage errors created %v", entries)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		out, errOut, code := runCLI(t, args...)
		if code != 0 || errOut != "" || !strings.HasPrefix(out, "kgctx ") || !strings.Contains(out, "commit ") || strings.Count(out, "\n") != 1 {
			t.Errorf("%v: exit %d, %q %q", args, code, out, errOut)
		}
	}
	set := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	cases := []struct {
		bi       *debug.BuildInfo
		override string
		prefix   string
	}{
		{nil, "", "kgctx devel (commit unknown) "},
		{&debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "(devel)"}}, "", "kgctx devel (commit unknown) go1.99 "},
		{&debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "v1.2.3"},
			Settings: set("vcs", "git", "vcs.revision", "0123abcd", "vcs.modified", "false", "vcs.time", "2026-01-02T03:04:05Z")}, "",
			"kgctx v1.2.3 (commit 0123abcd, 2026-01-02T03:04:05Z) go1.99 "},
		{&debug.BuildInfo{GoVersion: "go1.99", Settings: set("vcs.revision", "0123abcd", "vcs.modified", "true")}, "",
			"kgctx devel (commit 0123abcd, modified) go1.99 "},
		{&debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "v1.2.3"}}, "v2.0.0-rc1", "kgctx v2.0.0-rc1 (commit unknown) go1.99 "},
	}
	for _, c := range cases {
		if got := versionString(c.bi, c.override); !strings.HasPrefix(got, c.prefix) {
			t.Errorf("versionString = %q, want prefix %q", got, c.prefix)
		}
	}
}
