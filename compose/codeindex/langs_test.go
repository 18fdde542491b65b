package codeindex

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kgctx/kgctx/compose/codeindex/treesitter"
	"github.com/kgctx/kgctx/engine"
)

var update = flag.Bool("update", false, "rewrite the golden files of the language fixtures")

// parsers are shared by the tests (a module compiles in about half a
// second, many times that under -race); Run's own start of them is
// tested by TestLanguagesOwnParsers.
var (
	parsersOnce sync.Once
	parsersRT   *treesitter.Runtime
	parsersErr  error
)

func testParsers(t *testing.T) *treesitter.Runtime {
	t.Helper()
	parsersOnce.Do(func() { parsersRT, parsersErr = treesitter.New(context.Background(), nil) })
	if parsersErr != nil {
		t.Fatal(parsersErr)
	}
	return parsersRT
}

// TestLanguagesOwnParsers: a run without Options.Parsers starts its own,
// with their compiled code cached in ParserCache for the next run.
func TestLanguagesOwnParsers(t *testing.T) {
	dir, cache := t.TempDir(), filepath.Join(t.TempDir(), "parsers")
	writeTree(t, dir, map[string]string{"a.py": "def f():\n    g()\n\n\ndef g():\n    pass\n"})
	for range 2 {
		ts, err := Extract(context.Background(), dir, Options{ParserCache: cache})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(ts, func(tr engine.TripletInput) bool {
			return tr.Source == "a.f" && tr.Relationship == "calls" && tr.Target == "a.g"
		}) {
			t.Errorf("a.f calls a.g missing: %v", ts)
		}
	}
	if ents, err := os.ReadDir(cache); err != nil || len(ents) == 0 {
		t.Errorf("no compilation cache in %s: %v", cache, err)
	}
}

