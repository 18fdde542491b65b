package traverse

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/enginetest"
)

var ten = engine.Tenant{Org: "org_a", Project: "proj_1"}

func openStore(t testing.TB) *engine.Store {
	t.Helper()
	return enginetest.Open(t, &engine.Options{InMemory: true})
}

func w(v float64) *float64 { return &v }

// oracle computes the candidates by the definition in query.go, with no
// cap binding (fan-out, beam and visited larger than the graph): from each
// seed (its best score), every walk that never steps straight back, hop
// by hop; at each hop after the first, only the best path ending at a
// node (comparePaths) is extended; a path's score is σ × F(mask) ×
// decay^(hop-1) × hubs × wf/wfMax, and an edge's importance is the best
// score of a path it ends or lies on.
func oracle(v *engine.View, seeds []Seed, o Options, q *Query) map[uint32]float64 {
	o = o.withDefaults()
	if q == nil {
		q = &noQuery
	}
	incident := map[uint32][]uint32{}
	for e := uint32(0); int(e) < v.EdgeCap(); e++ {
		if !v.EdgeLive(e) {
			continue
		}
		info := v.Edge(e)
		incident[info.Src] = append(incident[info.Src], e)
		if info.Dst != info.Src {
			incident[info.Dst] = append(incident[info.Dst], e)
		}
	}
	nodeMask := map[uint32]uint64{}
	for _, nm := range q.Nodes {
		nodeMask[nm.Node] |= nm.Mask
	}
	total := 0.0
	for _, x := range q.Weights {
		total += x
	}
	f := func(m uint64) float64 {
		if total == 0 {
			return 1
		}
		s := 0.0
		for i, x := range q.Weights {
			if m&(1<<uint(i)) != 0 {
				s += x
			}
		}
		return DefaultFloor + (1-DefaultFloor)*s/total
	}
	aside := map[uint32]bool{}
	for _, n := range q.Aside {
		aside[n] = q.AsideFactor > 0 && q.AsideFactor < 1
	}
	edgeF := func(from uint32, info engine.EdgeInfo, other uint32) float64 {
		f := 1.0
		i := 2 * int(info.Rel)
		if info.Src != from {
			i++
		}
		if i < len(q.RelFactor) {
			f = q.RelFactor[i]
		}
		if aside[from] || aside[other] {
			f *= q.AsideFactor
		}
		return f
	}
	// alikeOf counts n's edges of info's relationship and direction.
	alikeOf := func(n uint32, info engine.EdgeInfo) int {
		c := 0
		for _, e := range incident[n] {
			if x := v.Edge(e); x.Rel == info.Rel && (x.Src == n) == (info.Src == n) {
				c++
			}
		}
		return c
	}
	type opath struct {
		node, prev, origin   uint32
		mask                 uint64
		score, seed, hub, ef float64
		edges                []uint32
	}
	best := map[uint32]float64{}
	var order []uint32
	for _, s := range seeds {
		if _, ok := best[s.Node]; !ok {
			order = append(order, s.Node)
		}
		best[s.Node] = max(best[s.Node], s.Score)
	}
	var frontier []opath
	for _, n := range order {
		frontier = append(frontier, opath{node: n, prev: n, origin: n, mask: nodeMask[n], score: best[n], seed: best[n], hub: 1, ef: 1})
	}
	out := map[uint32]float64{}
	decay := 1.0
	for hop := 1; hop <= o.Depth; hop++ {
		if hop > 1 {
			kept := map[uint32]opath{}
			for _, p := range frontier {
				k, ok := kept[p.node]
				pp := path{node: p.node, origin: p.origin, prev: p.prev, mask: p.mask, score: p.score}
				kk := path{node: k.node, origin: k.origin, prev: k.prev, mask: k.mask, score: k.score}
				if !ok || comparePaths(&pp, &kk) < 0 {
					kept[p.node] = p
				}
			}
			frontier = frontier[:0]
			for _, p := range kept {
				frontier = append(frontier, p)
			}
		}
		var next []opath
		for _, p := range frontier {
			deg := len(v.Ranked(p.node))
			hubHere := 1.0
			if len(p.edges) > 0 && deg > DefaultHubDegree {
				hubHere = math.Sqrt(float64(DefaultHubDegree) / float64(deg))
			}
			for _, e := range incident[p.node] {
				info := v.Edge(e)
				if !relOK(o.Rels, info.Rel) {
					continue
				}
				other := info.Dst
				if other == p.node {
					other = info.Src
				}
				if other == p.prev && len(p.edges) > 0 {
					continue
				}
				gain := (q.Rel(info.Rel) | nodeMask[other]) &^ p.mask
				hub := p.hub
				if gain == 0 {
					hub *= hubHere
				}
				if alike := alikeOf(p.node, info); q.Alike > 0 && alike > 1 {
					switch {
					case gain == 0 && q.Rel(info.Rel)|nodeMask[other] == 0:
						hub /= 1 + q.Alike*math.Log(float64(alike))
					case gain != 0 && len(p.edges) > 0 && alike > DefaultHubDegree && gain&^q.Rel(info.Rel) == 0:
						hub *= math.Sqrt(float64(DefaultHubDegree) / float64(alike))
					}
				}
				m := p.mask | gain
				wf := (0.8 + 0.4*info.Weight) * (0.8 + 0.4*(v.NodeWeight(p.node)+v.NodeWeight(other))/2) / (1.2 * 1.2)
				ef := p.ef * edgeF(p.node, info, other)
				sc := p.seed * f(m) * decay * hub * ef * wf
				for _, a := range append(slices.Clone(p.edges), e) {
					out[a] = max(out[a], sc)
				}
				next = append(next, opath{node: other, prev: p.node, origin: p.origin, mask: m, score: sc, seed: p.seed, hub: hub, ef: ef,
					edges: append(slices.Clone(p.edges), e)})
			}
		}
		frontier = next
		decay *= o.HopDecay
	}
	return out
}

