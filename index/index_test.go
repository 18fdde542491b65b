package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/enginetest"
	"github.com/kgctx/kgctx/index/embed"
	"github.com/kgctx/kgctx/index/fuse"
)

var ten = engine.Tenant{Org: "org_a", Project: "proj_1"}

type fixture struct {
	dir    string
	closed bool
	emb    embed.Embedder
	st     *engine.Store
	ix     *Index
}

func open(t testing.TB, dir string) *fixture {
	t.Helper()
	emb, err := embed.NewLexical(embed.LexicalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := engine.Open(filepath.Join(dir, "store"), &engine.Options{Vectorizer: NewVectorizer(emb)})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Open(context.Background(), st, emb, Options{TextDir: filepath.Join(dir, "text")})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{dir: dir, emb: emb, st: st, ix: ix}
	t.Cleanup(func() { f.close(t) })
	return f
}

func (f *fixture) close(t testing.TB) {
	if f.closed {
		return
	}
	f.closed = true
	enginetest.Check(t, f.st)
	f.ix.Close()
	f.st.Close()
}

func (f *fixture) search(t testing.TB, q string, k int) []string {
	t.Helper()
	var names []string
	err := f.st.View(func(v *engine.View) error {
		hits, _, err := f.ix.Search(context.Background(), nil, Query{Text: q, Org: ten.Org, Project: ten.Project, Allow: v.ScopeNodes(ten), K: k})
		for _, h := range hits {
			names = append(names, v.NodeName(h.ID))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestSearchFindsImportedNodes(t *testing.T) {
	f := open(t, t.TempDir())
	ctx := context.Background()
	_, err := f.st.Import(ctx, ten, []engine.TripletInput{
		{Source: "AuthMiddleware", Relationship: "calls", Target: "TokenValidator", SourceDescription: "Checks bearer tokens on every request."},
		{Source: "PaymentsService", Relationship: "depends_on", Target: "PostgresDB"},
		{Source: "InvoiceParser", Relationship: "calls", Target: "PostgresDB"},
	}, engine.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other := engine.Tenant{Org: "org_b", Project: "proj_1"}
	if _, err := f.st.Import(ctx, other, []engine.TripletInput{{Source: "AuthMiddleware", Relationship: "calls", Target: "Secret"}}, engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	got := f.search(t, "fix null pointer in auth middleware", 3)
	if len(got) == 0 || got[0] != "AuthMiddleware" {
		t.Fatalf("seeds %q", got)
	}
	for _, n := range got {
		if n == "Secret" {
			t.Fatal("other org's node seeded")
		}
	}
	var scores []fuse.Ranked
	_ = f.st.View(func(v *engine.View) error {
		scores, _, _ = f.ix.Search(ctx, nil, Query{Text: "bearer tokens", Org: ten.Org, Project: ten.Project, Allow: v.ScopeNodes(ten), K: 5})
		return nil
	})
	if len(scores) == 0 || scores[0].Score != 1 {
		t.Fatalf("scores not normalised: %+v", scores)
	}
	if got := f.search(t, "zzzz qqqq", 5); len(got) != 0 {
		t.Fatalf("nonsense query seeded %q", got)
	}
	// Delete cascades to both indexes.
	ts, _ := f.st.QueryTriplets(ten, engine.TripletQuery{Subject: "AuthMiddleware"})
	if err := f.st.DeleteNode(ctx, ten, ts[0].SourceNodeID); err != nil {
		t.Fatal(err)
	}
	for _, n := range f.search(t, "auth middleware bearer tokens", 5) {
		if n == "AuthMiddleware" {
			t.Fatal("deleted node still found")
		}
	}
	if f.ix.nodes.vec.Contains(ts[0].Src) {
		t.Fatal("deleted node still in HNSW")
	}
	if err := f.ix.nodes.vec.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestReopenDoesNotRebuild(t *testing.T) {
	dir := t.TempDir()
	f := open(t, dir)
	ctx := context.Background()
	var in []engine.TripletInput
	for i := range 500 {
		in = append(in, engine.TripletInput{Source: fmt.Sprintf("Service%d", i), Relationship: "calls", Target: fmt.Sprintf("Handler%d", i%50)})
	}
	if _, err := f.st.Import(ctx, ten, in, engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	before := f.search(t, "Service42 handler", 5)
	n := f.ix.Len()
	wm := f.ix.Watermark()
	f.close(t)

	g := open(t, dir)
	if g.ix.Len() != n || g.ix.Watermark() != wm {
		t.Fatalf("reopen: %d vectors (want %d), watermark %d (want %d)", g.ix.Len(), n, g.ix.Watermark(), wm)
	}
	after := g.search(t, "Service42 handler", 5)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("results changed across reopen: %q vs %q", before, after)
	}
}

// TestReplayAfterMissedApply simulates a crash between the store's commit
// and the index update: the change is replayed at the next Open.
func TestReplayAfterMissedApply(t *testing.T) {
	dir := t.TempDir()
	f := open(t, dir)
	ctx := context.Background()
	if _, err := f.st.Import(ctx, ten, []engine.TripletInput{{Source: "Alpha", Relationship: "calls", Target: "Beta"}}, engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	// Close the indexes first: the store's later writes cannot reach them.
	// The write succeeds (it is stored); the store reports the index.
	f.ix.Close()
	if _, err := f.st.Import(ctx, ten, []engine.TripletInput{{Source: "GammaRay", Relationship: "calls", Target: "Beta"}}, engine.ImportOptions{}); err != nil {
		t.Fatalf("import the closed index missed: %v", err)
	}
	if err := f.st.IndexFailure(); !errors.Is(err, engine.ErrIndexBehind) {
		t.Fatalf("IndexFailure after a write the closed index missed: %v", err)
	}
	if err := f.st.Sync(ctx); !errors.Is(err, engine.ErrIndexBehind) {
		t.Fatalf("Sync after a write the closed index missed: %v", err)
	}
	f.st.Close()
	f.closed = true
	g := open(t, dir)
	if got := g.search(t, "gamma ray", 1); len(got) != 1 || got[0] != "GammaRay" {
		t.Fatalf("missed write not replayed: %q", got)
	}
}

// docCounts are the text indexes' document counts (nodes, observations).
func (f *fixture) docCounts(t testing.TB) (uint64, uint64) {
	t.Helper()
	n, err := f.ix.nodes.txt.DocCount()
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.ix.obs.txt.DocCount()
	if err != nil {
		t.Fatal(err)
	}
	return n, o
}

// fillTrimmed writes enough change sets that the store trims the head of
// its change log, so that a replay from zero would miss the first ones.
func fillTrimmed(t *testing.T, f *fixture) {
	t.Helper()
	ctx := context.Background()
	for i := range 140 {
		in := []engine.TripletInput{{Source: fmt.Sprintf("Service%d", i), Relationship: "calls", Target: fmt.Sprintf("Handler%d", i%7)}}
		if _, err := f.st.Import(ctx, ten, in, engine.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.st.AddObservations(ctx, ten, []engine.ObservationInput{{Content: "the first note about Service0"}}, engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Sync(ctx); err != nil {
		t.Fatal(err)
	}
}

// A lost text index (its folder removed) is rebuilt whole from the store
// at the next open, not from the change log's remainder.
func TestLostTextIndexRebuilt(t *testing.T) {
	dir := t.TempDir()
	f := open(t, dir)
	fillTrimmed(t, f)
	nodes, obs := f.docCounts(t)
	if nodes != 147 || obs != 1 {
		t.Fatalf("before: %d node and %d observation documents", nodes, obs)
	}
	f.close(t)
	for _, d := range []string{"text", "text-obs"} {
		if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	g := open(t, dir)
	if n, o := g.docCounts(t); n != nodes || o != obs {
		t.Fatalf("after the text folders were lost: %d node and %d observation documents, want %d and %d", n, o, nodes, obs)
	}
	if got := g.search(t, "Service0", 1); len(got) != 1 || got[0] != "Service0" {
		t.Fatalf("Service0 not found after the rebuild: %q", got)
	}
	if g.ix.Watermark() != g.st.Seq() {
		t.Fatalf("watermark %d, store at %d", g.ix.Watermark(), g.st.Seq())
	}
}

// A text index written with other analyzers (an older kgctx) is replaced
// by one rebuilt from the store, with the same documents.
func TestOldTextSchemaRebuilt(t *testing.T) {
	dir := t.TempDir()
	f := open(t, dir)
	fillTrimmed(t, f)
	nodes, obs := f.docCounts(t)
	f.close(t)
	// Stamp both indexes with an older schema, as an older kgctx wrote them.
	for _, d := range []string{"text", "text-obs"} {
		bi, err := bleve.Open(filepath.Join(dir, d))
		if err != nil {
			t.Fatal(err)
		}
		if err := bi.SetInternal([]byte("kgctx/text/schema"), []byte("kgctx-text-0")); err != nil {
			t.Fatal(err)
		}
		bi.Close()
	}
	g := open(t, dir)
	if n, o := g.docCounts(t); n != nodes || o != obs {
		t.Fatalf("after the schema change: %d node and %d observation documents, want %d and %d", n, o, nodes, obs)
	}
	if got := g.search(t, "Service0", 1); len(got) != 1 || got[0] != "Service0" {
		t.Fatalf("Service0 not found after the rebuild: %q", got)
	}
}
