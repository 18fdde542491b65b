package main

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/api/apitest"
	"github.com/kgctx/kgctx/compose/codeindex"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
)

const shapes = "../../compose/codeindex/testdata/shapes"

// copyShapes copies the code indexer's fixture module.
func copyShapes(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	for _, f := range []string{"go.mod", "shapes.go", "shapes_test.go", "shapes_windows.go", "gen.go", "geom/geom.go"} {
		b, err := os.ReadFile(filepath.Join(shapes, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dst, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func TestIndexOffline(t *testing.T) {
	data, state := filepath.Join(t.TempDir(), "data"), t.TempDir()
	args := []string{"index", shapes, "--org", "o", "--project", "code", "--data", data, "--state-dir", state}
	out, errOut, code := runCLI(t, args...)
	if code != 0 || !strings.Contains(out, "indexed example.com/shapes (full): 4 of 4 packages read") {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = runCLI(t, args...)
	if code != 0 || !strings.Contains(out, "(incremental): 0 of 4 packages read") || !strings.Contains(out, "0 triplets written") {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	out, errOut, code = runCLI(t, "graph", "query", "--data", data, "--org", "o", "--project", "code", "--subject", "shapes.Total")
	if code != 0 || !strings.Contains(out, "calls_via_interface") || !strings.Contains(out, "shapes.Shape.Area") {
		t.Fatalf("query: exit %d\n%s%s", code, out, errOut)
	}
}

func TestIndexThroughServer(t *testing.T) {
	s := apitest.Start(t, api.Config{})
	tok := s.Token("o", "indexer", auth.RoleImporter, "code")
	dir, state := copyShapes(t), t.TempDir()
	args := []string{"index", dir, "--org", "o", "--project", "code", "--server", s.URL, "--token", tok, "--state-dir", state}
	if out, errOut, code := runCLI(t, args...); code != 0 || !strings.Contains(out, "(full)") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	// geom.go goes: its nodes are deleted through the server.
	if err := os.Remove(filepath.Join(dir, "geom", "geom.go")); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, args...)
	if code != 0 || !strings.Contains(out, "(incremental)") || strings.Contains(out, " 0 nodes deleted") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	st, err := s.App.Store.Stats(engine.Tenant{Org: "o", Project: "code"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Predicates["embeds"] != 0 {
		t.Errorf("geom's embeds edge is still there: %+v", st)
	}
	// An agent token may not write: refused, nothing changed.
	agent := s.Token("o", "reader", auth.RoleAgent, "code")
	_, errOut, code = runCLI(t, "index", dir, "--org", "o", "--project", "code", "--server", s.URL, "--token", agent, "--state-dir", t.TempDir())
	if code == 0 || !strings.Contains(errOut, "403") {
		t.Errorf("an agent token indexed: exit %d %s", code, errOut)
	}
}

func TestIndexBadInput(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	for name, tc := range map[string]struct {
		args []string
		want string
		code int
	}{
		"no dir":       {[]string{"index", "--org", "o", "--project", "p", "--data", data}, "name one module directory", 2},
		"no org":       {[]string{"index", shapes, "--project", "p", "--data", data}, "--org", 2},
		"not a module": {[]string{"index", t.TempDir(), "--org", "o", "--project", "p", "--data", data}, "not a Go module", 1},
		"bad flag":     {[]string{"index", shapes, "--org", "o", "--project", "p", "--sinse", "HEAD", "--data", data}, "--since", 2},
		"bad org":      {[]string{"index", shapes, "--org", "o o", "--project", "p", "--data", data}, "--org", 2},
	} {
		t.Run(name, func(t *testing.T) {
			_, errOut, code := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, want %d; stderr %q lacks %q", code, tc.code, errOut, tc.want)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("a refused command created the store")
			}
		})
	}
}

// writeFiles writes files (path -> content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
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

// runCLIWithin is runCLI failing the test if the command has not returned
// within 20 s (a hang becomes a failure, not a stuck test binary).
func runCLIWithin(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	type result struct {
		out, err string
		code     int
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		err := run(context.Background(), args, &out, &errb)
		c := report(err, &errb)
		done <- result{out.String(), errb.String(), c}
	}()
	select {
	case r := <-done:
		return r.out, r.err, r.code
	case <-time.After(20 * time.Second):
		t.Fatalf("kgctx %s did not return within 20 s", strings.Join(args, " "))
		return "", "", 0
	}
}

// TestIndexImportCycle: a module whose packages import each other in a
// cycle is refused at once, the message naming them, and nothing is
// written (it used to hang for ever).
func TestIndexImportCycle(t *testing.T) {
	dir, data, state := t.TempDir(), filepath.Join(t.TempDir(), "data"), t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod": "module example.com/cyc\n\ngo 1.22\n",
		"a/a.go": "package a\n\nimport \"example.com/cyc/b\"\n\n// A calls B.\nfunc A() { b.B() }\n",
		"b/b.go": "package b\n\nimport \"example.com/cyc/a\"\n\n// B calls A.\nfunc B() { a.A() }\n",
	})
	out, errOut, code := runCLIWithin(t, "index", dir, "--org", "o", "--project", "p", "--data", data, "--state-dir", state)
	want := "kgctx index: import cycle: example.com/cyc/a -> example.com/cyc/b -> example.com/cyc/a"
	if code != 1 || out != "" || !strings.Contains(errOut, want) || !strings.Contains(errOut, "nothing was written") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want %q", code, out, errOut, want)
	}
	if n := tripletCount(t, data, engine.Tenant{Org: "o", Project: "p"}); n != 0 {
		t.Errorf("%d triplets written", n)
	}
	if got := dirState(t, state); got != "[]" {
		t.Errorf("state directory after a cycle: %s", got)
	}
}

// bigModule writes a Go module that takes the indexer far longer than 20 s
// to read and write (about a million lines; a minute on 2 cores).
func bigModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"go.mod": "module example.com/big\n\ngo 1.22\n"})
	const pkgs, files, funcs = 60, 4, 400
	for p := range pkgs {
		for f := range files {
			var b strings.Builder
			fmt.Fprintf(&b, "package p%d\n\n", p)
			if p > 0 {
				fmt.Fprintf(&b, "import prev \"example.com/big/p%d\"\n\n", p-1)
			}
			for n := range funcs {
				fmt.Fprintf(&b, "// F%d_%d does a thing.\nfunc F%d_%d(a int) int {\n\tx := a + %d\n\tfor i := 0; i < x; i++ {\n\t\tx += i * 2\n\t}\n", f, n, f, n, n)
				if p > 0 {
					fmt.Fprintf(&b, "\tx += prev.F%d_%d(x)\n", f, n)
				}
				if n > 0 {
					fmt.Fprintf(&b, "\tx += F%d_%d(x)\n", f, n-1)
				}
				b.WriteString("\treturn x\n}\n\n")
			}
			writeFiles(t, dir, map[string]string{fmt.Sprintf("p%d/f%d.go", p, f): b.String()})
		}
	}
	return dir
}