func TestExpandMatchesOracle(t *testing.T) {
	seed := uint64(20261123)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	rels := []string{"calls", "depends_on", "owns"}
	for trial := range 80 {
		s := openStore(t)
		nodes := 5 + rng.IntN(40)
		var in []engine.TripletInput
		for range rng.IntN(nodes * 3) {
			x := engine.TripletInput{Source: fmt.Sprintf("n%d", rng.IntN(nodes)), Relationship: rels[rng.IntN(len(rels))],
				Target: fmt.Sprintf("n%d", rng.IntN(nodes)), Weight: w(float64(rng.IntN(10)+1) / 10)}
			in = append(in, x)
		}
		if len(in) == 0 {
			continue
		}
		if _, err := s.Import(context.Background(), ten, in, engine.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		// No cap binds: the oracle has none.
		o := Options{Depth: []int{1, 2, 3, 4}[rng.IntN(4)], MaxFanout: 1000, MaxVisited: 100_000, HopDecay: []float64{0.5, 0.8}[rng.IntN(2)]}
		_ = s.View(func(v *engine.View) error {
			var seeds []Seed
			for range 1 + rng.IntN(4) {
				n, ok := v.Lookup(ten, fmt.Sprintf("n%d", rng.IntN(nodes)))
				if ok {
					seeds = append(seeds, Seed{Node: n, Score: float64(rng.IntN(10)+1) / 10})
				}
			}
			// A query: word 0 matched by "calls", word 1 by "owns", word 2
			// by a few nodes' names; or none.
			var q *Query
			if rng.IntN(3) > 0 {
				callsID, _ := v.RelID("calls")
				ownsID, _ := v.RelID("owns")
				q = &Query{Weights: []float64{1, 2, 0.5}, Beam: 100_000, Rel: func(r uint32) uint64 {
					switch r {
					case callsID:
						return 1
					case ownsID:
						return 2
					}
					return 0
				}}
				for range rng.IntN(5) {
					if n, ok := v.Lookup(ten, fmt.Sprintf("n%d", rng.IntN(nodes))); ok {
						q.Nodes = append(q.Nodes, NodeMask{Node: n, Mask: 4})
					}
				}
				// Edge factors: by relationship and direction, and nodes
				// set aside.
				if rng.IntN(2) == 0 {
					for range 2 * v.RelCount() {
						q.RelFactor = append(q.RelFactor, []float64{1, 0.5, 0.8}[rng.IntN(3)])
					}
					q.RelFactor = q.RelFactor[:rng.IntN(len(q.RelFactor)+1)] // a short table: 1 past it
					for range rng.IntN(4) {
						if n, ok := v.Lookup(ten, fmt.Sprintf("n%d", rng.IntN(nodes))); ok {
							q.Aside = append(q.Aside, n)
						}
					}
					q.AsideFactor = 0.1
				}
				if rng.IntN(2) == 0 {
					q.Alike = 0.2
				}
			}
			o.Query = q
			want := oracle(v, seeds, o, q)
			got := Expand(v, seeds, o, nil)
			if len(got) != len(want) {
				t.Fatalf("trial %d (%+v): %d candidates, oracle %d", trial, o, len(got), len(want))
			}
			for _, c := range got {
				if math.Abs(c.Importance-want[c.Edge]) > 1e-12 {
					t.Fatalf("trial %d: edge %d importance %v, oracle %v", trial, c.Edge, c.Importance, want[c.Edge])
				}
				if c.Importance <= 0 || c.Importance > 1 {
					t.Fatalf("importance %v outside (0,1]", c.Importance)
				}
			}
			return nil
		})
	}
}

// TestExpandPinnedOrder pins the ranking of a hand-made graph:
//
//	Auth --depends_on(0.5)--> DB --contains(0.5)--> Users
//	API  --calls(0.5)--> Auth, Auth --implements(0.5)--> IAuth
//	Log  --related_to(0.5)--> Metrics   (not connected to the seed)
//
// with Auth the only seed (score 1), depth 2, decay 0.8, all weights 0.5
// (wf = 1/1.44), and without a query: every path explains everything
// (F = 1), so hop 1 scores 1/1.44 = 0.69 and hop 2 0.8/1.44 = 0.56, which
// its first edge DB→... takes too (lent, then the lower hop first). With
// the query words {depend, user} (Auth's name matches neither): Auth's
// depends_on explains "depend" (F = 0.3 + 0.7/2 = 0.65), DB→contains→Users
// explains both (F = 1, × 0.8) and lends 0.8/1.44 to its first edge; the
// others explain nothing (F = 0.3).
func TestExpandPinnedOrder(t *testing.T) {
	s := openStore(t)
	_, err := s.Import(context.Background(), ten, []engine.TripletInput{
		{Source: "Auth", Relationship: "depends_on", Target: "DB"},
		{Source: "DB", Relationship: "contains", Target: "Users"},
		{Source: "API", Relationship: "calls", Target: "Auth"},
		{Source: "Auth", Relationship: "implements", Target: "IAuth"},
		{Source: "Log", Relationship: "related_to", Target: "Metrics"},
	}, engine.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(v *engine.View) error {
		auth, _ := v.Lookup(ten, "Auth")
		users, _ := v.Lookup(ten, "Users")
		order := func(q *Query) []string {
			got := Expand(v, []Seed{{auth, 1}}, Options{Query: q}, nil)
			r := NewRanker(got)
			var lines []string
			for c, ok := r.Next(); ok; c, ok = r.Next() {
				lines = append(lines, fmt.Sprintf("%s→%s→%s %.3f hop%d", v.NodeName(c.Src), v.RelName(c.Rel), v.NodeName(c.Dst), c.Importance, c.Hop))
			}
			return lines
		}
		if got, want := order(nil), []string{
			"Auth→depends_on→DB 0.694 hop1",
			"API→calls→Auth 0.694 hop1",
			"Auth→implements→IAuth 0.694 hop1",
			"DB→contains→Users 0.556 hop2",
		}; !slices.Equal(got, want) {
			t.Fatalf("no query:\n got %q\nwant %q", got, want)
		}
		dependsOn, _ := v.RelID("depends_on")
		q := &Query{Weights: []float64{1, 1}, Nodes: []NodeMask{{Node: users, Mask: 2}}, Rel: func(r uint32) uint64 {
			if r == dependsOn {
				return 1
			}
			return 0
		}}
		if got, want := order(q), []string{
			"Auth→depends_on→DB 0.556 hop1",
			"DB→contains→Users 0.556 hop2",
			"API→calls→Auth 0.208 hop1",
			"Auth→implements→IAuth 0.208 hop1",
		}; !slices.Equal(got, want) {
			t.Fatalf("query {depend, user}:\n got %q\nwant %q", got, want)
		}
		// Depth 1 drops the second hop; depth 0 keeps nothing (one seed).
		if got := Expand(v, []Seed{{auth, 1}}, Options{Depth: 1}, nil); len(got) != 3 {
			t.Fatalf("depth 1: %d candidates", len(got))
		}
		if got := Expand(v, []Seed{{auth, 1}}, Options{Depth: DepthZero}, nil); len(got) != 0 {
			t.Fatalf("depth 0: %d candidates", len(got))
		}
		// Fan-out 1 without a query: Auth offers one edge (its first), and
		// DB's first is the same one, back.
		if got := Expand(v, []Seed{{auth, 1}}, Options{MaxFanout: 1}, nil); len(got) != 1 {
			t.Fatalf("fanout 1: %d candidates", len(got))
		}
		// With a query, an edge beyond the fan-out that explains a word
		// is offered too.
		implements, _ := v.RelID("implements")
		q2 := &Query{Weights: []float64{1}, Rel: func(r uint32) uint64 {
			if r == implements {
				return 1
			}
			return 0
		}}
		if got := Expand(v, []Seed{{auth, 1}}, Options{MaxFanout: 1, Depth: 1, Query: q2}, nil); len(got) != 2 {
			t.Fatalf("fanout 1 with a query: %d candidates", len(got))
		}
		// MaxVisited 1: only the seed enters the walk.
		if got := Expand(v, []Seed{{auth, 1}}, Options{MaxVisited: 1}, nil); len(got) != 3 {
			t.Fatalf("maxVisited 1: %d candidates", len(got))
		}
		return nil
	})
}

func TestRankerOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var cs []Candidate
	for i := range 500 {
		cs = append(cs, Candidate{Edge: uint32(i), Importance: float64(rng.IntN(20)) / 20})
	}
	want := slices.Clone(cs)
	slices.SortFunc(want, func(a, b Candidate) int {
		if Less(&a, &b) {
			return -1
		}
		return 1
	})
	r := NewRanker(cs)
	for i := range want {
		c, ok := r.Next()
		if !ok || c != want[i] {
			t.Fatalf("pop %d: %+v want %+v", i, c, want[i])
		}
	}
	if _, ok := r.Next(); ok {
		t.Fatal("extra element")
	}
}

