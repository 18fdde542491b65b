package codeindex

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kgctx/kgctx/compose/codeindex/langs"
	"github.com/kgctx/kgctx/engine"
)

// storeSink indexes into a real in-memory store.
type storeSink struct {
	st *engine.Store
	t  engine.Tenant
}

func (s *storeSink) Import(ctx context.Context, ts []engine.TripletInput) error {
	_, err := s.st.Import(ctx, s.t, ts, engine.ImportOptions{})
	return err
}

func (s *storeSink) DeleteTriplet(ctx context.Context, a, r, b string) error {
	if err := s.st.DeleteTriplet(ctx, s.t, a, r, b); !errors.Is(err, engine.ErrNotFound) {
		return err
	}
	return nil
}

func (s *storeSink) DeleteNode(ctx context.Context, id string) error {
	if err := s.st.DeleteNode(ctx, s.t, id); !errors.Is(err, engine.ErrNotFound) {
		return err
	}
	return nil
}

func (s *storeSink) Node(_ context.Context, name string) (n NodeRef, ok bool, err error) {
	err = s.st.View(func(v *engine.View) error {
		var d uint32
		if d, ok = v.Lookup(s.t, name); ok {
			n = NodeRef{ID: v.NodeID(d), Type: v.NodeType(d), Exact: v.NodeExact(d)}
		}
		return nil
	})
	return n, ok, err
}

func (s *storeSink) id(name string) (id string, ok bool) {
	s.st.View(func(v *engine.View) error {
		var n uint32
		if n, ok = v.Lookup(s.t, name); ok {
			id = v.NodeID(n)
		}
		return nil
	})
	return id, ok
}

func newSink(t *testing.T) *storeSink {
	t.Helper()
	st, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &storeSink{st: st, t: engine.Tenant{Org: "o", Project: "p"}}
}

