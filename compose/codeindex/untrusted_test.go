package codeindex

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine"
)

// The module's files, its state and what a state names are untrusted
// input (DESIGN.md, Security): these tests hand the indexer the forged,
// the foreign and the oversized, and see each refused.

// writeTree writes files (path -> content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runWithin runs Run and fails the test if it has not returned within
// 20 s (the runs here take well under a second; the bound only turns a
// hang into a failure).
func runWithin(t *testing.T, ctx context.Context, dir string, prev *State, sink Sink, o Options) (*State, Result, error) {
	t.Helper()
	type out struct {
		st  *State
		res Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		st, res, err := Run(ctx, dir, prev, sink, o)
		done <- out{st, res, err}
	}()
	select {
	case o := <-done:
		return o.st, o.res, o.err
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return within 20 s")
		return nil, Result{}, nil
	}
}

// TestImportCycle: packages that import each other are an error naming
// them, at once (the loader used to wait for ever on its own check), and
// nothing is written.
func TestImportCycle(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  string
	}{
		"two": {map[string]string{
			"a/a.go": "package a\n\nimport \"example.com/cyc/b\"\n\nfunc A() { b.B() }\n",
			"b/b.go": "package b\n\nimport \"example.com/cyc/a\"\n\nfunc B() { a.A() }\n",
		}, "import cycle: example.com/cyc/a -> example.com/cyc/b -> example.com/cyc/a"},
		"three": {map[string]string{
			"c/c.go": "package c\n\nimport \"example.com/cyc/a\"\n\nvar C = a.A\n",
			"a/a.go": "package a\n\nimport \"example.com/cyc/b\"\n\nvar A = b.B\n",
			"b/b.go": "package b\n\nimport \"example.com/cyc/c\"\n\nvar B = c.C\n",
		}, "import cycle: example.com/cyc/a -> example.com/cyc/b -> example.com/cyc/c -> example.com/cyc/a"},
		"itself": {map[string]string{
			"a/a.go": "package a\n\nimport \"example.com/cyc/a\"\n\nvar A = a.A\n",
			"z/z.go": "package z\n\nimport \"example.com/cyc/a\"\n\nvar Z = a.A\n",
		}, "import cycle: example.com/cyc/a -> example.com/cyc/a"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, tc.files)
			writeTree(t, dir, map[string]string{"go.mod": "module example.com/cyc\n\ngo 1.22\n"})
			s := newSink(t)
			st, res, err := runWithin(t, context.Background(), dir, nil, s, Options{TypeCache: filepath.Join(t.TempDir(), "types")})
			if !errors.Is(err, ErrImportCycle) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if st != nil || res.WriteStarted || len(s.triplets(t)) != 0 {
				t.Errorf("a cycle wrote: state %v, %+v, %d triplets", st != nil, res, len(s.triplets(t)))
			}
		})
	}
}

// TestCancelled: a run whose ctx is done stops, with its error, and
// writes nothing.
func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := newSink(t)
	st, res, err := runWithin(t, ctx, "testdata/shapes", nil, s, Options{})
	if !errors.Is(err, context.Canceled) || st != nil || res.WriteStarted || len(s.triplets(t)) != 0 {
		t.Fatalf("cancelled run: %v, state %v, %+v", err, st != nil, res)
	}
	// Cancelled while writing (here by the sink, after its first batch):
	// what was written stays, no state is returned.
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("package many\n\n")
	for i := range 6000 { // two batches
		b.WriteString("// F does.\nfunc F" + strconv.Itoa(i) + "() {}\n")
	}
	writeTree(t, dir, map[string]string{"go.mod": "module example.com/many\n", "many.go": b.String()})
	ctx, cancel = context.WithCancel(context.Background())
	cs := &cancelSink{storeSink: newSink(t), cancel: cancel}
	st, res, err = runWithin(t, ctx, dir, nil, cs, Options{})
	if !errors.Is(err, context.Canceled) || st != nil || !res.WriteStarted || res.Imported != cs.sent || cs.calls != 1 {
		t.Fatalf("cancelled while writing: %v, state %v, %+v, sink %d calls %d sent", err, st != nil, res, cs.calls, cs.sent)
	}
}

// cancelSink cancels the run after its first import.
type cancelSink struct {
	*storeSink
	cancel      func()
	calls, sent int
}