// BenchmarkExpand_Hubs walks depth 2 from 10 seeds of a graph where every
// node has 200 edges (the fan-out cap, 64, binds), reporting candidates.
func BenchmarkExpand_Hubs(b *testing.B) {
	for _, nodes := range []int{2_000, 20_000} {
		b.Run(fmt.Sprint(nodes), func(b *testing.B) {
			s := openStore(b)
			rng := rand.New(rand.NewPCG(1, 2))
			var in []engine.TripletInput
			for i := range nodes * 100 {
				in = append(in, engine.TripletInput{Source: fmt.Sprintf("n%d", i%nodes), Relationship: "calls",
					Target: fmt.Sprintf("n%d", rng.IntN(nodes)), Weight: w(float64(1+rng.IntN(9)) / 10)})
				if len(in) == 50_000 {
					if _, err := s.Import(context.Background(), ten, in, engine.ImportOptions{}); err != nil {
						b.Fatal(err)
					}
					in = in[:0]
				}
			}
			var seeds []Seed
			_ = s.View(func(v *engine.View) error {
				for i := range 10 {
					n, _ := v.Lookup(ten, fmt.Sprintf("n%d", i*7))
					seeds = append(seeds, Seed{Node: n, Score: 1 / float64(i+1)})
				}
				return nil
			})
			var dst []Candidate
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				_ = s.View(func(v *engine.View) error {
					dst = Expand(v, seeds, Options{}, dst)
					return nil
				})
			}
			b.ReportMetric(float64(len(dst)), "candidates")
		})
	}
}