// golden renders triplets as the golden files pin them: every node once
// (type, location, signature, description), then every triplet.
func golden(ts []engine.TripletInput) string {
	nodes := map[string]string{}
	var lines []string
	node := func(name, typ string, loc *engine.Location, sig, desc string) {
		l := ""
		if loc != nil {
			l = fmt.Sprintf("%s:%d-%d", loc.File, loc.Line, loc.EndLine)
		}
		nodes[name] = strings.TrimRight(fmt.Sprintf("%s [%s] %s | %s | %s", name, typ, l, sig, desc), " |")
	}
	for _, t := range ts {
		node(t.Source, t.SourceType, t.SourceLocation, t.SourceSignature, t.SourceDescription)
		node(t.Target, t.TargetType, t.TargetLocation, t.TargetSignature, t.TargetDescription)
		lines = append(lines, t.Source+" "+t.Relationship+" "+t.Target)
	}
	slices.Sort(lines)
	var ns []string
	for _, n := range nodes {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return "# nodes\n" + strings.Join(ns, "\n") + "\n\n# triplets\n" + strings.Join(lines, "\n") + "\n"
}

// TestLanguageFixtures indexes each language's fixture project and
// compares what it states with its golden file (go test -update rewrites
// them; read the diff before committing one).
func TestLanguageFixtures(t *testing.T) {
	for _, lang := range []string{"python", "typescript", "java", "rust", "mixed"} {
		t.Run(lang, func(t *testing.T) {
			dir := filepath.Join("testdata", lang)
			if _, err := os.Stat(dir); err != nil {
				t.Skip("no fixture")
			}
			var warns []string
			ts, err := Extract(context.Background(), dir, Options{Parsers: testParsers(t), Warn: func(m string) { warns = append(warns, m) }})
			if err != nil {
				t.Fatal(err)
			}
			got := golden(ts)
			if len(warns) > 0 {
				got += "\n# warnings\n" + strings.Join(warns, "\n") + "\n"
			}
			file := filepath.Join("testdata", lang+".golden")
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from what the fixture states (go test -update rewrites it):\n%s", file, lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// TestLanguagesIncremental: a second run reads only the changed file,
// deletes what vanished from it, re-resolves the files that named it, and
// keeps learnt weights.
func TestLanguagesIncremental(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"app/util.py":   "def helper():\n    return 1\n\n\ndef gone():\n    return 2\n",
		"app/models.py": "class A:\n    pass\n\n\nclass B(A):\n    pass\n",
		"app/main.py":   "from app.util import helper, gone\n\n\ndef main():\n    helper()\n    gone()\n",
		"web/api.ts":    "export function get() { return post(); }\nfunction post() { return 1; }\n",
		"web/index.ts":  "import {get} from './api';\nexport function run() { get(); }\n",
	})
	s := newSink(t)
	ctx := context.Background()
	o := Options{Parsers: testParsers(t)}
	st, res, err := Run(ctx, dir, nil, s, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Full || res.FilesRead != 5 || res.Languages["python"] != 3 || res.Languages["typescript"] != 2 {
		t.Fatalf("first run: %s", res)
	}
	for _, want := range []string{"main.main calls util.helper", "main.main calls util.gone", "web.run calls api.get", "api.get calls api.post", "models.B extends models.A"} {
		if !slices.Contains(s.triplets(t), want) {
			t.Errorf("first run lacks %q", want)
		}
	}
	// A learnt weight on an edge that stays.
	if _, err := s.st.Import(ctx, s.t, []engine.TripletInput{{Source: "main.main", Relationship: "calls", Target: "util.helper", Weight: ptr(0.9),
		SourceExact: true, TargetExact: true}}, engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	// util.py loses gone and gains later; main.py is unchanged but its
	// call of gone no longer resolves.
	writeTree(t, dir, map[string]string{"app/util.py": "def helper():\n    return 1\n\n\ndef later():\n    return 3\n",
		"app/models.py": "class A:\n    pass\n\n\nclass B:\n    pass\n"})
	var warns []string
	o.Warn = func(m string) { warns = append(warns, m) }
	st, res, err = Run(ctx, dir, st, s, o)
	o.Warn = nil
	if err != nil {
		t.Fatal(err)
	}
	if res.Full || res.FilesRead != 2 || res.FilesUnchanged != 3 {
		t.Errorf("second run: %s", res)
	}
	got := s.triplets(t)
	if slices.Contains(got, "models.B extends models.A") || len(warns) > 0 {
		t.Errorf("a vanished extends edge stays (warnings %v)", warns)
	}
	if slices.Contains(got, "main.main calls util.gone") || slices.Contains(got, "app/util.py defines util.gone") {
		t.Errorf("vanished edges stay: %v", got)
	}
	if !slices.Contains(got, "app/util.py defines util.later") {
		t.Errorf("new symbol missing: %v", got)
	}
	if _, ok := s.id("util.gone"); ok {
		t.Error("the vanished symbol's node stays")
	}
	w := edgeWeight(t, s, "main.main", "calls", "util.helper")
	if w != 0.9 {
		t.Errorf("learnt weight %v after an incremental run, want 0.9", w)
	}
	// Nothing changed: nothing read, nothing written.
	_, res, err = Run(ctx, dir, st, s, o)
	if err != nil || res.FilesRead != 0 || res.Imported != 0 || res.DeletedNodes+res.DeletedTriplets != 0 {
		t.Errorf("third run: %s %v", res, err)
	}
	// The same as a fresh index of the tree.
	fresh := newSink(t)
	if _, _, err := Run(ctx, dir, nil, fresh, o); err != nil {
		t.Fatal(err)
	}
	if a, b := s.triplets(t), fresh.triplets(t); !slices.Equal(a, b) {
		t.Errorf("incremental != fresh:\n%s", lineDiff(strings.Join(b, "\n"), strings.Join(a, "\n")))
	}
}

func ptr(f float64) *float64 { return &f }

func edgeWeight(t *testing.T, s *storeSink, src, rel, dst string) float64 {
	t.Helper()
	var w float64 = -1
	if err := s.st.ExportTriplets(s.t, func(in *engine.TripletInput) error {
		if in.Source == src && in.Relationship == rel && in.Target == dst && in.Weight != nil {
			w = *in.Weight
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestLanguagesSince: with --since, a file git does not list as changed
// is not read, even if its content changed under it.
func TestLanguagesSince(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.py": "def f():\n    g()\n\n\ndef g():\n    pass\n", "b.py": "def h():\n    pass\n"})
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=a@b", "-c", "user.name=a"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "one")
	s := newSink(t)
	st, _, err := Run(context.Background(), dir, nil, s, Options{Parsers: testParsers(t)})
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, map[string]string{"b.py": "def h2():\n    pass\n", "c.py": "def k():\n    pass\n"})
	git("add", "b.py")
	git("commit", "-qm", "two")
	_, res, err := Run(context.Background(), dir, st, s, Options{Since: "HEAD~1", Parsers: testParsers(t)})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesRead != 2 || res.FilesUnchanged != 1 {
		t.Errorf("since: %s", res)
	}
	got := s.triplets(t)
	if !slices.Contains(got, "b.py defines b.h2") || !slices.Contains(got, "c.py defines c.k") || slices.Contains(got, "b.py defines b.h") {
		t.Errorf("since: %v", got)
	}
}

// TestLanguagesUntrusted: links out of the root are not followed,
// dependency folders are not walked, oversized files are skipped with a
// note, and a tree with nothing to read is refused before anything is
// written.
func TestLanguagesUntrusted(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.py": "def leaked():\n    pass\n", "pkg/x.ts": "export function leakedToo() {}\n"})
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"ok.py":                      "def fine():\n    pass\n",
		"node_modules/dep/index.js":  "function dep() {}\n",
		".venv/lib/site.py":          "def venv():\n    pass\n",
		"env/pyvenv.cfg":             "home = /usr\n",
		"env/lib/thing.py":           "def thing():\n    pass\n",
		"target/debug/build/out.rs":  "fn built() {}\n",
		"big.js":                     "function big() {}\n" + strings.Repeat("// padding\n", MaxFileSize/10),
		"vendor/github.com/x/y.java": "class Y {}\n",
	})
	if err := os.Symlink(filepath.Join(outside, "secret.py"), filepath.Join(dir, "linked.py")); err != nil {
		t.Skip("no symlinks here")
	}
	if err := os.Symlink(filepath.Join(outside, "pkg"), filepath.Join(dir, "pkg")); err != nil {
		t.Fatal(err)
	}
	var warns []string
	ts, err := Extract(context.Background(), dir, Options{Parsers: testParsers(t), Warn: func(m string) { warns = append(warns, m) }})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tr := range ts {
		names = append(names, tr.Source, tr.Target)
	}
	for _, bad := range []string{"secret.leaked", "linked.leaked", "x.leakedToo", "index.dep", "site.venv", "thing.thing", "out.built", "big.big", "y.Y"} {
		if slices.Contains(names, bad) {
			t.Errorf("%s was read", bad)
		}
	}
	if !slices.Contains(names, "ok.fine") {
		t.Errorf("ok.fine missing: %v", names)
	}
	all := strings.Join(warns, "\n")
	if !strings.Contains(all, "big.js") || !strings.Contains(all, "symbolic links") {
		t.Errorf("warnings: %s", all)
	}
	// Nothing to read at all.
	empty := t.TempDir()
	writeTree(t, empty, map[string]string{"README.md": "# x\n", "node_modules/a/b.js": "function b() {}\n"})
	s := newSink(t)
	if _, _, err := Run(context.Background(), empty, nil, s, Options{}); !errors.Is(err, ErrNotModule) {
		t.Errorf("empty tree: %v", err)
	}
	if err := Indexable(context.Background(), empty, ""); !errors.Is(err, ErrNotModule) {
		t.Errorf("Indexable of an empty tree: %v", err)
	}
	if len(s.triplets(t)) != 0 {
		t.Error("a refused tree wrote triplets")
	}
}
