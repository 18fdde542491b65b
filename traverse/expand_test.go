package traverse

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

var ten = engine.Tenant{Org: "org_a", Project: "proj_1"}

func openStore(t testing.TB) *engine.Store {
	t.Helper()
	s, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Check(); err != nil {
			t.Errorf("Check: %v", err)
		}
		s.Close()
	})
	return s
}

func w(v float64) *float64 { return &v }

// oracle computes the candidates by the definition in doc.go: per-seed BFS
// over the capped offer relation, reach as the best σ·decay^dist, then every
// offered edge of a reached node scored.
func oracle(v *engine.View, seeds []Seed, o Options) map[uint32]float64 {
	o = o.withDefaults()
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
	offers := func(n uint32) []uint32 {
		es := slices.Clone(incident[n])
		slices.SortFunc(es, func(a, b uint32) int {
			wa, wb := v.Edge(a).Weight, v.Edge(b).Weight
			if wa != wb {
				if wa > wb {
					return -1
				}
				return 1
			}
			return int(a) - int(b)
		})
		if len(es) > o.MaxFanout {
			es = es[:o.MaxFanout]
		}
		return es
	}
	reach := map[uint32]float64{}
	for _, s := range seeds {
		dist := map[uint32]int{s.Node: 0}
		queue := []uint32{s.Node}
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			if dist[u] >= o.Depth-1 {
				continue
			}
			for _, e := range offers(u) {
				info := v.Edge(e)
				x := info.Dst
				if x == u {
					x = info.Src
				}
				if _, ok := dist[x]; !ok {
					dist[x] = dist[u] + 1
					queue = append(queue, x)
				}
			}
		}
		for n, d := range dist {
			if d <= max(o.Depth-1, 0) {
				reach[n] = max(reach[n], s.Score*math.Pow(o.HopDecay, float64(d)))
			}
		}
	}
	out := map[uint32]float64{}
	for n, r := range reach {
		for _, e := range offers(n) {
			info := v.Edge(e)
			if o.Depth == 0 {
				if _, ok := reach[info.Src]; !ok {
					continue
				}
				if _, ok := reach[info.Dst]; !ok {
					continue
				}
			}
			imp := r * info.Weight * (v.NodeWeight(info.Src) + v.NodeWeight(info.Dst)) / 2
			out[e] = max(out[e], imp)
		}
	}
	return out
}

func TestExpandMatchesOracle(t *testing.T) {
	seed := uint64(20261121)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for trial := range 60 {
		s := openStore(t)
		nodes := 5 + rng.IntN(40)
		var in []engine.TripletInput
		for range rng.IntN(nodes * 3) {
			x := engine.TripletInput{Source: fmt.Sprintf("n%d", rng.IntN(nodes)), Relationship: []string{"calls", "depends_on"}[rng.IntN(2)],
				Target: fmt.Sprintf("n%d", rng.IntN(nodes)), Weight: w(float64(rng.IntN(10)+1) / 10)}
			in = append(in, x)
		}
		if len(in) == 0 {
			continue
		}
		if _, err := s.Import(context.Background(), ten, in, engine.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		o := Options{Depth: []int{DepthZero, 1, 2, 3, 4}[rng.IntN(5)], MaxFanout: []int{2, 3, 64}[rng.IntN(3)], HopDecay: []float64{0.5, 0.8}[rng.IntN(2)]}
		_ = s.View(func(v *engine.View) error {
			var seeds []Seed
			for range 1 + rng.IntN(4) {
				n, ok := v.Lookup(ten, fmt.Sprintf("n%d", rng.IntN(nodes)))
				if ok {
					seeds = append(seeds, Seed{Node: n, Score: float64(rng.IntN(10)+1) / 10})
				}
			}
			// The oracle takes each seed's best score.
			best := map[uint32]float64{}
			for _, sd := range seeds {
				best[sd.Node] = max(best[sd.Node], sd.Score)
			}
			var oseeds []Seed
			for n, sc := range best {
				oseeds = append(oseeds, Seed{n, sc})
			}
			want := oracle(v, oseeds, o)
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
//	Auth --depends_on(0.9)--> DB --contains(0.8)--> Users
//	API  --calls(0.6)--> Auth, Auth --implements(0.5)--> IAuth
//	Log  --related_to(1.0)--> Metrics   (not connected to the seed)
//
// with Auth the only seed (score 1), depth 2, decay 0.5, node weights 0.5:
//
//	Auth→depends_on→DB      1 × 0.9 × 0.5        = 0.45
//	API→calls→Auth          1 × 0.6 × 0.5        = 0.30
//	Auth→implements→IAuth   1 × 0.5 × 0.5        = 0.25
//	DB→contains→Users       0.5 × 0.8 × 0.5      = 0.20
func TestExpandPinnedOrder(t *testing.T) {
	s := openStore(t)
	_, err := s.Import(context.Background(), ten, []engine.TripletInput{
		{Source: "Auth", Relationship: "depends_on", Target: "DB", Weight: w(0.9)},
		{Source: "DB", Relationship: "contains", Target: "Users", Weight: w(0.8)},
		{Source: "API", Relationship: "calls", Target: "Auth", Weight: w(0.6)},
		{Source: "Auth", Relationship: "implements", Target: "IAuth", Weight: w(0.5)},
		{Source: "Log", Relationship: "related_to", Target: "Metrics", Weight: w(1.0)},
	}, engine.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.View(func(v *engine.View) error {
		auth, _ := v.Lookup(ten, "Auth")
		got := Expand(v, []Seed{{auth, 1}}, Options{}, nil)
		r := NewRanker(got)
		var lines []string
		for c, ok := r.Next(); ok; c, ok = r.Next() {
			lines = append(lines, fmt.Sprintf("%s→%s→%s %.2f hop%d", v.NodeName(c.Src), v.RelName(c.Rel), v.NodeName(c.Dst), c.Importance, c.Hop))
		}
		want := []string{
			"Auth→depends_on→DB 0.45 hop1",
			"API→calls→Auth 0.30 hop1",
			"Auth→implements→IAuth 0.25 hop1",
			"DB→contains→Users 0.20 hop2",
		}
		if !slices.Equal(lines, want) {
			t.Fatalf("order:\n got %q\nwant %q", lines, want)
		}
		// Depth 1 drops the second hop; depth 0 keeps nothing (one seed).
		if got := Expand(v, []Seed{{auth, 1}}, Options{Depth: 1}, nil); len(got) != 3 {
			t.Fatalf("depth 1: %d candidates", len(got))
		}
		if got := Expand(v, []Seed{{auth, 1}}, Options{Depth: DepthZero}, nil); len(got) != 0 {
			t.Fatalf("depth 0: %d candidates", len(got))
		}
		// Fan-out 1: Auth offers only its strongest edge, and DB offers the same one.
		if got := Expand(v, []Seed{{auth, 1}}, Options{MaxFanout: 1}, nil); len(got) != 1 {
			t.Fatalf("fanout 1: %d candidates", len(got))
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