func (c *cancelSink) Import(ctx context.Context, ts []engine.TripletInput) error {
	c.calls++
	c.sent += len(ts)
	defer c.cancel()
	return c.storeSink.Import(ctx, ts)
}

// TestUntrustedFiles: links that leave the root are not followed (said
// once, counted), links inside are, large and irregular files are skipped
// with a word each, and import paths that climb out are not looked up.
func TestUntrustedFiles(t *testing.T) {
	dir, outside := copyFixture(t), t.TempDir()
	writeTree(t, outside, map[string]string{
		"leak.go":    "package shapes\n\n// Secret is a file outside the module.\nfunc Secret() {}\n",
		"pkg/x.go":   "package pkg\n\n// Outer is in a directory outside the module.\nfunc Outer() {}\n",
		"climb/c.go": "package climb\n\n// Climbed is reached by an import path with dots.\ntype Climbed int\n",
	})
	big := "package shapes\n\n// Huge is too big to read.\nvar Huge = `" + strings.Repeat("x", MaxFileSize) + "`\n"
	writeTree(t, dir, map[string]string{
		"sub/a.go":          "package sub\n\n// A is real.\nfunc A() { B() }\n",
		"testdata/b.go.txt": "package sub\n\n// B is linked from inside the module.\nfunc B() {}\n",
		"big.go":            big,
		// An import path that climbs out of the module's directory.
		"up/up.go": "package up\n\nimport \"example.com/shapes/../" + filepath.Base(outside) + "/climb\"\n\n// Up uses it.\nfunc Up(climb.Climbed) {}\n",
	})
	for link, target := range map[string]string{
		"leak.go":       filepath.Join(outside, "leak.go"),
		"ext":           filepath.Join(outside, "pkg"),
		"sub/b.go":      filepath.Join(dir, "testdata", "b.go.txt"),
		"subalias":      filepath.Join(dir, "sub"),
		"geom/other.go": filepath.Join(outside, "leak.go"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	if runtime.GOOS != "windows" {
		if err := syscall.Mkfifo(filepath.Join(dir, "fifo.go"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var warns []string
	s := newSink(t)
	_, _, err := runWithin(t, context.Background(), dir, nil, s, Options{Warn: func(m string) { warns = append(warns, m) }})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(s.triplets(t), "\n")
	for _, leaked := range []string{"Secret", "Outer", "ext", "subalias", "Huge", "climb", "fifo"} {
		if strings.Contains(got, leaked) {
			t.Errorf("%s is in the graph", leaked)
		}
	}
	for _, want := range []string{"sub/b.go defines sub.B", "sub.A calls sub.B", "shapes.go defines shapes.Total"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
	id, _ := s.id("sub.B")
	if n, err := s.st.Node(s.t, id); err != nil || n.Description != "B is linked from inside the module." {
		t.Errorf("a link inside the module: %q %v", n.Description, err)
	}
	all := strings.Join(warns, "\n")
	links := 0
	for _, w := range warns {
		if strings.Contains(w, "symbolic links that leave") {
			links++
			if !strings.Contains(w, "skipped 3 file(s) or directories") {
				t.Errorf("link note: %q", w)
			}
		}
	}
	if links != 1 {
		t.Errorf("%d link notes, want 1:\n%s", links, all)
	}
	if !strings.Contains(all, "skipped big.go: 1.0 MiB ("+strconv.Itoa(len(big))+" bytes), over the 1 MiB limit") {
		t.Errorf("no word of big.go:\n%s", all)
	}
	if runtime.GOOS != "windows" && !strings.Contains(all, "skipped fifo.go: not a regular file") {
		t.Errorf("no word of fifo.go:\n%s", all)
	}
}

// TestStateFiles: a state is saved 0600; a state of another binding, one
// others may write, and one that does not decode are ignored with a
// reason; a state directory is made 0700, tightened when asked, and
// refused when others may write it.
func TestStateFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("modes are not kept on Windows")
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state", "index")
	if err := PrepareStateDir(dir, false); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state dir: %v %v", fi.Mode(), err)
	}
	bind := Binding{Store: "store:1", Org: "o", Project: "p", Root: "/src/shapes"}
	s := newSink(t)
	st, _, err := Run(ctx, "testdata/shapes", nil, s, Options{Binding: bind})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "x.state")
	if err := st.Save(file); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", fi.Mode(), err)
	}
	if got, why, err := LoadState(file, bind); err != nil || got == nil || why != "" {
		t.Fatalf("own state: %v %q %v", got != nil, why, err)
	}
	for _, other := range []Binding{
		{Store: "store:2", Org: "o", Project: "p", Root: "/src/shapes"},
		{Store: "store:1", Org: "o", Project: "q", Root: "/src/shapes"},
		{Store: "store:1", Org: "o2", Project: "p", Root: "/src/shapes"},
		{Store: "store:1", Org: "o", Project: "p", Root: "/src/other"},
	} {
		if got, why, err := LoadState(file, other); err != nil || got != nil || !strings.Contains(why, "describes another store, project or module") {
			t.Errorf("state of %+v loaded for %+v: %v %q %v", bind, other, got != nil, why, err)
		}
		// Run itself does not use a state of another binding either.
		if _, res, err := Run(ctx, "testdata/shapes", st, s, Options{Binding: other}); err != nil || !res.Full {
			t.Errorf("Run used a state of another binding: %+v %v", res, err)
		}
	}
	if err := os.Chmod(file, 0o666); err != nil {
		t.Fatal(err)
	}
	if got, why, err := LoadState(file, bind); err != nil || got != nil || !strings.Contains(why, "writable by group or others") {
		t.Errorf("a world-writable state: %v %q %v", got != nil, why, err)
	}
	for name, data := range map[string][]byte{"garbage": []byte("not gob"), "version": encodeState(t, &State{Version: 3, Binding: bind})} {
		if err := writePrivate(file, data); err != nil {
			t.Fatal(err)
		}
		if got, why, err := LoadState(file, bind); err != nil || got != nil || why == "" {
			t.Errorf("%s: %v %q %v", name, got != nil, why, err)
		}
	}
	if got, why, err := LoadState(filepath.Join(dir, "none.state"), bind); got != nil || why != "" || err != nil {
		t.Errorf("no state: %v %q %v", got != nil, why, err)
	}
	// A directory others may write: tightened if asked (it is ours),
	// refused if not.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := PrepareStateDir(dir, false); !errors.Is(err, ErrUntrusted) {
		t.Errorf("a world-writable state dir: %v", err)
	}
	if err := PrepareStateDir(dir, true); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("not tightened: %v %v", fi.Mode(), err)
	}
}