// indexProc is the real binary running an index.
type indexProc struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer // read after done
	done   chan error   // Wait's result
}

// startIndex starts the real binary on an index run.
func startIndex(t *testing.T, args ...string) *indexProc {
	t.Helper()
	p := &indexProc{cmd: exec.Command(binary, append([]string{"index"}, args...)...), done: make(chan error, 1)}
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		p.done <- nil
	})
	return p
}

// terminate sends SIGTERM and waits for the process to exit; it fails
// the test if it has not within 20 s, and returns the exit status and
// what it printed on stderr.
func (p *indexProc) terminate(t *testing.T) (int, string) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return p.cmd.ProcessState.ExitCode(), p.stderr.String()
	case <-time.After(20 * time.Second):
		t.Fatal("kgctx index did not exit within 20 s of SIGTERM")
		return 0, ""
	}
}

// TestIndexInterrupted: SIGTERM stops kgctx index, a real process, while
// it reads a module that would take it far longer than the test waits,
// and while it writes through a server that never answers; it says it was
// interrupted and saves no state, so the next run starts from the last
// finished one.
func TestIndexInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a large module")
	}
	t.Run("reading", func(t *testing.T) {
		dir, data, state := bigModule(t), filepath.Join(t.TempDir(), "data"), t.TempDir()
		p := startIndex(t, dir, "--org", "o", "--project", "p", "--data", data, "--state-dir", state)
		// The store is opened before the module is read, and the signal
		// handlers are set before either.
		deadline := time.After(20 * time.Second)
		for opened := false; !opened; {
			select {
			case err := <-p.done:
				t.Fatalf("exited before the store was opened: %v %s", err, &p.stderr)
			case <-deadline:
				t.Fatal("the store is not opened after 20 s")
			case <-time.After(20 * time.Millisecond):
				_, err := os.Stat(filepath.Join(data, "store", "MANIFEST"))
				opened = err == nil
			}
		}
		code, errOut := p.terminate(t)
		if code != exitInterrupted || !strings.Contains(errOut, "kgctx index: interrupted before writing; nothing was written") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if got := dirState(t, state); strings.Contains(got, ".state") {
			t.Errorf("an interrupted run saved its state: %s", got)
		}
		if out, errOut, err := kgctx(t, nil, "graph", "status", "--data", data, "--check"); err != nil || !strings.Contains(out, "ok") {
			t.Errorf("the store after the interruption: %v\n%s%s", err, out, errOut)
		}
	})
	t.Run("writing", func(t *testing.T) {
		arrived := make(chan struct{})
		var once sync.Once
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			once.Do(func() { close(arrived) })
			select { // never answers
			case <-r.Context().Done():
			case <-release:
			}
		}))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(release) })
		state := t.TempDir()
		p := startIndex(t, copyShapes(t), "--org", "o", "--project", "p", "--server", srv.URL, "--token", "t", "--state-dir", state)
		select {
		case <-arrived:
		case err := <-p.done:
			t.Fatalf("exited before writing: %v %s", err, &p.stderr)
		case <-time.After(20 * time.Second):
			t.Fatal("no request within 20 s")
		}
		code, errOut := p.terminate(t)
		if code != exitInterrupted || !strings.Contains(errOut, "kgctx index: interrupted while writing") ||
			!strings.Contains(errOut, "a request in flight may have been written") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		if got := dirState(t, state); strings.Contains(got, ".state") {
			t.Errorf("an interrupted run saved its state: %s", got)
		}
	})
}