// triplets lists the store's triplets as "source rel target" lines.
func (s *storeSink) triplets(t *testing.T) []string {
	t.Helper()
	var out []string
	if err := s.st.ExportTriplets(s.t, func(in *engine.TripletInput) error {
		out = append(out, in.Source+" "+in.Relationship+" "+in.Target)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// copyFixture copies testdata/shapes to a temporary directory.
func copyFixture(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir("testdata/shapes", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/shapes", p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func edit(t *testing.T, file, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s lacks %q", file, old)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestExtractShapes(t *testing.T) {
	s := newSink(t)
	_, res, err := Run(context.Background(), "testdata/shapes", nil, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Full || res.PackagesRead != 4 {
		t.Errorf("result %+v", res)
	}
	got := s.triplets(t)
	for _, want := range []string{
		"shapes contains shapes.go", "shapes.go defines shapes.Total", "shapes.go defines shapes.Circle.Area",
		"shapes.Shape has_method shapes.Shape.Area", "shapes.Square has_method shapes.Square.Area",
		"shapes.Total calls_via_interface shapes.Shape.Area", // through the interface, marked
		"shapes.Total calls shapes.total",                    // exact names: total and Total are two nodes
		"shapes.Total uses_type shapes.Shape",
		"shapes.Square implements shapes.Shape", "shapes.Circle implements shapes.Shape", // pointer receiver
		"geom.Named implements shapes.Shape", // by the embedded Square's method
		"geom.Named embeds shapes.Square", "geom.Big calls shapes.Total", "geom.Named.Describe calls shapes.Square.Area",
		"shapes.TestTotal tests shapes.Total", "shapes.TestSquare_Area tests shapes.Square.Area",
		"geom imports shapes", "geom imports github.com/elsewhere/unresolved",
		// Another platform's file: its declarations.
		"shapes_windows.go defines shapes.Console", "shapes.Console has_method shapes.Console.Draw",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
	for _, l := range got {
		// Nothing outside the module is a symbol: math.Round and the
		// unresolved package's Limit are left out.
		if strings.Contains(l, "Round") || strings.Contains(l, "Limit") || strings.Contains(l, "calls math") || strings.Contains(l, "imports math") {
			t.Errorf("outside the module: %q", l)
		}
		if strings.Contains(l, "generated") || strings.Contains(l, "gen.go") {
			t.Errorf("a //go:build ignore file: %q", l)
		}
	}
	// Names, kinds, descriptions and the import path as an alias.
	if err := s.st.View(func(v *engine.View) error {
		for name, want := range map[string]string{"shapes.Square": "type", "shapes.Shape": "interface", "shapes.Total": "function",
			"shapes.Circle.Area": "method", "shapes": "package", "geom/geom.go": "file"} {
			n, ok := v.Lookup(s.t, name)
			if !ok {
				t.Errorf("no node %s", name)
				continue
			}
			if nd := v.Node(n); nd.Type != want {
				t.Errorf("%s: type %q, want %q", name, nd.Type, want)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Exact names, locations and signatures, as the composer reads them.
	if err := s.st.View(func(v *engine.View) error {
		n, ok := v.Lookup(s.t, "shapes.Total")
		if !ok || !v.NodeExact(n) {
			t.Fatalf("shapes.Total: %v exact %v", ok, ok && v.NodeExact(n))
		}
		if l, ok := v.NodeLocation(n); !ok || l != (engine.Location{File: "shapes.go", Line: 25, EndLine: 31}) {
			t.Errorf("shapes.Total at %+v %v", l, ok)
		}
		if sig := v.NodeSignature(n); sig != "func Total(ss []Shape) float64" {
			t.Errorf("shapes.Total signature %q", sig)
		}
		if n, ok := v.Lookup(s.t, "shapes.total"); !ok || v.NodeSignature(n) != "func total(x float64) float64" {
			t.Errorf("shapes.total: %v", ok)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	id, _ := s.id("shapes.Square")
	if n, err := s.st.Node(s.t, id); err != nil || n.Description != "Square is a square." {
		t.Errorf("description %q %v", n.Description, err)
	}
	id, _ = s.id("shapes")
	if n, err := s.st.Node(s.t, id); err != nil || !slices.Contains(n.Aliases, "example.com/shapes") {
		t.Errorf("the import path is no alias of the package: %v %v", n.Aliases, err)
	}
}

func TestIncremental(t *testing.T) {
	ctx := context.Background()
	dir := copyFixture(t)
	s := newSink(t)
	st, _, err := Run(ctx, dir, nil, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first := s.triplets(t)
	// Re-indexing what did not change reads nothing and writes nothing.
	st, res, err := Run(ctx, dir, st, s, Options{})
	if err != nil || res.PackagesRead != 0 || res.Imported != 0 || res.DeletedNodes+res.DeletedTriplets != 0 {
		t.Fatalf("unchanged re-run: %+v %v", res, err)
	}
	if got := s.triplets(t); !slices.Equal(got, first) {
		t.Fatal("an unchanged re-run changed the store")
	}
	// A learnt weight (as feedback leaves it) survives a re-index.
	w := 0.9
	if _, err := s.st.Import(ctx, s.t, []engine.TripletInput{{Source: "shapes.Square", Relationship: "has_method", Target: "shapes.Square.Area", Weight: &w, SourceExact: true, TargetExact: true}}, engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	// Circle goes; only its package is read again.
	edit(t, filepath.Join(dir, "shapes.go"), "// Circle is a circle.\ntype Circle struct{ R float64 }\n\n// Area is the circle's area.\nfunc (c *Circle) Area() float64 { return math.Pi * c.R * c.R }\n", "")
	st, res, err = Run(ctx, dir, st, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.PackagesRead != 1 || res.DeletedNodes != 2 {
		t.Errorf("after removing Circle: %+v", res)
	}
	for _, l := range s.triplets(t) {
		if strings.Contains(l, "Circle") {
			t.Errorf("stale: %s", l)
		}
	}
	if _, ok := s.id("shapes.Circle"); ok {
		t.Error("shapes.Circle still a node")
	}
	var weight float64
	ts, err := s.st.QueryTriplets(s.t, engine.TripletQuery{Subject: "shapes.Square", Predicate: "has_method"})
	if err != nil || len(ts) != 1 {
		t.Fatalf("query: %v %v", ts, err)
	}
	weight = ts[0].Weight
	if weight != 0.9 {
		t.Errorf("learnt weight after the re-index: %v, want 0.9", weight)
	}
	// An interface grows a method: the types of the other package that no
	// longer implement it lose their edge, though that package is not read.
	edit(t, filepath.Join(dir, "shapes.go"), "\tArea() float64\n}", "\tArea() float64\n\tPerimeter() float64\n}")
	st, res, err = Run(ctx, dir, st, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := s.triplets(t)
	for _, gone := range []string{"shapes.Square implements shapes.Shape", "geom.Named implements shapes.Shape"} {
		if slices.Contains(got, gone) {
			t.Errorf("stale after the interface changed: %s", gone)
		}
	}
	if res.PackagesRead != 1 {
		t.Errorf("read %d packages, want 1", res.PackagesRead)
	}
	// A file removed: its symbols go.
	if err := os.Remove(filepath.Join(dir, "geom", "geom.go")); err != nil {
		t.Fatal(err)
	}
	if _, _, err = Run(ctx, dir, st, s, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, l := range s.triplets(t) {
		if strings.Contains(l, "geom") {
			t.Errorf("stale after removing geom.go: %s", l)
		}
	}
}

// TestClearedGraphIsIndexedAfresh: a state whose module node is gone from
// the store (a cleared graph) is not trusted.
func TestClearedGraphIsIndexedAfresh(t *testing.T) {
	ctx := context.Background()
	s := newSink(t)
	st, _, err := Run(ctx, "testdata/shapes", nil, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.st.ClearProject(ctx, s.t); err != nil {
		t.Fatal(err)
	}
	_, res, err := Run(ctx, "testdata/shapes", st, s, Options{})
	if err != nil || !res.Full || len(s.triplets(t)) == 0 {
		t.Fatalf("after a clear: %+v %v", res, err)
	}
}

func TestSinceUsesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	dir := copyFixture(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "one")
	s := newSink(t)
	st, _, err := Run(ctx, dir, nil, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	edit(t, filepath.Join(dir, "geom", "geom.go"), "// Big says", "// Big tells")
	_, res, err := Run(ctx, dir, st, s, Options{Since: "HEAD"})
	if err != nil || res.PackagesRead != 1 {
		t.Fatalf("--since HEAD: %+v %v", res, err)
	}
	// Only the triplets naming geom.Big are sent again, with its new
	// description.
	if res.Imported == 0 || res.Imported > 3 {
		t.Errorf("sent %d triplets for one changed doc comment", res.Imported)
	}
	id, _ := s.id("geom.Big")
	if n, err := s.st.Node(s.t, id); err != nil || !strings.HasPrefix(n.Description, "Big tells") {
		t.Errorf("description after the change: %q %v", n.Description, err)
	}
	if _, _, err := Run(ctx, dir, st, s, Options{Since: "no-such-rev"}); err == nil || !strings.Contains(err.Error(), "no-such-rev") {
		t.Errorf("bad revision: %v", err)
	}
}

func TestNotAModule(t *testing.T) {
	if _, _, err := Run(context.Background(), t.TempDir(), nil, newSink(t), Options{}); !errors.Is(err, ErrNotModule) {
		t.Errorf("got %v", err)
	}
}

// TestIndexesItself indexes this repository and checks a few edges it
// knows.
func TestIndexesItself(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes the whole repository")
	}
	s := newSink(t)
	_, res, err := Run(context.Background(), "../..", nil, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := s.triplets(t)
	for _, want := range []string{
		"engine.Store has_method engine.Store.Import",
		"codeindex.Run calls codeindex.readModule",
		"codeindex.TestIndexesItself tests codeindex.Run",
		"compose/codeindex/index.go defines codeindex.Run",
		"codeindex imports engine",
		"main imports client",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
	t.Logf("%s", res)
}

func TestNoTests(t *testing.T) {
	ts, err := Extract(context.Background(), "testdata/shapes", Options{NoTests: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		if tr.Relationship == RelTests || strings.HasSuffix(tr.Target, "_test.go") || strings.Contains(tr.Source, ".Test") {
			t.Errorf("a test with NoTests: %+v", tr)
		}
	}
	with, _ := Extract(context.Background(), "testdata/shapes", Options{})
	if len(with) <= len(ts) {
		t.Errorf("%d triplets with tests, %d without", len(with), len(ts))
	}
}

// TestIncrementalEqualsFresh: after a change, the incremental run (type
// cache on) leaves the store with exactly the triplets a fresh index of
// the changed tree writes.
func TestIncrementalEqualsFresh(t *testing.T) {
	ctx := context.Background()
	dir := copyFixture(t)
	cache := filepath.Join(t.TempDir(), "types")
	s := newSink(t)
	st, _, err := Run(ctx, dir, nil, s, Options{TypeCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	edit(t, filepath.Join(dir, "shapes.go"), "func total(x float64) float64 { return math.Round(x) }",
		"func total(x float64) float64 { return math.Round(x) }\n\n// Perimeter of a square.\nfunc (s Square) Perimeter() float64 { return 4 * s.Side }")
	edit(t, filepath.Join(dir, "geom", "geom.go"), "func (n *Named) Describe() float64 { return n.Area() }",
		"func (n *Named) Describe() float64 { return n.Area() + n.Perimeter() }")
	if _, res, err := Run(ctx, dir, st, s, Options{TypeCache: cache}); err != nil || res.PackagesRead != 2 {
		t.Fatalf("incremental: %+v %v", res, err)
	}
	fresh := newSink(t)
	if _, _, err := Run(ctx, dir, nil, fresh, Options{}); err != nil {
		t.Fatal(err)
	}
	got, want := s.triplets(t), fresh.triplets(t)
	if !slices.Equal(got, want) {
		t.Errorf("incremental and fresh differ:\nincremental %v\nfresh       %v", got, want)
	}
	if !slices.Contains(got, "geom.Named.Describe calls shapes.Square.Perimeter") {
		t.Error("the new call is missing")
	}
}

// extracted indexes testdata/shapes without a store: its triplets as
// "source rel target" lines, and per node name what the triplets say of
// it.
func extracted(t *testing.T) ([]string, map[string]engine.TripletInput) {
	t.Helper()
	ts, err := Extract(context.Background(), "testdata/shapes", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	nodes := map[string]engine.TripletInput{}
	for _, tr := range ts {
		lines = append(lines, tr.Source+" "+tr.Relationship+" "+tr.Target)
		if !tr.SourceExact || !tr.TargetExact {
			t.Errorf("a name not exact: %+v", tr)
		}
		nodes[tr.Source] = engine.TripletInput{Source: tr.Source, SourceType: tr.SourceType, SourceLocation: tr.SourceLocation, SourceSignature: tr.SourceSignature, SourceDescription: tr.SourceDescription}
		nodes[tr.Target] = engine.TripletInput{Source: tr.Target, SourceType: tr.TargetType, SourceLocation: tr.TargetLocation, SourceSignature: tr.TargetSignature, SourceDescription: tr.TargetDescription}
	}
	slices.Sort(lines)
	return lines, nodes
}

// TestGraphComplete: implements as the compiler decides (renamed
// parameters, unnamed results, embedded interfaces, pointer receivers,
// generic types), each interface method linked to its implementations,
// every buildable file read whatever its tags or platform, init functions
// named by file, the standard library left out, exact names.
func TestGraphComplete(t *testing.T) {
	got, _ := extracted(t)
	for _, want := range []string{
		// Renamed's Put(k string, v []byte) error implements
		// Put(key string, value []byte) error; Get's results are unnamed.
		"shapes.Renamed implements shapes.Store", "shapes.Renamed implements shapes.ReadStore",
		"shapes.Store embeds shapes.ReadStore",
		"shapes.Stack implements shapes.Sizer", // generic, pointer receiver
		"shapes.Circle implements shapes.Shape", "shapes.Square implements shapes.Shape",
		"geom.Named implements shapes.Shape", "geom.Cached implements shapes.Store", // by embedding
		// The interface's methods to the methods that implement them,
		// named where each is declared.
		"shapes.Store.Put implemented_by shapes.Renamed.Put", "shapes.ReadStore.Get implemented_by shapes.Renamed.Get",
		"shapes.Sizer.Len implemented_by shapes.Stack.Len", "shapes.Shape.Area implemented_by shapes.Circle.Area",
		"shapes.Shape.Area implemented_by shapes.Square.Area",
		// So a walk goes from a call through the interface to the callees
		// of an implementation.
		"shapes.Save calls_via_interface shapes.Store.Put", "shapes.Renamed.Put calls shapes.Renamed.flush",
		// Exact names: total and Total are two, named as written.
		"shapes.Total calls shapes.total",
		// Every buildable file: a custom tag, another architecture (a
		// symbol of each platform is one node), a package of tagged files
		// only.
		"custom.go defines shapes.Custom", "arch_loong64.go defines shapes.archName", "arch_other.go defines shapes.archName",
		"plugin contains plugin/plugin.go", "plugin/plugin.go defines plugin.Load",
		"integration contains integration/integration_test.go", "integration.TestSave tests shapes.Save", // tests alone
		"shapes_windows.go defines shapes.Console", "shapes.Console has_method shapes.Console.Draw",
		// init functions, by file, in order.
		"shapes.go defines shapes.init@shapes.go", "store.go defines shapes.init@store.go", "store.go defines shapes.init@store.go(2)",
		"shapes.init@store.go(2) calls shapes.archName",
		// Imports within the module and of other modules stay.
		"geom imports shapes", "geom imports github.com/elsewhere/unresolved",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
	for _, l := range got {
		f := strings.Fields(l)
		switch {
		case strings.Contains(l, "#"):
			t.Errorf("a synthetic name: %q", l)
		case f[1] == RelImports && !slices.Contains([]string{"shapes", "geom", "plugin", "integration"}, f[2]) && !strings.Contains(f[2], "."):
			t.Errorf("the standard library as a node: %q", l)
		case f[0] == "math" || f[2] == "math" || f[2] == "testing":
			t.Errorf("the standard library as a node: %q", l)
		case strings.Contains(l, "gen.go") || strings.Contains(l, "generated"):
			t.Errorf("a //go:build ignore file: %q", l)
		case l == "shapes.Stack implements shapes.Store" || l == "shapes.Renamed implements shapes.Sizer":
			t.Errorf("wrong implements: %q", l)
		}
	}
}

// TestLocationsAndSignatures: every symbol carries its file, line span
// and one-line signature; files their span; the standard library is
// named in a file's description.
func TestLocationsAndSignatures(t *testing.T) {
	_, nodes := extracted(t)
	for name, want := range map[string]struct {
		file      string
		line, end int
		sig       string
	}{
		"shapes.Total":            {"shapes.go", 25, 31, "func Total(ss []Shape) float64"},
		"shapes.Circle.Area":      {"shapes.go", 22, 22, "func (c *Circle) Area() float64"},
		"shapes.Square":           {"shapes.go", 13, 13, "type Square struct"},
		"shapes.Shape":            {"shapes.go", 7, 10, "type Shape interface"},
		"shapes.Shape.Area":       {"shapes.go", 9, 9, "Area() float64"},
		"shapes.Stack":            {"store.go", 38, 38, "type Stack[T any] struct"},
		"shapes.Stack.Push":       {"store.go", 44, 44, "func (s *Stack[T]) Push(v T)"},
		"shapes.ReadStore.Get":    {"store.go", 6, 6, "Get(key string) (value []byte, err error)"},
		"shapes.Renamed.Put":      {"store.go", 24, 27, "func (r *Renamed) Put(k string, v []byte) error"},
		"shapes.init@store.go(2)": {"store.go", 50, 50, "func init()"},
		"shapes.archName":         {"arch_other.go", 6, 6, "func archName() string"}, // this platform's
		"plugin.Load":             {"plugin/plugin.go", 7, 7, "func Load()"},
		"geom.Named":              {"geom/geom.go", 10, 13, "type Named struct"},
	} {
		n, ok := nodes[name]
		if !ok {
			t.Errorf("no node %s", name)
			continue
		}
		l := n.SourceLocation
		if want.file == "arch_other.go" && runtime.GOARCH == "loong64" {
			want.file = "arch_loong64.go"
			want.line, want.end = 4, 4
		}
		if l == nil || l.File != want.file || l.Line != want.line || l.EndLine != want.end {
			t.Errorf("%s: location %+v, want %s:%d-%d", name, l, want.file, want.line, want.end)
		}
		if n.SourceSignature != want.sig {
			t.Errorf("%s: signature %q, want %q", name, n.SourceSignature, want.sig)
		}
	}
	if n := nodes["shapes.go"]; n.SourceLocation == nil || n.SourceLocation.Line != 1 || n.SourceLocation.EndLine < 30 || n.SourceDescription != "Imports math" {
		t.Errorf("file node: %+v %q", n.SourceLocation, n.SourceDescription)
	}
	for name, n := range nodes {
		if n.SourceType != KindPackage && n.SourceLocation == nil {
			t.Errorf("%s (%s) has no location", name, n.SourceType)
		}
		if (n.SourceType == KindFunction || n.SourceType == KindMethod || n.SourceType == KindType || n.SourceType == KindInterface) && n.SourceSignature == "" {
			t.Errorf("%s has no signature", name)
		}
	}
}

func TestOneLineSignatures(t *testing.T) {
	for in, want := range map[string]string{
		"func F(\n\ta int,\n\tb string,\n) (\n\tint, error)": "func F(a int, b string) (int, error)",
		"func (c *Conn)  Close()":                            "func (c *Conn) Close()",
		"func G[\n\tT any,\n](x T)":                          "func G[T any](x T)",
	} {
		if got := oneLine(in); got != want {
			t.Errorf("oneLine(%q) = %q, want %q", in, got, want)
		}
	}
	long := "func F(" + strings.Repeat("é", 200) + ")"
	if got := langs.CapSig(long); len(got) > langs.MaxSig || !strings.HasSuffix(got, "…") || !utf8.ValidString(got) {
		t.Errorf("capSig: %d bytes %q", len(got), got)
	}
}

// TestLegacyState: a state of the build that folded names (version 4)
// makes the run delete the folded nodes it wrote before indexing afresh,
// so no folded node stays beside its exact namesake.
func TestLegacyState(t *testing.T) {
	ctx := context.Background()
	s := newSink(t)
	st, _, err := Run(ctx, "testdata/shapes", nil, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := s.triplets(t)
	// The store and state as the old build left them: the same triplets,
	// names folded.
	old := newSink(t)
	ts, err := Extract(ctx, "testdata/shapes", Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Written = nil
	for i := range ts {
		ts[i].SourceExact, ts[i].TargetExact = false, false
		ts[i].SourceLocation, ts[i].TargetLocation, ts[i].SourceSignature, ts[i].TargetSignature = nil, nil, "", ""
		st.Written = append(st.Written, ts[i].Source+"\x00"+ts[i].Relationship+"\x00"+ts[i].Target+"\x00old")
	}
	if err := old.Import(ctx, ts); err != nil {
		t.Fatal(err)
	}
	st.Version = legacyVersion
	_, res, err := Run(ctx, "testdata/shapes", st, old, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Full || res.DeletedNodes == 0 {
		t.Errorf("result %+v", res)
	}
	if got := old.triplets(t); !slices.Equal(got, want) {
		t.Errorf("after the legacy state:\n got %v\nwant %v", got, want)
	}
	old.st.View(func(v *engine.View) error {
		it := v.ScopeNodes(old.t).Iterator()
		for it.HasNext() {
			if n := it.Next(); !v.NodeExact(n) {
				t.Errorf("a folded node stayed: %s", v.NodeName(n))
			}
		}
		return nil
	})
}

// TestImplementsWithTypeCache: a run whose packages come from the type
// cache (export data: exported names only) finds the same implements,
// unexported types included.
func TestImplementsWithTypeCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "types")
	impl := func() []string {
		ts, err := Extract(context.Background(), "testdata/shapes", Options{TypeCache: cache})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tr := range ts {
			if tr.Relationship == RelImplements || tr.Relationship == RelImplBy {
				out = append(out, tr.Source+" "+tr.Relationship+" "+tr.Target)
			}
		}
		slices.Sort(out)
		return out
	}
	first, second := impl(), impl()
	if !slices.Equal(first, second) {
		t.Errorf("without the cache %v\nwith it %v", first, second)
	}
	for _, want := range []string{"shapes.memStore implements shapes.Store", "shapes.Store.Put implemented_by shapes.memStore.Put",
		"shapes.ReadStore.Get implemented_by shapes.Renamed.Get"} {
		if !slices.Contains(second, want) {
			t.Errorf("with the cache: missing %q", want)
		}
	}
}
