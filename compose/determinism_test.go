package compose

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/sessionlog"
	"github.com/kgctx/kgctx/index"
	"github.com/kgctx/kgctx/index/embed"
	"github.com/kgctx/kgctx/policy"
)

// TestBlocksIndependentOfImportParallelism imports the same graph and
// observations twice, once with one HNSW worker and GOMAXPROCS 1 in one
// batch, once with four workers and every core in many batches, and asks
// both stores the same graph, session and Graph RAG blocks: they must be
// the same to the byte. The scope is larger than the HNSW exact-scan
// cutoff, so seeds come from the approximate graph search.
func TestBlocksIndependentOfImportParallelism(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds two 6,000-node stores")
	}
	rng := rand.New(rand.NewPCG(7, 11))
	words := []string{"auth", "billing", "payment", "gateway", "cache", "token", "session", "user", "order", "invoice",
		"queue", "worker", "retry", "timeout", "router", "config", "metrics", "logger", "store", "index"}
	kinds := []string{"Service", "Client", "Handler", "Repository", "Controller", "Middleware", "Job"}
	rels := []string{"calls", "depends_on", "implements", "contains", "uses"}
	name := func(i int) string {
		return fmt.Sprintf("%s%s%s%d", words[i%len(words)], words[(i/len(words))%len(words)], kinds[i%len(kinds)], i)
	}
	const nodes = 6000
	var ts []engine.TripletInput
	for i := range nodes * 3 {
		ts = append(ts, engine.TripletInput{Source: name(i % nodes), Relationship: rels[rng.IntN(len(rels))], Target: name(rng.IntN(nodes))})
	}
	var obs []engine.ObservationInput
	for i := range 300 {
		obs = append(obs, engine.ObservationInput{Content: fmt.Sprintf("%s %s fails with a %s after the %s change (%d)",
			words[rng.IntN(len(words))], kinds[rng.IntN(len(kinds))], words[rng.IntN(len(words))], words[rng.IntN(len(words))], i)})
	}
	queries := []string{"auth token timeout", "billing invoice retry job", "payment gateway client calls", "session cache",
		"why does the order queue worker retry", "router config handler", "metrics logger middleware", "store index repository",
		// Misspelt: no word matches a name, the seeds come from the vector
		// ranking (the approximate HNSW search over 6,000 nodes).
		"tokn timout", "paymnt gatway clent", "invoise retyr"}
	build := func(workers, procs, batches int) (*Composer, func()) {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		emb, _ := embed.NewLexical(embed.LexicalOptions{})
		st, err := engine.Open("", &engine.Options{InMemory: true, Vectorizer: index.NewVectorizer(emb)})
		if err != nil {
			t.Fatal(err)
		}
		ix, err := index.Open(context.Background(), st, emb, index.Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		per := (len(ts) + batches - 1) / batches
		for i := 0; i < len(ts); i += per {
			batch := append([]engine.TripletInput(nil), ts[i:min(i+per, len(ts))]...)
			if _, err := st.Import(ctx, tenA, batch, engine.ImportOptions{NoWait: true}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.AddObservations(ctx, tenA, obs, engine.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := st.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		pep, _ := policy.New(policy.DefaultPolicies)
		logs, err := sessionlog.New(st)
		if err != nil {
			t.Fatal(err)
		}
		return &Composer{Store: st, Logs: logs, Index: ix, PEP: pep, Settings: NewSettings(st)}, func() { ix.Close(); st.Close() }
	}
	a, closeA := build(1, 1, 1)
	defer closeA()
	b, closeB := build(4, runtime.NumCPU(), 17)
	defer closeB()
	ctx := context.Background()
	for i, q := range queries {
		for _, depth := range []int{1, 2, 3} {
			req := GraphRequest{Identity: agent("org_a"), Scope: tenA, QueryText: q, BudgetTokens: 600, TopK: 10, Depth: depth}
			ga, _ := a.GraphBlock(ctx, req)
			gb, _ := b.GraphBlock(ctx, req)
			if ga.Block != gb.Block || ga.Block == "" {
				t.Fatalf("graph block for %q depth %d differs:\n%s\n---\n%s", q, depth, ga.Block, gb.Block)
			}
		}
		sreq := SessionRequest{SessionID: fmt.Sprintf("ses_%d", i), WorkType: WorkBugFix, Scope: tenA, Identity: agent("org_a"), QueryText: q, Graph: true}
		sa, err := a.SessionBlock(ctx, sreq)
		if err != nil {
			t.Fatal(err)
		}
		sb, _ := b.SessionBlock(ctx, sreq)
		// Observation ids are random per store: compare their contents.
		norm := func(c *Composer, blk *SessionBlock) string {
			out := blk.Block
			for _, id := range blk.ObservationIDs {
				o, err := c.Store.Observation(tenA, id)
				if err != nil {
					t.Fatal(err)
				}
				out = strings.ReplaceAll(out, id, "obs<"+o.Content+">")
			}
			return out
		}
		if norm(a, sa) != norm(b, sb) {
			t.Fatalf("session block for %q differs:\n%s\n---\n%s", q, norm(a, sa), norm(b, sb))
		}
		rreq := RAGRequest{Identity: agent("org_a"), Scope: tenA, QueryText: q, Predicates: []string{"calls", "depends_on", "uses"}}
		ra, _ := a.RAG(ctx, rreq)
		rb, _ := b.RAG(ctx, rreq)
		// Node and observation ids are random per store too.
		rnorm := func(blk *RAGBlock) string {
			out := blk.Block
			for _, e := range blk.Semantic {
				out = strings.ReplaceAll(out, e.ID, "<"+e.Content+">")
			}
			return out
		}
		if rnorm(ra) != rnorm(rb) || len(ra.Expanded) == 0 {
			t.Fatalf("RAG block for %q differs:\n%s\n---\n%s", q, rnorm(ra), rnorm(rb))
		}
	}
}

// TestQueryKnowsNoRelationshipMatches: a query that matches no
// relationship of a small vocabulary says so with an empty MatchedRels,
// never nil (unknown), whether its scratch is fresh or held another
// query's matches: nil made the walk scan a hub's edges sixteen times
// further, so the same query got other candidates right after a
// collection emptied the pool (FB15k: 4,395 against 4,334).
func TestQueryKnowsNoRelationshipMatches(t *testing.T) {
	e := newEnv(t)
	e.load(t, tenA, architecture()...)
	err := e.st.View(func(v *engine.View) error {
		sc := &queryScratch{}
		for _, q := range []string{"AuthService timeout", "what calls AuthService", "AuthService timeout"} {
			bq := e.c.buildQuery(v, q, sc)
			if bq == nil {
				t.Fatalf("%q: no query", q)
			}
			if bq.MatchedRels == nil {
				t.Errorf("%q: MatchedRels nil (unknown) over %d relationships", q, v.RelCount())
			}
			if want := strings.Contains(q, "calls"); (len(bq.MatchedRels) > 0) != want {
				t.Errorf("%q: MatchedRels %v", q, bq.MatchedRels)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
