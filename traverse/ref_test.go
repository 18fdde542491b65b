package traverse

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/engine"
)

// refExpandQuery is the query-aware walk as it was before the speed work
// of issue 22 (a slot per node, every edge of the scanned prefix checked
// in full), kept as the oracle of TestExpandMatchesReference: the walk
// must offer the same candidates, in the same order, with the same parts.
func (sc *scratch) refExpandQuery(v *engine.View, seeds []Seed, o Options, q *Query, dst []Candidate) []Candidate {
	floor := q.Floor
	if !(floor > 0 && floor <= 1) {
		floor = DefaultFloor
	}
	beam := q.Beam
	if beam <= 0 {
		beam = DefaultBeam
	}
	hubDeg := q.HubDegree
	if hubDeg <= 0 {
		hubDeg = DefaultHubDegree
	}
	aside := q.AsideFactor
	if !(aside > 0 && aside < 1) || len(q.Aside) == 0 {
		aside = 1
	}
	sc.aside.reset(len(q.Aside))
	if aside < 1 {
		for _, n := range q.Aside {
			sc.aside.or(n, 1)
		}
	}
	// edgeF is the factor of taking in from node n.
	edgeF := func(n uint32, in engine.Incident) float64 {
		f := 1.0
		if len(q.RelFactor) > 0 {
			i := 2 * int(in.Rel)
			if src, _ := in.Ends(n); src != n {
				i++
			}
			if i < len(q.RelFactor) {
				f = q.RelFactor[i]
			}
		}
		if aside < 1 && (sc.aside.get(n) != 0 || sc.aside.get(in.Other()) != 0) {
			f *= aside
		}
		return f
	}
	total := 0.0
	for _, w := range q.Weights {
		total += w
	}
	weight := func(m uint64) float64 {
		s := 0.0
		for m != 0 {
			i := bits.TrailingZeros64(m)
			if i < len(q.Weights) {
				s += q.Weights[i]
			}
			m &= m - 1
		}
		return s
	}
	// f is F of a mask whose words weigh w.
	f := func(w float64) float64 {
		if total <= 0 {
			return 1
		}
		return floor + (1-floor)*min(w/total, 1)
	}
	all := uint64(0)
	if n := len(q.Weights); n >= 64 {
		all = ^uint64(0)
	} else {
		all = 1<<uint(n) - 1
	}
	// Node masks: a small hash table (a few hundred nodes match query
	// words), asked for every edge the walk looks at; it stays in cache
	// where the per-node slots would not.
	sc.masks.reset(len(q.Nodes))
	for _, nm := range q.Nodes {
		sc.masks.or(nm.Node, nm.Mask)
	}
	nodeMask := sc.masks.get
	// Relationship masks, memoised densely for the walk: the same few
	// relationships come up on every node.
	sc.relStamp++
	if sc.relStamp == 0 {
		clear(sc.relSeen)
		sc.relStamp = 1
	}
	relMask := func(r uint32) uint64 {
		if int(r) >= len(sc.relSeen) {
			n := max(int(r)+1, 2*len(sc.relSeen), 64)
			sc.relSeen = append(sc.relSeen, make([]uint32, n-len(sc.relSeen))...)
			sc.relMasks = append(sc.relMasks, make([]uint64, n-len(sc.relMasks))...)
		}
		if sc.relSeen[r] != sc.relStamp {
			sc.relSeen[r], sc.relMasks[r] = sc.relStamp, q.Rel(r)
		}
		return sc.relMasks[r]
	}
	// alikeF is the factor of an edge that is one of in.Alike (> 1)
	// edges of its relationship and direction at its node (see
	// Query.Alike), taken with gain.
	alike := q.Alike
	if !(alike > 0) {
		alike = 0
	}
	// match is what the edge matches of the query, gain what of it is
	// new to its path.
	alikeF := func(in engine.Incident, match, gain uint64) float64 {
		if gain == 0 {
			if match != 0 {
				return 1 // it matches the query, as its path did before
			}
			if int(in.Alike) < len(sc.alikeTab) {
				return sc.alikeTab[in.Alike]
			}
			return 1 / (1 + alike*math.Log(float64(in.Alike)))
		}
		if int(in.Alike) > hubDeg && gain&^relMask(in.Rel) == 0 {
			return math.Sqrt(float64(hubDeg) / float64(in.Alike))
		}
		return 1
	}
	if alike > 0 && (len(sc.alikeTab) == 0 || sc.alikeRate != alike) {
		sc.alikeTab, sc.alikeRate = slices.Grow(sc.alikeTab[:0], alikeTabSize)[:alikeTabSize], alike
		for n := range sc.alikeTab {
			sc.alikeTab[n] = 1 / (1 + alike*math.Log(float64(max(n, 1))))
		}
	}
	sc.table.reset(len(seeds) * o.MaxFanout * 2)
	rounds := map[uint32]uint32{} // the per-node slots of the time
	visit := func(n uint32) bool {
		if _, ok := rounds[n]; ok {
			return true
		}
		if len(rounds) >= o.MaxVisited {
			return false
		}
		rounds[n] = 0
		return true
	}
	// Round 0: the seeds.
	sc.paths = sc.paths[:0]
seeds:
	for _, s := range seeds {
		if !v.Live(s.Node) || !(s.Score > 0) {
			continue
		}
		σ := min(s.Score, 1)
		for i := range sc.paths {
			if sc.paths[i].node == s.Node { // listed twice: its best score
				sc.paths[i].score, sc.paths[i].seed = max(sc.paths[i].score, σ), max(sc.paths[i].seed, σ)
				continue seeds
			}
		}
		if !visit(s.Node) {
			continue
		}
		m := nodeMask(s.Node) & all
		sc.paths = append(sc.paths, path{node: s.Node, prev: s.Node, origin: s.Node, mask: m, w: weight(m), score: σ, seed: σ, hub: 1, ef: 1})
	}
	frontier := sc.paths
	sc.next = sc.next[:0]
	decay := 1.0
	matchCap := o.MaxFanout * maxMatchedFactor
	nodeScan, relScan := o.MaxFanout*nodeScanFactor, o.MaxFanout*relScanFactor
	for hop := 1; hop <= o.Depth && len(frontier) > 0; hop++ {
		if hop > 1 {
			// Extend the beam best paths, one per end node.
			slices.SortFunc(frontier, func(a, b path) int { return comparePaths(&a, &b) })
			w := 0
			sc.round++
			for _, p := range frontier {
				if w == beam {
					break
				}
				if rounds[p.node] == sc.round {
					continue // a better path already ends here
				}
				rounds[p.node] = sc.round
				frontier[w] = p
				w++
			}
			frontier = frontier[:w]
		}
		next := sc.next[:0]
		for _, p := range frontier {
			list := v.Ranked(p.node)
			// A busy node weakens the paths it passes on, unless the edge
			// taken explains more of the query: then the query, not the
			// node's many edges, chose it.
			hubHere := 1.0
			if p.hops > 0 && len(list) > hubDeg {
				hubHere = math.Sqrt(float64(hubDeg) / float64(len(list)))
			}
			matched := 0
			wn := v.NodeWeight(p.node)
			// The far ends' weights of the edges that will surely be
			// offered, gathered first: at a million nodes each is a cache
			// miss, and a tight loop lets them overlap.
			gathered := min(len(list), o.MaxFanout)
			sc.farW = slices.Grow(sc.farW[:0], gathered)[:gathered]
			for i, in := range list[:gathered] {
				sc.farW[i] = v.NodeWeight(in.Other())
			}
			offer := func(in engine.Incident, match, gain uint64, wo float64) {
				m, mw := p.mask, p.w
				if gain != 0 {
					m, mw = m|gain, mw+weight(gain)
				}
				hub := p.hub
				if gain == 0 {
					hub *= hubHere
				}
				if alike > 0 && in.Alike > 1 {
					hub *= alikeF(in, match, gain)
				}
				other := in.Other()
				wf := (0.8 + 0.4*in.Weight) * (0.8 + 0.4*(wn+wo)/2)
				fm := f(mw)
				ef := p.ef * edgeF(p.node, in)
				imp := p.seed * fm * decay * hub * ef * wf / wfMax
				parent := int32(0)
				if p.hops > 0 {
					parent = p.chain[p.hops-1] + 1
				}
				var ci int32
				dst, ci = sc.offerQ(dst, p.node, in, imp, uint8(hop), Candidate{Seed: p.origin, SeedScore: float32(p.seed),
					Match: float32(fm), WeightF: float32(wf / wfMax), HubF: float32(hub), EdgeF: float32(ef), Parent: parent, Gain: gain != 0})
				for _, a := range p.chain[:p.hops] {
					if imp > dst[a].Importance {
						dst[a].Importance, dst[a].Lent = imp, true
					}
				}
				if hop < o.Depth && visit(other) {
					np := path{node: other, prev: p.node, origin: p.origin, mask: m, w: mw, score: imp, seed: p.seed, hub: hub, ef: ef, hops: p.hops + 1, chain: p.chain}
					np.chain[p.hops] = ci
					next = append(next, np)
				}
			}
			// Past the names' scan only a relationship can add a word: stop
			// there when none of the matched ones would.
			scan := relScan
			if q.MatchedRels != nil {
				hope := false
				for _, r := range q.MatchedRels {
					if relMask(r)&^p.mask&all != 0 {
						hope = true
						break
					}
				}
				if !hope {
					scan = nodeScan
				}
			}
			for i, in := range list[:min(len(list), scan)] {
				if !relOK(o.Rels, in.Rel) {
					continue
				}
				other := in.Other()
				if other == p.prev && p.hops > 0 {
					continue // straight back
				}
				match := relMask(in.Rel)
				if i < nodeScan {
					match |= nodeMask(other)
				}
				match &= all
				gain := match &^ p.mask
				if i >= o.MaxFanout {
					// Beyond the strongest, an edge that explains a word, or
					// (reading enumerations) a node's one edge of its kind,
					// which the cap on the first does not hold back: a node
					// has at most one per relationship and direction, and
					// its hundred award nominations all explain "award".
					if one := alike > 0 && in.Alike == 1; !one {
						if gain == 0 || matched >= matchCap {
							continue
						}
						matched++
					}
				}
				if i < gathered {
					offer(in, match, gain, sc.farW[i])
				} else {
					offer(in, match, gain, v.NodeWeight(other))
				}
			}
			// A hub beyond the scanned prefix: the edges of the matched
			// relationships, through their bitmaps.
			if len(list) > scan && scan == relScan && matched < matchCap {
				for _, r := range q.MatchedRels {
					gain := relMask(r) &^ p.mask & all
					if gain == 0 || !relOK(o.Rels, r) {
						continue
					}
					for _, side := range [2]*roaring.Bitmap{v.Out(p.node), v.In(p.node)} {
						if side == nil || matched >= matchCap {
							continue
						}
						it := roaring.And(side, v.RelEdges(r)).Iterator()
						for it.HasNext() && matched < matchCap {
							in := v.IncidentOf(it.Next(), p.node)
							other := in.Other()
							if other == p.prev && p.hops > 0 {
								continue
							}
							matched++
							offer(in, gain, gain, v.NodeWeight(other))
						}
					}
				}
			}
		}
		// The old frontier's storage holds the next hop's paths.
		frontier, sc.next = next, frontier[:0]
		decay *= o.HopDecay
	}
	sc.paths = frontier[:0]
	return dst
}

