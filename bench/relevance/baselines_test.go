package relevance

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
)

// tinyGraph: Ada's neighbourhood, connected through the UK and the EU to a
// far corner (Paris, France).
func tinyGraph() *graph {
	tr := func(s, r, d string) engine.TripletInput {
		return engine.TripletInput{Source: s, Relationship: r, Target: d}
	}
	return newGraph([]engine.TripletInput{
		tr("Ada Lovelace", "born_in", "London"),             // 0
		tr("Ada Lovelace", "child_of", "Lord Byron"),        // 1
		tr("London", "capital_of", "United Kingdom"),        // 2
		tr("Lord Byron", "born_in", "London"),               // 3
		tr("Paris", "capital_of", "France"),                 // 4
		tr("France", "member_of", "European Union"),         // 5
		tr("United Kingdom", "member_of", "European Union"), // 6
		tr("ada lovelace", "born in", "LONDON"),             // the same edge as 0, by the engine's keys
	})
}

func ids(cs []scored) []uint32 {
	c := slices.Clone(cs)
	slices.SortFunc(c, cmpScored)
	out := make([]uint32, len(c))
	for i, x := range c {
		out[i] = x.id
	}
	return out
}

func TestGraphCopyMergesLikeTheEngine(t *testing.T) {
	g := tinyGraph()
	if len(g.edges) != 7 || len(g.names) != 7 {
		t.Fatalf("%d edges, %d nodes; want 7 and 7 (the last triplet repeats the first)", len(g.edges), len(g.names))
	}
	if !slices.Equal(g.adj[g.byKey["london"]], []uint32{0, 2, 3}) {
		t.Fatalf("London's edges %v, want [0 2 3] in edge order", g.adj[g.byKey["london"]])
	}
}

func TestBM25TripletsRanksTheExactTripletFirst(t *testing.T) {
	b := newBaselines(tinyGraph())
	got := ids(b.rank(BaseBM25Triplets, "Where was Ada Lovelace born?"))
	if len(got) == 0 || got[0] != 0 {
		t.Fatalf("order %v, want edge 0 (Ada Lovelace born_in London) first", got)
	}
	if slices.Contains(got, 4) {
		t.Fatalf("order %v holds edge 4, which shares no term with the query", got)
	}
}

func TestTopicRel(t *testing.T) {
	b := newBaselines(tinyGraph())
	// Topic: Ada Lovelace (the longest name in the query; London is
	// shorter). Her edges, born_in first (it matches "born"), then, for 2
	// hops, the edges of London and Lord Byron: born_in before capital_of.
	q := "Ada Lovelace was born where, London?"
	if got := ids(b.rank(BaseTopicRel1, q)); !slices.Equal(got, []uint32{0, 1}) {
		t.Fatalf("1-hop order %v, want [0 1]", got)
	}
	if got := ids(b.rank(BaseTopicRel2, q)); !slices.Equal(got, []uint32{0, 1, 3, 2}) {
		t.Fatalf("2-hop order %v, want [0 1 3 2]", got)
	}
	if got := b.rank(BaseTopicRel2, "nothing known here"); len(got) != 0 {
		t.Fatalf("no name in the query gave %v, want nothing", got)
	}
}

func TestPPRRanksTheSeedsNeighbourAboveAFarNode(t *testing.T) {
	b := newBaselines(tinyGraph())
	got := ids(b.rank(BasePPR, "tell me about Lord Byron"))
	if len(got) != 7 {
		t.Fatalf("order %v, want all 7 edges (the graph is connected)", got)
	}
	g := b.g
	if b.pr[g.byKey["london"]] <= b.pr[g.byKey["france"]] {
		t.Fatalf("rank of London (neighbour) %v <= France (far) %v", b.pr[g.byKey["london"]], b.pr[g.byKey["france"]])
	}
	if first := got[0]; first != 1 && first != 3 {
		t.Fatalf("first edge %d, want one of Lord Byron's (1 or 3)", first)
	}
	if got[len(got)-1] != 4 {
		t.Fatalf("last edge %d, want 4 (Paris capital_of France, the farthest)", got[len(got)-1])
	}
}

func TestGraphRAGWalksBreadthFirst(t *testing.T) {
	b := newBaselines(tinyGraph())
	// Only Ada's node matches; hop 1 gives her edges, hop 2 London's and
	// Lord Byron's new ones, in adjacency order.
	if got := ids(b.rank(BaseGraphRAG, "Lovelace")); !slices.Equal(got, []uint32{0, 1, 2, 3}) {
		t.Fatalf("order %v, want [0 1 2 3]", got)
	}
}