func encodeState(t *testing.T, s *State) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(s); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDeletesOnlyItsOwn: a state that names nodes and edges a person
// imported (forged, or left by a bug) deletes none of them: the indexer
// deletes only nodes of its kinds and edges of its relationships.
func TestDeletesOnlyItsOwn(t *testing.T) {
	ctx := context.Background()
	s := newSink(t)
	st, _, err := Run(ctx, "testdata/shapes", nil, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	hand := []engine.TripletInput{
		{Source: "AuthService", SourceType: "service", Relationship: "calls", Target: "PostgresDB"},
		{Source: "AuthService", SourceType: "service", Relationship: "depends_on", Target: "shapes.Square"},
		{Source: "shapes.Total", Relationship: "depends_on", Target: "shapes.Square"},
	}
	if _, err := s.st.Import(ctx, s.t, hand, engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	before := s.triplets(t)
	for _, h := range hand {
		st.Written = append(st.Written, h.Source+"\x00"+h.Relationship+"\x00"+h.Target+"\x00forged")
	}
	var warns []string
	_, res, err := Run(ctx, "testdata/shapes", st, s, Options{Warn: func(m string) { warns = append(warns, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.DeletedNodes+res.DeletedTriplets != 0 {
		t.Errorf("deleted %d nodes and %d triplets", res.DeletedNodes, res.DeletedTriplets)
	}
	if got := s.triplets(t); !slices.Equal(got, before) {
		t.Errorf("the store changed:\nbefore %v\nafter  %v", before, got)
	}
	for _, n := range []string{"AuthService", "PostgresDB"} {
		if _, ok := s.id(n); !ok {
			t.Errorf("%s was deleted", n)
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "kept 2 nodes and 2 triplets") {
		t.Errorf("warnings %q", warns)
	}
}