// TestExpandMatchesReference: on random graphs with hubs past every scan
// limit (small fan-outs make a node of a few hundred edges a hub), the
// walk gives exactly the candidates of refExpandQuery, the walk before the
// speed work: same edges, order, importance and score parts. Queries vary
// in relationship and name masks, known or unknown matched relationships,
// enumerations, relationship filters, beams, visited caps and depths.
func TestExpandMatchesReference(t *testing.T) {
	seed := uint64(20261128)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	rels := []string{"calls", "depends_on", "owns", "contains", "implements"}
	trials := 60
	if testing.Short() {
		trials = 15
	}
	for trial := range trials {
		s := openStore(t)
		nodes := 20 + rng.IntN(200)
		hubs := 1 + rng.IntN(4)
		var in []engine.TripletInput
		for i := range nodes * (1 + rng.IntN(4)) {
			src := rng.IntN(nodes)
			if i%3 == 0 {
				src = rng.IntN(hubs) // the hubs' many edges
			}
			in = append(in, engine.TripletInput{Source: fmt.Sprintf("n%d", src), Relationship: rels[rng.IntN(len(rels))],
				Target: fmt.Sprintf("n%d", rng.IntN(nodes)), Weight: w(float64(rng.IntN(4)+1) / 4)})
		}
		if _, err := s.Import(context.Background(), ten, in, engine.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		err := s.View(func(v *engine.View) error {
			for q := range 8 {
				o := Options{Depth: 1 + rng.IntN(3), MaxFanout: 1 + rng.IntN(4), HopDecay: []float64{0.5, 0.8}[rng.IntN(2)]}
				if rng.IntN(3) == 0 {
					o.MaxVisited = 5 + rng.IntN(50)
				}
				if rng.IntN(4) == 0 {
					o.Rels = make([]bool, v.RelCount())
					for r := range o.Rels {
						o.Rels[r] = rng.IntN(2) == 0
					}
				}
				var seeds []Seed
				for range 1 + rng.IntN(4) {
					n := fmt.Sprintf("n%d", rng.IntN(nodes))
					if rng.IntN(2) == 0 {
						n = fmt.Sprintf("n%d", rng.IntN(hubs))
					}
					if id, ok := v.Lookup(ten, n); ok {
						seeds = append(seeds, Seed{Node: id, Score: float64(rng.IntN(10)+1) / 10})
					}
				}
				words := 1 + rng.IntN(5)
				relMask := make([]uint64, v.RelCount())
				var matched []uint32
				for r := range relMask {
					if rng.IntN(2) == 0 {
						relMask[r] = 1 << rng.IntN(words)
						matched = append(matched, uint32(r))
					}
				}
				query := &Query{Beam: 1 + rng.IntN(20), Rel: func(r uint32) uint64 { return relMask[r] }}
				for range words {
					query.Weights = append(query.Weights, float64(1+rng.IntN(4))/2)
				}
				if rng.IntN(3) > 0 {
					query.MatchedRels = matched
				}
				for range rng.IntN(40) {
					if id, ok := v.Lookup(ten, fmt.Sprintf("n%d", rng.IntN(nodes))); ok {
						query.Nodes = append(query.Nodes, NodeMask{Node: id, Mask: 1 << rng.IntN(words)})
					}
				}
				if rng.IntN(2) == 0 {
					query.Alike = 0.2
				}
				o.Query = query
				if q == 0 {
					o.Query = nil
				}
				got := Expand(v, seeds, o, nil)
				oq := o.Query
				if oq == nil {
					oq = &noQuery
				}
				want := (&scratch{}).refExpandQuery(v, seeds, o.withDefaults(), oq, nil)
				if !slices.Equal(got, want) {
					t.Fatalf("trial %d, query %d (%+v): %d candidates, reference %d, or another order or parts", trial, q, o, len(got), len(want))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
