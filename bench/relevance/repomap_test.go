package relevance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/compose"
)

// A tiny module: conn.go defines the connection and its reconnect logic,
// which client.go and pool.go use; util.go defines a helper that only
// conn.go calls; README.md and go.mod are Aider's important files.
var repoMapFixture = map[string]string{
	"go.mod":    "module example.com/m\n",
	"README.md": "# m\n",
	"conn.go": `package m

// Conn is a connection.
type Conn struct{ n int }

func (c *Conn) doReconnect(err error) bool {
	return backoff(c.n)
}

func (c *Conn) Close() error { return nil }
`,
	"client.go": `package m

func NewClient() *Conn {
	c := &Conn{}
	c.doReconnect(nil)
	return c
}
`,
	"pool.go": `package m

type Pool struct{ conns []*Conn }

func (p *Pool) Drain() {
	for _, c := range p.conns {
		c.Close()
	}
}
`,
	"util.go": `package m

func backoff(n int) bool { return n > 3 }
`,
	"sub/conn_test.go": `package sub

import "testing"

func TestReconnect(t *testing.T) {
	var c Conn
	c.doReconnect(nil)
}
`,
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, body := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestRepoMapTags(t *testing.T) {
	m, err := newRepoMap(writeTree(t, repoMapFixture))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"README.md", "client.go", "conn.go", "go.mod", "pool.go", "sub/conn_test.go", "util.go"}
	if strings.Join(m.files, " ") != strings.Join(want, " ") {
		t.Fatalf("files %v, want %v", m.files, want)
	}
	// doReconnect is defined in conn.go (line 6) and called from
	// client.go and the test: two edges into conn.go for it.
	conn, ok := m.byPath["conn.go"]
	if !ok {
		t.Fatal("conn.go not listed")
	}
	id := m.identID["doReconnect"]
	tags := m.defs[[2]int32{conn, id}]
	if len(tags) != 1 || tags[0].line != 6 || tags[0].text != "func (c *Conn) doReconnect(err error) bool {" {
		t.Fatalf("doReconnect's tags %+v", tags)
	}
	var from []string
	for _, e := range m.edges {
		if e.ident == id {
			from = append(from, m.files[e.src]+"->"+m.files[e.dst])
		}
	}
	if strings.Join(from, " ") != "client.go->conn.go sub/conn_test.go->conn.go" {
		t.Fatalf("doReconnect's edges %v", from)
	}
	// camelCase of 8 or more letters: ×10; one reference: sqrt(1).
	for _, e := range m.edges {
		if e.ident == id && e.w != 10 {
			t.Fatalf("doReconnect edge weight %v, want 10", e.w)
		}
	}
	// Package clauses define "m" and "sub", never referenced: self-edges.
	if n := m.identID["sub"]; len(m.defs[[2]int32{m.byPath["sub/conn_test.go"], n}]) != 1 {
		t.Fatal("the package clause is not a definition")
	}
}

func TestRepoMapRankAndFit(t *testing.T) {
	m, err := newRepoMap(writeTree(t, repoMapFixture))
	if err != nil {
		t.Fatal(err)
	}
	// Mentioning backoff personalises nothing by path, but its edge
	// weighs ×10: util.go gets most of conn.go's rank, and its definitions
	// (its package clause, then backoff) come first.
	ranked := m.rank("slow backoff after errors")
	if ranked[0].file != m.byPath["README.md"] || ranked[1].file != m.byPath["go.mod"] {
		t.Fatalf("important files are not first: %v, %v", m.files[ranked[0].file], m.files[ranked[1].file])
	}
	var order []string
	for _, e := range ranked[2:4] {
		order = append(order, m.files[e.file]+" "+m.idents[e.tag.name])
	}
	if strings.Join(order, ", ") != "util.go m, util.go backoff" {
		t.Fatalf("first definitions %v, want util.go's m and backoff", order)
	}
	// A file whose stem is a query word is personalised: its definitions
	// move up.
	pos := func(ranked []rmEntry, file, ident string) int {
		for i, e := range ranked {
			if !e.bare && m.files[e.file] == file && m.idents[e.tag.name] == ident {
				return i
			}
		}
		return -1
	}
	plain := pos(m.rank("race in the reconnect"), "pool.go", "Drain")
	ranked = m.rank("race in pool reconnect")
	if p := pos(ranked, "pool.go", "Drain"); p < 0 || p >= plain {
		t.Fatalf("pool.go's Drain at %d when the query names pool, %d when not", p, plain)
	}
	// The fitted map is the largest within the budget, in Aider's shape.
	for _, budget := range []int{10, 30, 60, 200} {
		b := m.fit(ranked, budget)
		if b.Tokens > budget || compose.Tokens(b.Text) != b.Tokens {
			t.Fatalf("budget %d: %d tokens", budget, b.Tokens)
		}
		if budget >= 60 && !strings.Contains(b.Text, "\n  3│ type Pool struct{ conns []*Conn }") {
			t.Fatalf("budget %d: no pool.go section:\n%s", budget, b.Text)
		}
		if b.Text != "" && !strings.HasPrefix(b.Text, RepoMapHeader+"\n") {
			t.Fatalf("no header:\n%s", b.Text)
		}
	}
	full := m.fit(ranked, 1000)
	if !strings.Contains(full.Text, "\npool.go:\n  1│ package m\n  3│ type Pool struct{ conns []*Conn }\n  5│ func (p *Pool) Drain() {\n") {
		t.Fatalf("pool.go's section is not in line order:\n%s", full.Text)
	}
	if len(full.Map) == 0 || full.Map[0] != (mapLine{File: "README.md"}) {
		t.Fatalf("map lines %+v", full.Map)
	}
	for _, l := range strings.Split(full.Text, "\n") {
		if len([]rune(l)) > rmLineMax {
			t.Fatalf("line over %d characters: %q", rmLineMax, l)
		}
	}
}

func TestPageRankMatchesNetworkx(t *testing.T) {
	// a -> b (1), b -> c (1), c -> a (1), c -> b (1), damping 0.85: the
	// fixed point of x = 0.05 + 0.85 P'x is a 0.2148, b 0.3974, c 0.3878.
	m := &repoMap{files: []string{"a", "b", "c"}, nodes: []int32{0, 1, 2},
		edges: []rmEdge{{src: 0, dst: 1, w: 1}, {src: 1, dst: 2, w: 1}, {src: 2, dst: 0, w: 1}, {src: 2, dst: 1, w: 1}}}
	w := []float64{1, 1, 1, 1}
	m.outW = []float64{1, 1, 2}
	got := m.pagerank(w, false)
	for i, want := range []float64{0.2148, 0.3974, 0.3878} {
		if d := got[i] - want; d > 5e-4 || d < -5e-4 {
			t.Fatalf("rank %v, want %.4f at %d", got, want, i)
		}
	}
}
