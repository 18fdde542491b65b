package relevance

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/compose/codeindex/treesitter"
)

func TestHunks(t *testing.T) {
	diff := `diff --git a/src/a.py b/src/a.py
--- a/src/a.py
+++ b/src/a.py
@@ -3,2 +3,4 @@ def f():
@@ -10 +12 @@ def g():
@@ -20,0 +23,2 @@ class C:
diff --git a/new.py b/new.py
--- /dev/null
+++ b/new.py
@@ -0,0 +1,3 @@
`
	got := hunks(diff)
	want := map[string][][2]int{"src/a.py": {{3, 4}, {10, 10}, {20, -20}}}
	if len(got) != 1 || !slices.Equal(got["src/a.py"], want["src/a.py"]) {
		t.Errorf("hunks: %v, want %v", got, want)
	}
	for _, c := range []struct {
		r         [2]int
		line, end int
		want      bool
	}{
		{[2]int{3, 4}, 1, 3, true},
		{[2]int{3, 4}, 5, 9, false},
		{[2]int{20, -20}, 15, 25, true},  // an insertion inside the body
		{[2]int{20, -20}, 15, 20, false}, // after the span's last line
		{[2]int{20, -20}, 21, 25, false}, // before it
	} {
		if got := touches(c.r, c.line, c.end); got != c.want {
			t.Errorf("touches(%v, %d, %d) = %v", c.r, c.line, c.end, got)
		}
	}
}