func TestExpandRelationshipFilter(t *testing.T) {
	s := openStore(t)
	_, err := s.Import(context.Background(), ten, []engine.TripletInput{
		{Source: "error:timeout", Relationship: "caused_by", Target: "tool:http"},
		{Source: "error:timeout", Relationship: "resolved_by", Target: "fix:retry"},
		{Source: "error:timeout", Relationship: "in_session", Target: "ses_1"},
		{Source: "fix:retry", Relationship: "learned_from", Target: "ses_1"},
		{Source: "fix:retry", Relationship: "related_to", Target: "backoff"},
	}, engine.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(v *engine.View) error {
		rels := make([]bool, 16)
		for _, name := range []string{"caused_by", "resolved_by", "related_to"} {
			id, _ := v.RelID(name)
			rels[id] = true
		}
		seed, _ := v.Lookup(ten, "error:timeout")
		got := Expand(v, []Seed{{seed, 1}}, Options{Rels: rels}, nil)
		var names []string
		for _, c := range got {
			names = append(names, v.RelName(c.Rel))
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"caused_by", "related_to", "resolved_by"}) {
			t.Fatalf("filtered walk met %v", names)
		}
		return nil
	})
}

// TestAlikeReadsEnumerations pins Query.Alike on a person with one
// birthplace and twenty award nominations, and a country that contains
// forty places: with no query word matching any of them, the birthplace
// outranks every nomination (one of twenty: 1/(1 + 0.2 ln 20)); without
// Alike they tie and the order is the edges'. And a path that reaches the
// country and then explains a word through "contains" alone counts as
// one of forty such edges (sqrt(32/40)), while one whose far end's name
// explains the word is not weakened.
func TestAlikeReadsEnumerations(t *testing.T) {
	s := openStore(t)
	var in []engine.TripletInput
	for i := range 20 {
		in = append(in, engine.TripletInput{Source: "Ann", Relationship: "nominated_for", Target: fmt.Sprintf("Award%02d", i)})
	}
	in = append(in, engine.TripletInput{Source: "Ann", Relationship: "nationality", Target: "Land"})
	in = append(in, engine.TripletInput{Source: "Ann", Relationship: "place_of_birth", Target: "Town"})
	for i := range 40 {
		in = append(in, engine.TripletInput{Source: "Land", Relationship: "contains", Target: fmt.Sprintf("Place%02d", i)})
	}
	if _, err := s.Import(context.Background(), ten, in, engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(v *engine.View) error {
		ann, _ := v.Lookup(ten, "Ann")
		place7, _ := v.Lookup(ten, "Place07")
		contains, _ := v.RelID("contains")
		imp := func(q *Query, src, dst string) float64 {
			for _, c := range Expand(v, []Seed{{ann, 1}}, Options{Query: q, Depth: 2}, nil) {
				if v.NodeName(c.Src) == src && v.NodeName(c.Dst) == dst {
					return c.Importance
				}
			}
			t.Fatalf("no candidate %s → %s", src, dst)
			return 0
		}
		// Word 0 is the seed's name; word 1 ("container") matches
		// "contains"; word 2 matches Place07's name.
		q := func(alike float64) *Query {
			return &Query{Weights: []float64{1, 1, 1}, Alike: alike, Nodes: []NodeMask{{Node: ann, Mask: 1}, {Node: place7, Mask: 4}},
				Rel: func(r uint32) uint64 {
					if r == contains {
						return 2
					}
					return 0
				}}
		}
		birth, award := imp(q(0), "Ann", "Town"), imp(q(0), "Ann", "Award03")
		if birth != award {
			t.Fatalf("without Alike: birthplace %v, nomination %v, want equal", birth, award)
		}
		birthA, awardA := imp(q(0.2), "Ann", "Town"), imp(q(0.2), "Ann", "Award03")
		if birthA != birth || math.Abs(awardA-award/(1+0.2*math.Log(20))) > 1e-12 {
			t.Fatalf("with Alike: birthplace %v (want %v), nomination %v (want %v)", birthA, birth, awardA, award/(1+0.2*math.Log(20)))
		}
		plain, plainA := imp(q(0), "Land", "Place03"), imp(q(0.2), "Land", "Place03")
		if math.Abs(plainA-plain*math.Sqrt(32.0/40)) > 1e-12 {
			t.Fatalf("a place explained by \"contains\" alone: %v with Alike, %v without; want ×sqrt(32/40)", plainA, plain)
		}
		named, namedA := imp(q(0), "Land", "Place07"), imp(q(0.2), "Land", "Place07")
		if namedA != named || namedA <= plainA {
			t.Fatalf("the place the query names: %v with Alike, %v without, %v for another place", namedA, named, plainA)
		}
		return nil
	})
}