// TestIndexSkipsLinksAndLargeFiles: a file linked from outside the module
// and a .go file over 1 MiB are not read, and stderr says so once each.
func TestIndexSkipsLinksAndLargeFiles(t *testing.T) {
	dir, outside := copyShapes(t), t.TempDir()
	writeFiles(t, outside, map[string]string{"leak.go": "package shapes\n\n// Secret is a file outside the module.\nfunc Secret() {}\n"})
	if err := os.Symlink(filepath.Join(outside, "leak.go"), filepath.Join(dir, "leak.go")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	big := "package shapes\n\n// Huge is big.\nvar Huge = `" + strings.Repeat("x", 3<<19) + "`\n"
	writeFiles(t, dir, map[string]string{"big.go": big})
	data := filepath.Join(t.TempDir(), "data")
	out, errOut, code := runCLI(t, "index", dir, "--org", "o", "--project", "p", "--data", data, "--state-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"kgctx index: skipped 1 file(s) or directories reached through symbolic links that leave ",
		"(the first: leak.go -> " + filepath.Join(outside, "leak.go") + ")",
		fmt.Sprintf("kgctx index: skipped big.go: 1.5 MiB (%d bytes), over the 1 MiB limit", len(big)),
	} {
		if strings.Count(errOut, want) != 1 {
			t.Errorf("stderr does not say once %q:\n%s", want, errOut)
		}
	}
	if ex := exportOf(t, data, engine.Tenant{Org: "o", Project: "p"}); strings.Contains(ex, "Secret") || strings.Contains(ex, "Huge") {
		t.Errorf("a skipped file is in the graph:\n%s", ex)
	}
}

// TestIndexStateFiles: the state is kept 0600 in a 0700 directory; the
// default directory is tightened; a directory others may write is
// refused; a state that is another project's or does not decode is
// ignored with a note, and the module indexed afresh.
func TestIndexStateFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("modes are not kept on Windows")
	}
	data := filepath.Join(t.TempDir(), "data")
	state := filepath.Join(t.TempDir(), "state")
	index := func(project, stateDir string) (string, string, int) {
		args := []string{"index", shapes, "--org", "o", "--project", project, "--data", data}
		if stateDir != "" {
			args = append(args, "--state-dir", stateDir)
		}
		return runCLI(t, args...)
	}
	mode := func(p string) os.FileMode {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	if out, errOut, code := index("code", state); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if m := mode(state); m != 0o700 {
		t.Errorf("state directory mode %04o", m)
	}
	files, _ := filepath.Glob(filepath.Join(state, "*"))
	if len(files) != 2 { // the state and the type cache
		t.Fatalf("state directory holds %v", files)
	}
	for _, f := range files {
		if m := mode(f); m != 0o600 {
			t.Errorf("%s: mode %04o", filepath.Base(f), m)
		}
	}
	codeState, _ := filepath.Glob(filepath.Join(state, "*.state"))

	// Another project's state, copied over this project's, is ignored.
	if _, _, code := index("other", state); code != 0 {
		t.Fatal("other project")
	}
	all, _ := filepath.Glob(filepath.Join(state, "*.state"))
	otherState := slices.DeleteFunc(all, func(f string) bool { return f == codeState[0] })
	b, err := os.ReadFile(codeState[0])
	if err != nil || len(otherState) != 1 {
		t.Fatal(otherState, err)
	}
	for what, content := range map[string][]byte{"describes another store, project or module": b, "does not decode": []byte("junk")} {
		if err := os.WriteFile(otherState[0], content, 0o600); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := index("other", state)
		if code != 0 || !strings.Contains(errOut, what) || !strings.Contains(errOut, "ignored, indexing afresh") || !strings.Contains(out, "(full)") {
			t.Errorf("%s: exit %d\n%s%s", what, code, out, errOut)
		}
	}

	// A state directory that others may write is refused, before the
	// store is opened.
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	data2 := filepath.Join(t.TempDir(), "data2")
	_, errOut, code := runCLI(t, "index", shapes, "--org", "o", "--project", "p", "--data", data2, "--state-dir", open)
	if code != 1 || !strings.Contains(errOut, "writable by group or others") {
		t.Errorf("a world-writable --state-dir: exit %d %q", code, errOut)
	}
	if got := dirState(t, data2); got != "absent" {
		t.Errorf("the refused run created the store: %s", got)
	}

	// The default directory, under the user cache directory, is made
	// 0700 even if it existed looser.
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	if dir, err := os.UserCacheDir(); err != nil || dir != cache {
		t.Skipf("the cache directory here is not $XDG_CACHE_HOME: %s %v", dir, err)
	}
	def := filepath.Join(cache, "kgctx", "index")
	if err := os.MkdirAll(def, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(def, 0o777); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := index("code", ""); code != 0 {
		t.Fatalf("default state dir: exit %d\n%s%s", code, out, errOut)
	}
	if m := mode(def); m != 0o700 {
		t.Errorf("default state directory left at %04o", m)
	}
	if files, _ := filepath.Glob(filepath.Join(def, "*.state")); len(files) != 1 || mode(files[0]) != 0o600 {
		t.Errorf("default state directory holds %v", files)
	}
}

// TestIndexKeepsHandMadeNodes: a state file naming nodes a person
// imported (AuthService) deletes none of them: the indexer deletes only
// nodes of its kinds and edges of its relationships.
func TestIndexKeepsHandMadeNodes(t *testing.T) {
	data, state := filepath.Join(t.TempDir(), "data"), t.TempDir()
	ten := engine.Tenant{Org: "o", Project: "code"}
	args := []string{"index", shapes, "--org", "o", "--project", "code", "--data", data, "--state-dir", state}
	if out, errOut, code := runCLI(t, args...); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	// A person imports by hand.
	app, err := openData(context.Background(), data, create, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = app.Import(context.Background(), ten, []engine.TripletInput{
		{Source: "AuthService", SourceType: "service", Relationship: "depends_on", Target: "PostgresDB", TargetType: "database"},
	}, engine.ImportOptions{})
	if cerr := app.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	before := exportOf(t, data, ten)
	// The state is made to name those nodes, under the indexer's own
	// relationship and another.
	files, _ := filepath.Glob(filepath.Join(state, "*.state"))
	if len(files) != 1 {
		t.Fatalf("state files %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var st codeindex.State
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&st); err != nil {
		t.Fatal(err)
	}
	st.Written = append(st.Written, "AuthService\x00calls\x00PostgresDB\x00forged", "AuthService\x00depends_on\x00PostgresDB\x00forged")
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files[0], buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, args...)
	if code != 0 || !strings.Contains(out, "0 triplets and 0 nodes deleted") || !strings.Contains(errOut, "kept 2 nodes and 1 triplets") || !strings.Contains(errOut, "AuthService") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if after := exportOf(t, data, ten); after != before || !strings.Contains(after, "AuthService") {
		t.Errorf("the store changed:\nbefore %s\nafter  %s", before, after)
	}
}