// TestBuildCodeSet builds a set from a small git history and checks the
// gold against what each commit changed.
func TestBuildCodeSet(t *testing.T) {
	repo, run, write := gitRepo(t)
	run("init", "-q")
	write("pkg/core.py", "def a():\n    return 1\n\n\ndef b():\n    return 2\n\n\nclass C:\n    def m(self):\n        return 3\n")
	write("README.md", "x\n")
	run("add", ".")
	run("commit", "-qm", "snapshot")
	snap := run("rev-parse", "HEAD")
	write("pkg/core.py", "def a():\n    return 10\n\n\ndef b():\n    return 2\n\n\nclass C:\n    def m(self):\n        return 3\n")
	run("commit", "-qam", "Fix a", "-m", "It returned 1.")
	write("README.md", "y\n")
	run("commit", "-qam", "Docs only")
	write("pkg/core.py", "def a():\n    return 10\n\n\ndef b():\n    return 2\n\n\nclass C:\n    def m(self):\n        x = 1\n        return 3\n\n\ndef d():\n    pass\n")
	run("commit", "-qam", "Change C.m, add d")
	until := run("rev-parse", "HEAD")
	rt, err := treesitter.New(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	r, err := BuildCodeSet(context.Background(), CodeSet{Name: "toy", Repo: "x/toy", Lang: "python", Snapshot: snap, Until: until, Commits: 10}, repo, t.TempDir(), rt)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range r.Queries {
		var g []string
		for _, i := range q.G {
			g = append(g, r.Nodes[i].N)
		}
		got = append(got, q.S+" | "+q.B+" | "+strings.Join(g, ","))
	}
	want := []string{"Fix a | It returned 1. | core.a", "Change C.m, add d |  | core.C.m"}
	if !slices.Equal(got, want) {
		t.Errorf("queries:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Written and read back.
	dir := t.TempDir()
	if err := WriteCodeSet(filepath.Join(dir, "toy.jsonl.gz"), r); err != nil {
		t.Fatal(err)
	}
	back, err := loadCodeRepo(dir, "toy.jsonl")
	if err != nil || len(back.Queries) != 2 || back.Snapshot != snap || back.funcFiles()[back.Queries[0].G[0]] != "pkg/core.py" {
		t.Errorf("read back: %+v %v", back, err)
	}
}

// TestBuildCodeSetGo builds a Go set from a small git history: a changed
// function and a changed method (pointer receiver) are gold by their
// graph names, a test file's change is not.
func TestBuildCodeSetGo(t *testing.T) {
	repo, run, write := gitRepo(t)
	src := func(a, m string) string {
		return "package toy\n\nfunc A() int {\n\treturn " + a + "\n}\n\ntype C struct{}\n\nfunc (c *C) M() int {\n\treturn " + m + "\n}\n"
	}
	run("init", "-q")
	write("go.mod", "module example.com/toy\n\ngo 1.22\n")
	write("toy.go", src("1", "3"))
	write("toy_test.go", "package toy\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif A() != 1 {\n\t\tt.Fatal()\n\t}\n}\n")
	run("add", ".")
	run("commit", "-qm", "snapshot")
	snap := run("rev-parse", "HEAD")
	write("toy.go", src("10", "3"))
	write("toy_test.go", "package toy\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif A() != 10 {\n\t\tt.Fatal()\n\t}\n}\n")
	run("commit", "-qam", "Fix A")
	write("toy.go", src("10", "30"))
	run("commit", "-qam", "Change C.M")
	until := run("rev-parse", "HEAD")
	r, err := BuildCodeSet(context.Background(), CodeSet{Name: "toy", Repo: "x/toy", Lang: "go", Snapshot: snap, Until: until, Commits: 10}, repo, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range r.Queries {
		var g, f []string
		for _, i := range q.G {
			g = append(g, r.Nodes[i].N)
		}
		for _, i := range q.GF {
			f = append(f, r.Nodes[i].N)
		}
		got = append(got, q.S+" | "+strings.Join(g, ",")+" | "+strings.Join(f, ","))
	}
	want := []string{"Fix A | toy.A | toy.go", "Change C.M | toy.C.M | toy.go"}
	if !slices.Equal(got, want) {
		t.Errorf("queries:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCodeLangsNeedsSources(t *testing.T) {
	if _, err := Run(context.Background(), Config{Sets: []string{"codego"}, Datasets: t.TempDir()}); !errors.Is(err, ErrNoCodeGoSrc) {
		t.Errorf("codego without --code-src: %v", err)
	}
	if _, err := Run(context.Background(), Config{Sets: []string{"codelangs"}, Datasets: t.TempDir()}); !errors.Is(err, ErrNoCodeLangsSrc) {
		t.Errorf("no --code-src: %v", err)
	}
}

// TestRepoMapTagsOtherLanguages: the repo map tags Python and TypeScript
// files with their grammars' tags queries and ranks across them.
func TestRepoMapTagsOtherLanguages(t *testing.T) {
	rt, err := treesitter.New(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	root := writeTree(t, map[string]string{
		"pkg/retry.py":              "def backoff_delay(n):\n    return n * 2\n",
		"pkg/client.py":             "from pkg.retry import backoff_delay\n\n\nclass Client:\n    def send(self):\n        return backoff_delay(3)\n",
		"web/api.ts":                "export function fetchUser(id: string) { return id; }\n",
		"web/page.ts":               "import {fetchUser} from './api';\nexport function render() { return fetchUser('1'); }\n",
		"node_modules/x/index.js":   "function vendored() {}\n",
		"package.json":              "{}\n",
		"docs/notes.txt":            "not code\n",
		"pkg/__pycache__/retry.pyc": "binary",
	})
	m, err := newRepoMapLangs(context.Background(), root, rt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.files, []string{"package.json", "pkg/client.py", "pkg/retry.py", "web/api.ts", "web/page.ts"}) {
		t.Errorf("files: %v", m.files)
	}
	out := m.fit(m.rank("backoff delay is too long"), 200)
	if !strings.Contains(out.Text, "pkg/retry.py:") || !strings.Contains(out.Text, "def backoff_delay(n):") {
		t.Errorf("map:\n%s", out.Text)
	}
	var defs []string
	for k := range m.defs {
		defs = append(defs, m.idents[k[1]])
	}
	slices.Sort(defs)
	for _, want := range []string{"Client", "backoff_delay", "fetchUser", "render", "send"} {
		if !slices.Contains(defs, want) {
			t.Errorf("definitions %v lack %s", defs, want)
		}
	}
}

// gitRepo makes an empty folder for a git history (skipping without git):
// run runs git in it, write writes a file of it.
func gitRepo(t *testing.T) (repo string, run func(args ...string) string, write func(p, s string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo = t.TempDir()
	run = func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.email=a@b", "-c", "user.name=a"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write = func(p, s string) {
		t.Helper()
		full := filepath.Join(repo, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return repo, run, write
}
