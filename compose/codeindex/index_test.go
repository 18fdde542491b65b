package codeindex

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
			n = NodeRef{ID: v.NodeID(d), Type: v.NodeType(d)}
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
	if !res.Full || res.PackagesRead != 2 {
		t.Errorf("result %+v", res)
	}
	got := s.triplets(t)
	for _, want := range []string{
		"shapes contains shapes.go", "shapes.go defines shapes.Total", "shapes.go defines shapes.Circle.Area",
		"shapes.Shape has_method shapes.Shape.Area", "shapes.Square has_method shapes.Square.Area",
		"shapes.Total calls_via_interface shapes.Shape.Area", // through the interface, marked
		"shapes.Total calls shapes.total#2",                  // total and Total fold to one identity: told apart
		"shapes.Total uses_type shapes.Shape",
		"shapes.Square implements shapes.Shape", "shapes.Circle implements shapes.Shape", // pointer receiver
		"geom.Named implements shapes.Shape", // by the embedded Square's method
		"geom.Named embeds shapes.Square", "geom.Big calls shapes.Total", "geom.Named.Describe calls shapes.Square.Area",
		"shapes.TestTotal tests shapes.Total", "shapes.TestSquare_Area tests shapes.Square.Area",
		"shapes imports math", "geom imports shapes", "geom imports github.com/elsewhere/unresolved",
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
		if strings.Contains(l, "Round") || strings.Contains(l, "Limit") || strings.Contains(l, "calls math") {
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
	if _, err := s.st.Import(ctx, s.t, []engine.TripletInput{{Source: "shapes.Square", Relationship: "has_method", Target: "shapes.Square.Area", Weight: &w}}, engine.ImportOptions{}); err != nil {
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