func TestMentionsShortNames(t *testing.T) {
	g := newGraph([]engine.TripletInput{
		{Source: "mux.Router.ServeHTTP", Relationship: "calls", Target: "mux.Router.Match"},
		{Source: "profiler.go", Relationship: "defines", Target: "mux.Router.Match"},
	})
	ms := g.mentions(tokenize(nil, "fix ServeHTTP when Match fails in go"))
	var names []string
	for _, m := range ms {
		for _, n := range m.nodes {
			names = append(names, g.names[n])
		}
	}
	// Longest first (serve http: 2 terms), then by position; "go" is not
	// a short name of profiler.go (too short).
	if !slices.Equal(names, []string{"mux.Router.ServeHTTP", "mux.Router.Match"}) {
		t.Fatalf("mentions %v", names)
	}
}

func TestRenderGraphBudgetAndSkip(t *testing.T) {
	tr := func(s, r, d string) engine.TripletInput {
		return engine.TripletInput{Source: s, Relationship: r, Target: d}
	}
	g := newGraph([]engine.TripletInput{
		tr("alpha", "likes", "beta"), // line of 23 code points with its newline
		tr("a rather long source name", "relates", "to a long target"),
		tr("c", "x", "d"), // 12
	})
	// Header 27 + 23 = 50; the long line does not fit in 64, the short one
	// does (62): skip and continue.
	b := renderGraph(g, []scored{{0, 3}, {1, 2}, {2, 1}}, 16)
	want := compose.GraphHeader + "\n- alpha → likes → beta\n- c → x → d"
	if b.Text != want || b.Tokens != 16 || len(b.Lines) != 2 {
		t.Fatalf("block %q (%d tokens, %d lines), want %q (16 tokens)", b.Text, b.Tokens, len(b.Lines), want)
	}
	if e := renderGraph(g, []scored{{0, 1}}, 7); e.Text != "" || e.Tokens != 0 {
		t.Fatalf("a budget below header + shortest line gave %q", e.Text)
	}
}

// TestRenderGraphMatchesTheNaiveLoop checks the pruned heap against the
// definition: sort everything, add each line that fits, skip the others.
func TestRenderGraphMatchesTheNaiveLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var ts []engine.TripletInput
	for i := range 400 {
		ts = append(ts, engine.TripletInput{Source: strings.Repeat("s", 1+rng.IntN(40)) + string(rune('a'+i%26)),
			Relationship: "r", Target: strings.Repeat("t", 1+rng.IntN(60)) + strings.Repeat("x", i/26)})
	}
	g := newGraph(ts)
	for trial := range 50 {
		var cands []scored
		for e := range g.edges {
			if rng.IntN(3) > 0 {
				cands = append(cands, scored{uint32(e), float64(rng.IntN(20))})
			}
		}
		budget := 10 + rng.IntN(400)
		naive := slices.Clone(cands)
		slices.SortFunc(naive, cmpScored)
		limit, used := budget*4, utf8.RuneCountInString(compose.GraphHeader)
		var want []line
		for _, c := range naive {
			if used+g.lineRunes[c.id] <= limit {
				used += g.lineRunes[c.id]
				want = append(want, g.line(c.id))
			}
		}
		got := renderGraph(g, cands, budget)
		if !slices.Equal(got.Lines, want) {
			t.Fatalf("trial %d, budget %d: %d lines, the naive loop %d", trial, budget, len(got.Lines), len(want))
		}
		if got.Tokens > budget || (len(want) > 0 && got.Tokens != compose.Tokens(got.Text)) {
			t.Fatalf("trial %d: %d tokens for budget %d", trial, got.Tokens, budget)
		}
	}
}

func TestObservationBaseline(t *testing.T) {
	o := newObsIndex([]string{"obs_1", "obs_2", "obs_3"}, []string{
		"[8 May] Caroline: I went to a support group yesterday.",
		"[8 May] Melanie: The kids painted a sunrise.",
		"[9 May] Caroline: " + strings.Repeat("long ", 80) + "sunrise",
	})
	r := o.rank("When did Melanie paint the sunrise?")
	if len(r) != 2 || r[0].id != 1 {
		t.Fatalf("ranking %v, want obs_2 first, then obs_3; obs_1 shares no term", r)
	}
	// 100 tokens: header (29) + obs_2's line fit; obs_3's 300-character
	// excerpt does not.
	b := o.render(r, 100)
	want := compose.ObservationsHeader + "\n" + compose.ObservationLine("obs_2", "[8 May] Melanie: The kids painted a sunrise.", 0.5)
	if b.Text != want || !slices.Equal(b.ObsIDs, []string{"obs_2"}) || b.Tokens != compose.Tokens(want) {
		t.Fatalf("block %q ids %v", b.Text, b.ObsIDs)
	}
}
