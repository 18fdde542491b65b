package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/auth"
	"github.com/kgctx/kgctx/engine/tripletio"
)

// openStore opens dir as the offline commands do (creating it) and closes
// it with the test.
func openStore(t *testing.T, dir string) *engine.Store {
	t.Helper()
	app, err := openData(context.Background(), dir, create, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	return app.Store
}

// withStore runs fn on the store in dir, opened and closed around it.
func withStore(t *testing.T, dir string, fn func(st *engine.Store)) {
	t.Helper()
	app, err := openData(context.Background(), dir, readOnly, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	fn(app.Store)
}

func tripletCount(t *testing.T, dir string, ten engine.Tenant) int {
	t.Helper()
	n := -1
	withStore(t, dir, func(st *engine.Store) {
		s, err := st.Stats(ten)
		if err != nil {
			t.Fatal(err)
		}
		n = s.Triplets
	})
	return n
}

// dirState describes what is at path: "absent", or the sorted names of a
// directory's entries.
func dirState(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return "absent"
	}
	if err == nil && !fi.IsDir() {
		return fmt.Sprintf("file of %d bytes", fi.Size())
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return fmt.Sprint(names)
}

// TestReadOnlyCommandsRefuseMissingStore: the commands that only read
// refuse a directory that holds no store, with a message naming it and a
// non-zero exit, and create nothing, whether the directory is missing or
// empty.
func TestReadOnlyCommandsRefuseMissingStore(t *testing.T) {
	readers := [][]string{
		{"graph", "status"},
		{"graph", "status", "--check", "--json"},
		{"graph", "stats", "--org", "o", "--project", "p"},
		{"graph", "query", "--org", "o", "--project", "p", "--subject", "x"},
		{"graph", "export", "--org", "o", "--project", "p"},
		{"context", "--org", "o", "--query", "auth"},
	}
	base := t.TempDir()
	empty := filepath.Join(base, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, dir := range []string{filepath.Join(base, "typo"), filepath.Join(base, "a", "b"), empty, file} {
		before := dirState(t, dir)
		for _, args := range readers {
			out, errOut, code := runCLI(t, append(slices.Clone(args), "--data", dir)...)
			want := "kgctx: no kgctx store in " + dir + " (create one with kgctx serve or kgctx import)\n"
			if code == 0 || out != "" || errOut != want {
				t.Errorf("%v on %s: exit %d, stdout %q, stderr %q; want %q", args, dir, code, out, errOut, want)
			}
			if after := dirState(t, dir); after != before {
				t.Fatalf("%v changed %s: %s -> %s", args, dir, before, after)
			}
		}
	}
	if s := dirState(t, filepath.Join(base, "a")); s != "absent" {
		t.Fatalf("parent created: %s", s)
	}

	// The commands that write still create the store, and then the readers
	// find it: hasStore agrees with the layout service.Open creates.
	dir := filepath.Join(base, "new")
	if out, errOut, code := runCLI(t, "graph", "add", "--data", dir, "--org", "o", "--project", "p",
		"--subject", "A", "--predicate", "calls", "--object", "B"); code != 0 {
		t.Fatalf("graph add: %d %s %s", code, out, errOut)
	}
	if ok, err := hasStore(dir); !ok || err != nil {
		t.Fatalf("hasStore after graph add: %v %v", ok, err)
	}
	for _, args := range readers {
		if out, errOut, code := runCLI(t, append(slices.Clone(args), "--data", dir)...); code != 0 {
			t.Errorf("%v on a store: exit %d %s %s", args, code, out, errOut)
		}
	}
	for i, args := range [][]string{
		{"token", "create", "--org", "o", "--agent", "a"},
		{"graph", "clear", "--force", "--org", "o", "--project", "p"},
	} {
		d := filepath.Join(base, "w"+strconv.Itoa(i))
		if out, errOut, code := runCLI(t, append(slices.Clone(args), "--data", d)...); code != 0 {
			t.Fatalf("%v: %d %s %s", args, code, out, errOut)
		}
		if ok, _ := hasStore(d); !ok {
			t.Errorf("%v did not create the store", args)
		}
	}
}

// TestLockedStoreMessage: while another process (here: another open of the
// same directory, which Badger's flock refuses alike) holds the store,
// every command says so plainly, and the error wraps engine.ErrLocked.
func TestLockedStoreMessage(t *testing.T) {
	dir := t.TempDir()
	openStore(t, dir)
	in := filepath.Join(t.TempDir(), "in.tsv")
	os.WriteFile(in, []byte("a\tcalls\tb\n"), 0o644)
	want := "kgctx: the store in " + dir + " is in use by another kgctx process (Badger directory lock); stop it or use another --data directory"
	for _, args := range [][]string{
		{"graph", "status"},
		{"graph", "stats", "--org", "o", "--project", "p"},
		{"graph", "add", "--org", "o", "--project", "p", "--subject", "A", "--predicate", "calls", "--object", "B"},
		{"import", in, "--org", "o", "--project", "p", "-q"},
		{"token", "create", "--org", "o", "--agent", "a"},
		{"context", "--org", "o"},
		{"serve", "--addr", "127.0.0.1:0"},
	} {
		_, errOut, code := runCLI(t, append(slices.Clone(args), "--data", dir)...)
		if code != 1 || !strings.HasPrefix(errOut, want) {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
		if args[0] == "import" && !strings.Contains(errOut, "--server") {
			t.Errorf("import does not point to --server: %q", errOut)
		}
	}
	_, err := openData(context.Background(), dir, create, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "in use by another kgctx process") || !errors.Is(err, engine.ErrLocked) {
		t.Fatalf("openData: %v", err)
	}
}

// TestServeBusyPortWritesNothing: a server that cannot bind its address
// fails naming it before touching the data directory: no store directory
// is created, no admin.token written, no token stored.
func TestServeBusyPortWritesNothing(t *testing.T) {
	t.Setenv("KGCTX_ADMIN_TOKEN", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()

	fresh := filepath.Join(t.TempDir(), "data")
	out, errOut, code := runCLI(t, "serve", "--data", fresh, "--addr", addr)
	if code == 0 || !strings.Contains(errOut, "cannot listen on "+addr) || strings.Contains(out, "operator token") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if s := dirState(t, fresh); s != "absent" {
		t.Fatalf("data directory created: %s", s)
	}

	// An existing store without tokens: still nothing written.
	dir := t.TempDir()
	app, err := openData(context.Background(), dir, create, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	app.Close()
	if _, errOut, code := runCLI(t, "serve", "--data", dir, "--addr", addr); code == 0 || !strings.Contains(errOut, addr) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "admin.token")); !os.IsNotExist(err) {
		t.Fatalf("admin.token written: %v", err)
	}
	withStore(t, dir, func(st *engine.Store) {
		tokens, err := auth.New(st)
		if err != nil {
			t.Fatal(err)
		}
		if n := tokens.TokenCount(); n != 0 {
			t.Fatalf("%d tokens stored", n)
		}
	})
}

var interruptedRE = regexp.MustCompile(`^kgctx import: interrupted: (\d+) of (\d+) triplets written \(committed\), the rest not; run the same import again to finish it: imports merge, so the triplets already written create nothing new\n$`)

// TestImportInterrupted: an import cancelled after its first batch says it
// was interrupted and how many triplets it wrote, exits 130, and that
// count is what the reopened store holds; running it again completes it,
// and the store then equals a clean import of the same file.
func TestImportInterrupted(t *testing.T) {
	const total, batch = 2000, 500
	var b strings.Builder
	for i := range total {
		fmt.Fprintf(&b, "node %d\tlinks_to\tnode %d\t0.%d\n", i, (i*7+1)%total, i%10)
	}
	in := filepath.Join(t.TempDir(), "big.tsv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ten := engine.Tenant{Org: "o", Project: "p"}
	dir := filepath.Join(t.TempDir(), "data")
	importOnce := func(ctx context.Context, written func(int)) (string, string, int) {
		j := importJob{ten: ten, data: dir, batch: batch, quiet: true, format: tripletio.Auto, written: written}
		var out, errb bytes.Buffer
		err := j.run(ctx, &call{path: "kgctx import", args: []string{in}, stdout: &out, stderr: &errb})
		code := report(err, &errb)
		return out.String(), errb.String(), code
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut, code := importOnce(ctx, func(n int) {
		if n >= batch {
			cancel() // as SIGINT does to main's context
		}
	})
	m := interruptedRE.FindStringSubmatch(errOut)
	if code != exitInterrupted || out != "" || m == nil {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	written, _ := strconv.Atoi(m[1])
	if m[2] != strconv.Itoa(total) || written != batch {
		t.Fatalf("message counts %s of %s, want %d of %d", m[1], m[2], batch, total)
	}
	if n := tripletCount(t, dir, ten); n != written {
		t.Fatalf("the message says %d written, the reopened store holds %d", written, n)
	}

	out, errOut, code = importOnce(context.Background(), nil)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("imported %d triplets", total)) ||
		!strings.Contains(out, fmt.Sprintf("%d merged", batch)) {
		t.Fatalf("re-run: exit %d %q %q", code, out, errOut)
	}
	// Interrupted then resumed equals a clean import.
	clean := filepath.Join(t.TempDir(), "clean")
	if _, errOut, code := runCLI(t, "import", in, "--org", "o", "--project", "p", "--data", clean, "-q"); code != 0 {
		t.Fatal(errOut)
	}
	if got, want := exportOf(t, dir, ten), exportOf(t, clean, ten); got != want {
		t.Fatalf("resumed store differs from a clean import:\n%.500s\nwant\n%.500s", got, want)
	}
	if got, want := statsOf(t, dir, ten), statsOf(t, clean, ten); got != want {
		t.Fatalf("stats %s, clean %s", got, want)
	}
}

func exportOf(t *testing.T, dir string, ten engine.Tenant) string {
	t.Helper()
	var lines []string
	withStore(t, dir, func(st *engine.Store) {
		err := st.ExportTriplets(ten, func(in *engine.TripletInput) error {
			w := -1.0
			if in.Weight != nil {
				w = *in.Weight
			}
			lines = append(lines, fmt.Sprintf("%s|%s|%s|%g", in.Source, in.Relationship, in.Target, w))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func statsOf(t *testing.T, dir string, ten engine.Tenant) string {
	t.Helper()
	var s string
	withStore(t, dir, func(st *engine.Store) {
		x, err := st.Stats(ten)
		if err != nil {
			t.Fatal(err)
		}
		s = fmt.Sprint(x.Nodes, x.Triplets, x.Predicates)
	})
	return s
}

// TestImportNamesBadLine: kgctx import names the file and line of a bad
// row, whether the body cannot be parsed (a broken JSON array) or a row
// parses but is invalid (wrong field count, an N-Triples statement without
// its " .", a JSON line that is not a triplet, a name too long), exits 1
// and writes nothing: no store in a new directory, no triplet in an
// existing one.
func TestImportNamesBadLine(t *testing.T) {
	src := t.TempDir()
	cases := []struct {
		name, body string
		line       int
	}{
		{"broken.json", `[{"source":"a","relationship":"r","target":"b"},` + "\n" + `{"source": `, 2},
		{"fields.tsv", "a\tr\tb\nc\tr\td\nlonely\tr\n", 3},
		{"one.csv", "a,r,b\nlonely\n", 2},
		{"pipes.spo", "a|r|b\nc|r\n", 2},
		{"nodot.nt", "<http://x/a> <http://x/r> <http://x/b> .\n<http://x/c> <http://x/r> <http://x/d>\n", 2},
		{"number.jsonl", `{"source":"a","relationship":"r","target":"b"}` + "\n42\n", 2},
		{"long.jsonl", `{"source":"a","relationship":"r","target":"b"}` + "\n" + `{"source":"a","relationship":"r","target":"` + strings.Repeat("x", 2000) + `"}` + "\n", 2},
	}
	existing := t.TempDir()
	openStoreOnce := func() {
		app, err := openData(context.Background(), existing, create, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		app.Store.Import(context.Background(), engine.Tenant{Org: "o", Project: "p"},
			[]engine.TripletInput{{Source: "X", Relationship: "calls", Target: "Y"}}, engine.ImportOptions{})
		app.Close()
	}
	openStoreOnce()
	for _, c := range cases {
		path := filepath.Join(src, c.name)
		os.WriteFile(path, []byte(c.body), 0o644)
		for _, dir := range []string{filepath.Join(t.TempDir(), "new"), existing} {
			common := []string{path, "--org", "o", "--project", "p", "--data", dir}
			for _, cmd := range [][]string{
				append([]string{"import", "-q"}, common...),
				append([]string{"graph", "import"}, common...), // the format sniffed
			} {
				out, errOut, code := runCLI(t, cmd...)
				name := "kgctx import"
				if cmd[0] == "graph" {
					name = "kgctx graph import"
				}
				prefix := fmt.Sprintf("%s: %s: line %d: ", name, path, c.line)
				if code != 1 || out != "" || !strings.HasPrefix(errOut, prefix) || !strings.HasSuffix(errOut, "(nothing was written)\n") {
					t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want prefix %q", name, c.name, code, out, errOut, prefix)
				}
				if dir == existing {
					if n := tripletCount(t, dir, engine.Tenant{Org: "o", Project: "p"}); n != 1 {
						t.Errorf("%s: the store holds %d triplets, want the 1 it had", c.name, n)
					}
				} else if s := dirState(t, dir); s != "absent" {
					t.Errorf("%s: %s created: %s", c.name, dir, s)
				}
			}
		}
	}
}