// TestAlikeOffersAHubsOnlyEdges: past its MaxFanout strongest edges, a
// node offers (reading enumerations) its only edge of a relationship
// and direction, though it matches no query word: an actor's one
// nationality imported after seventy nominations.
func TestAlikeOffersAHubsOnlyEdges(t *testing.T) {
	var in []engine.TripletInput
	for i := range 70 {
		in = append(in, engine.TripletInput{Source: "Ann", Relationship: "nominated_for", Target: fmt.Sprintf("Award%02d", i)})
	}
	in = append(in, engine.TripletInput{Source: "Ann", Relationship: "nationality", Target: "Land"})
	if without, with := hubOffers(t, in, "Ann", "Land", 64, func(*engine.View, uint32) uint64 { return 0 }); without || !with {
		t.Fatalf("the hub's one nationality offered: %v without Alike, %v with (want false, true)", without, with)
	}
}

// TestAlikeOffersAHubsOnlyEdgesPastTheMatchCap: a hub whose edges of one
// kind all explain a query word ("award" in a hundred nominations) fills
// the cap on matched edges past its fan-out; its one edge of another kind
// that explains the word too is offered anyway (a node has at most one
// such edge per relationship and direction).
func TestAlikeOffersAHubsOnlyEdgesPastTheMatchCap(t *testing.T) {
	const fanout = 4
	var in []engine.TripletInput
	for i := range fanout*maxMatchedFactor + 20 {
		in = append(in, engine.TripletInput{Source: "Prize", Relationship: "award_nominee", Target: fmt.Sprintf("Film%03d", i)})
	}
	in = append(in, engine.TripletInput{Source: "Prize", Relationship: "award_category_of", Target: "Academy"})
	award := func(v *engine.View, r uint32) uint64 {
		if strings.HasPrefix(v.RelName(r), "award") {
			return 2
		}
		return 0
	}
	if without, with := hubOffers(t, in, "Prize", "Academy", fanout, award); without || !with {
		t.Fatalf("the hub's one category offered: %v without Alike, %v with (want false, true)", without, with)
	}
}

// hubOffers imports in and walks one hop from hub (whose name matches the
// query's first word; rel gives a relationship's mask) at fanout, without
// and with Alike: whether an edge to target is offered.
func hubOffers(t *testing.T, in []engine.TripletInput, hub, target string, fanout int, rel func(*engine.View, uint32) uint64) (without, with bool) {
	t.Helper()
	s := openStore(t)
	if _, err := s.Import(context.Background(), ten, in, engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	err := s.View(func(v *engine.View) error {
		h, ok := v.Lookup(ten, hub)
		if !ok {
			t.Fatalf("no node %s", hub)
		}
		offered := func(alike float64) bool {
			q := &Query{Weights: []float64{1, 1}, Alike: alike, Nodes: []NodeMask{{Node: h, Mask: 1}}, Rel: func(r uint32) uint64 { return rel(v, r) }}
			return slices.ContainsFunc(Expand(v, []Seed{{h, 1}}, Options{Query: q, Depth: 1, MaxFanout: fanout}, nil),
				func(c Candidate) bool { return v.NodeName(c.Dst) == target })
		}
		without, with = offered(0), offered(0.2)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return without, with
}

// TestAlikeHubEnumerationAtTheSeed: at the seed too, an enumeration past
// HubDegree whose relationship alone explains a query word counts as a
// hub's edges: where an award's one category_of edge and its hundred
// nominations explain the same word through their relationships, the one
// edge comes first.
func TestAlikeHubEnumerationAtTheSeed(t *testing.T) {
	s := openStore(t)
	var in []engine.TripletInput
	for i := range 100 {
		in = append(in, engine.TripletInput{Source: "Prize", Relationship: "award_category_nominee", Target: fmt.Sprintf("Film%03d", i)})
	}
	in = append(in, engine.TripletInput{Source: "Prize", Relationship: "award_category_of", Target: "Academy"})
	if _, err := s.Import(context.Background(), ten, in, engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(v *engine.View) error {
		prize, _ := v.Lookup(ten, "Prize")
		// Both relationships explain the query's second word.
		rel := func(uint32) uint64 { return 2 }
		rank := func(alike float64) (academy float64, best float64) {
			q := &Query{Weights: []float64{1, 1}, Alike: alike, Nodes: []NodeMask{{Node: prize, Mask: 1}}, Rel: rel}
			for _, c := range Expand(v, []Seed{{prize, 1}}, Options{Query: q, Depth: 1, MaxFanout: 64}, nil) {
				if v.NodeName(c.Dst) == "Academy" {
					academy = c.Importance
				} else {
					best = max(best, c.Importance)
				}
			}
			return academy, best
		}
		if a, b := rank(0.2); !(a > b) {
			t.Fatalf("reading enumerations: the one category_of edge %v, the best nomination %v; want the one edge first", a, b)
		}
		return nil
	})
}
