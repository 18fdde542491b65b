package traverse

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/engine"
)

// Query is what the walk knows of the query text. Each content word of
// the query is one bit (at most 64 words); a relationship or a node name
// "matches" the words whose bits its mask holds. The caller (compose)
// analyses the text and computes the masks; the walk only combines them.
//
// A Query is used by one Expand call at a time; Rel may memoise.
type Query struct {
	// Weights[i] is the weight of query word i (how much finding it
	// explains); len(Weights) <= 64.
	Weights []float64
	// Rel returns the mask of the query words relationship r matches.
	Rel func(r uint32) uint64
	// Nodes lists the nodes whose names match query words, with their
	// masks (every other node matches none).
	Nodes []NodeMask
	// MatchedRels lists the relationships whose Rel mask is not empty,
	// when the caller knows them all (nil: unknown). A node with more
	// edges than the walk scans offers, beyond them, the edges of these
	// relationships (found through the relationship's edge bitmap).
	MatchedRels []uint32
	// Floor is the score factor of a path that explains none of the query
	// words its seed left unexplained, in (0,1] (default DefaultFloor).
	Floor float64
	// Beam caps the paths extended at each hop beyond the first, best
	// first (default DefaultBeam).
	Beam int
	// HubDegree is the degree from which a node a path passes through
	// (not its seed, not its last node) weakens the path by
	// hub(d) = min(1, sqrt(HubDegree/d)) (default DefaultHubDegree), for
	// every edge taken from it that explains no new query word: a path
	// through a node with thousands of edges says little about any one of
	// them, unless the query picks it.
	HubDegree int
	// RelFactor, when set, weighs relationships by direction: a path that
	// takes an edge of relationship r from its source to its target is
	// multiplied by RelFactor[2r], against it by RelFactor[2r+1] (ids past
	// the table: 1). The caller reads its graph's vocabulary into it
	// (compose does for code graphs); the walk only multiplies. Factors
	// are in (0, 1].
	RelFactor []float64
	// Aside lists nodes set aside: a path that steps onto or off one is
	// multiplied by AsideFactor (in (0,1); otherwise nothing is set
	// aside). compose sets aside a code graph's tests when the query is
	// not about tests.
	Aside       []uint32
	AsideFactor float64
	// Alike, when above 0, reads a node's edges of one relationship and
	// direction as one enumeration (engine.Incident.Alike counts them, n):
	// an edge that matches no query word (neither its relationship nor
	// its far end) is weakened by 1/(1 + Alike × ln n), so a node's one
	// birthplace outranks one of its twenty award nominations when the
	// query picks neither; and an edge that explains a new word through
	// its relationship alone counts as a hub's edge with n for the node's
	// degree (min(1, sqrt(HubDegree/n))): the query chose the
	// relationship, not one of a country's thousands of contained places,
	// and at the seed an award's one category_of edge outranks its hundred
	// nominations for "the category of the award" (the word "award" is in
	// both relationships). 0: off (compose sets it off for code graphs).
	Alike float64
}

// NodeMask is a node and the mask of the query words its name matches.
type NodeMask struct {
	Node uint32
	Mask uint64
}

// alikeTabSize bounds the table of Query.Alike factors a walk keeps
// (scratch.alikeTab); larger counts compute theirs.
const alikeTabSize = 256

// wfMax is the largest weight factor, which divides them all so that
// importance stays in (0, 1].
const wfMax = 1.2 * 1.2

// Query defaults.
const (
	DefaultFloor     = 0.3
	DefaultBeam      = 64
	DefaultHubDegree = 32
	// maxMatched caps the edges a node offers beyond its strongest
	// MaxFanout because they match the query (a hub's few relevant edges
	// among thousands).
	maxMatchedFactor = 4
	// A node's ranked edges are scanned for query matches up to
	// nodeScanFactor × MaxFanout (relationship and far name), then up to
	// relScanFactor × MaxFanout (relationship only, a cheap test); beyond
	// that a hub offers the edges of MatchedRels through their bitmaps.
	// This bounds a hub's cost while its relevant edges stay reachable.
	nodeScanFactor = 8
	relScanFactor  = 128
)

// pathKey is a path's score and index, what the beam sorts.
type pathKey struct {
	score float64
	i     int32
}

// path is one partial path of the query-aware walk: it ends at node, has
// explained mask and scores score; chain[:hops] are the candidates of its
// edges, first edge first.
type path struct {
	node   uint32
	prev   uint32 // the node before node (a seed's own id for seeds)
	origin uint32 // its seed
	mask   uint64
	w      float64 // the weight of mask's words
	score  float64
	seed   float64 // σ of its seed
	hub    float64 // product of the hub factors of the nodes passed through
	ef     float64 // product of the edge factors (RelFactor, AsideFactor) of its edges
	hops   uint8
	chain  [MaxDepth]int32
}

// The query-aware walk.
//
// A candidate edge is scored by the best path that reaches it:
//
//	importance = σ(seed) × F(explained) × hopDecay^(hop-1) × hub × ef × wf(edge, endpoints) / wfMax
//
// where explained is the union of the query words matched by the seed's
// name and by every relationship and far node name along the path, and
//
//	F(m) = floor + (1-floor) × weight(m) / weight(all query words)
//
// so an edge whose relationship or far endpoint names what the question
// asks scores up to 1/floor times more than one that names nothing, and a
// second hop that explains more of the question can beat a first hop that
// explains less. wf = (0.8 + 0.4 w(e)) × (0.8 + 0.4 mean(w(src), w(dst)))
// lets feedback move the order within a factor of 2.25, less than
// 1/floor: learnt weights alone cannot lift an edge that explains nothing
// above one that explains the whole question. ef is the product of the
// edge factors along the path (Query.RelFactor by relationship and
// direction, Query.AsideFactor for an edge to or from a node set aside);
// 1 when the query sets none.
//
// Each visited node offers its MaxFanout strongest edges and, beyond them,
// up to maxMatchedFactor × MaxFanout edges that explain a query word its
// path has not (a hub's relevant edges are not cut off by its first 64).
// Hop 1 extends every seed; later hops extend the Beam best paths. A path
// never steps straight back to the node it came from. An edge reached by
// a longer path lends its score to every edge before it on that path, so
// a path's edges rank together, the earlier first (Less breaks ties by
// hop).
func (sc *scratch) expandQuery(v *engine.View, seeds []Seed, o Options, q *Query, dst []Candidate) []Candidate {
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
	// where a table by node id would not.
	sc.masks.reset(len(q.Nodes))
	clear(sc.names[:])
	for _, nm := range q.Nodes {
		sc.masks.or(nm.Node, nm.Mask)
		b := nameBit(nm.Node)
		sc.names[b>>6] |= 1 << (b & 63)
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
	visit := func(n uint32) bool {
		if sc.nodes.find(n) >= 0 {
			return true
		}
		if sc.nodes.count() >= o.MaxVisited {
			return false
		}
		sc.nodes.add(n)
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
			// Extend the beam best paths, one per end node. The paths are
			// ordered through keys (a path is ten times a key's size: sorting
			// the paths moved them all, each compared by value).
			keys := sc.order[:0]
			for i := range frontier {
				keys = append(keys, pathKey{frontier[i].score, int32(i)})
			}
			slices.SortFunc(keys, func(a, b pathKey) int {
				if a.score != b.score {
					if a.score > b.score {
						return -1
					}
					return 1
				}
				return comparePaths(&frontier[a.i], &frontier[b.i])
			})
			kept := sc.kept[:0]
			sc.round++
			for _, k := range keys {
				if len(kept) == beam {
					break
				}
				p := &frontier[k.i]
				i := sc.nodes.find(p.node)
				if sc.nodes.round[i] == sc.round {
					continue // a better path already ends here
				}
				sc.nodes.round[i] = sc.round
				kept = append(kept, *p)
			}
			frontier = append(frontier[:0], kept...)
			sc.order, sc.kept = keys, kept
		}
		// The frontier's edge lists, gathered first: each is a chain of
		// cache misses at a million nodes (the cache's pointer, the list,
		// its first edges), which a loop that does nothing else overlaps.
		lists := slices.Grow(sc.lists[:0], len(frontier))[:len(frontier)]
		touch := 0.0
		for i := range frontier {
			lists[i] = v.Ranked(frontier[i].node)
			if len(lists[i]) > 0 {
				touch += lists[i][0].Weight
			}
		}
		sc.lists, sc.touch = lists, touch
		next := sc.next[:0]
		for pi, p := range frontier {
			list := lists[pi]
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
				// offerQ's work, written in place: the candidate is a cache
				// line, built once in dst rather than copied there, and
				// without a call (offerQ does not inline; calling it here,
				// with the parts written through the pointer it returned,
				// cost 4-7 % of a million-node block).
				ci, found := sc.table.slot(in.Edge, int32(len(dst)))
				if !found {
					src, dn := in.Ends(p.node)
					dst = append(dst, Candidate{Edge: in.Edge, Src: src, Dst: dn, Rel: in.Rel, Importance: imp, From: p.node, Hop: uint8(hop),
						Seed: p.origin, SeedScore: float32(p.seed), Match: float32(fm), WeightF: float32(wf / wfMax), HubF: float32(hub),
						EdgeF: float32(ef), Parent: parent, Gain: gain != 0})
				} else if c := &dst[ci]; imp > c.Importance || (imp == c.Importance && uint8(hop) < c.Hop) {
					c.Importance, c.From, c.Hop = imp, p.node, uint8(hop)
					c.Seed, c.SeedScore, c.Match, c.WeightF, c.HubF = p.origin, float32(p.seed), float32(fm), float32(wf/wfMax), float32(hub)
					c.EdgeF, c.Parent, c.Gain = float32(ef), parent, gain != 0
				}
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
			// sc.hope marks the relationships that would (known only with
			// MatchedRels).
			scan := relScan
			if q.MatchedRels != nil {
				hope := false
				clear(sc.hope)
				for _, r := range q.MatchedRels {
					if relMask(r)&^p.mask&all != 0 {
						hope = true
						if w := int(r >> 6); w >= len(sc.hope) {
							sc.hope = append(sc.hope, make([]uint64, w+1-len(sc.hope))...)
						}
						sc.hope[r>>6] |= 1 << (r & 63)
					}
				}
				if !hope {
					scan = nodeScan
				}
			}
			// The strongest MaxFanout edges are all offered (but for
			// Options.Rels and the straight way back).
			lim := min(len(list), scan)
			head := min(lim, o.MaxFanout)
			for i, in := range list[:head] {
				if !relOK(o.Rels, in.Rel) {
					continue
				}
				other := in.Other()
				if other == p.prev && p.hops > 0 {
					continue // straight back
				}
				match := (relMask(in.Rel) | sc.masks.get(other)) & all
				gain := match &^ p.mask
				if i < gathered {
					offer(in, match, gain, sc.farW[i])
				} else {
					offer(in, match, gain, v.NodeWeight(other))
				}
			}
			// Beyond the strongest, an edge that explains a word, or
			// (reading enumerations) a node's one edge of its kind, which
			// the cap on the first does not hold back: a node has at most
			// one per relationship and direction, and its hundred award
			// nominations all explain "award". Its far name counts up to
			// nodeScan, its relationship alone past it. Most edges explain
			// nothing new: a tight test of the memoised masks skips them
			// before the checks above.
			wantOne := alike > 0
			filter := q.MatchedRels != nil
			for i := head; i < lim; i++ {
				in := &list[i]
				other := in.Other()
				if filter {
					// Neither its far name (up to nodeScan) nor its
					// relationship can explain a new word, and it is not a
					// one of its kind: the test below would skip it.
					b, r := nameBit(other), in.Rel
					if (i >= nodeScan || sc.names[b>>6]&(1<<(b&63)) == 0) &&
						(int(r>>6) >= len(sc.hope) || sc.hope[r>>6]&(1<<(r&63)) == 0) &&
						(!wantOne || in.Alike != 1) {
						continue
					}
				}
				rm := uint64(0)
				if r := in.Rel; int(r) < len(sc.relSeen) && sc.relSeen[r] == sc.relStamp {
					rm = sc.relMasks[r]
				} else {
					rm = relMask(r)
				}
				match := rm
				if i < nodeScan {
					match |= sc.masks.get(other)
				}
				match &= all
				gain := match &^ p.mask
				one := wantOne && in.Alike == 1
				if gain == 0 && !one {
					continue
				}
				if !relOK(o.Rels, in.Rel) {
					continue
				}
				if other == p.prev && p.hops > 0 {
					continue // straight back
				}
				if !one {
					if matched >= matchCap {
						continue
					}
					matched++
				}
				offer(*in, match, gain, v.NodeWeight(other))
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
	clear(sc.lists[:cap(sc.lists)])
	return dst
}

// offerQ records edge in, seen from from at hop, as a candidate with
// importance imp and the score parts of parts (keeping the best path's)
// and returns its index.
func (sc *scratch) offerQ(dst []Candidate, from uint32, in engine.Incident, imp float64, hop uint8, parts Candidate) ([]Candidate, int32) {
	idx, found := sc.table.slot(in.Edge, int32(len(dst)))
	if !found {
		src, dstN := in.Ends(from)
		parts.Edge, parts.Src, parts.Dst, parts.Rel, parts.Importance, parts.From, parts.Hop = in.Edge, src, dstN, in.Rel, imp, from, hop
		return append(dst, parts), idx
	}
	c := &dst[idx]
	if imp > c.Importance || (imp == c.Importance && hop < c.Hop) {
		parts.Edge, parts.Src, parts.Dst, parts.Rel, parts.Importance, parts.From, parts.Hop = c.Edge, c.Src, c.Dst, c.Rel, imp, from, hop
		parts.Lent = c.Lent
		*c = parts
	}
	return dst, idx
}

// comparePaths orders paths best first: score, then end node, seed,
// previous node and mask, so that the order (and which path per end node
// is extended) never depends on the order edges were met in.
func comparePaths(a, b *path) int {
	switch {
	case a.score != b.score:
		if a.score > b.score {
			return -1
		}
		return 1
	case a.node != b.node:
		return cmp.Compare(a.node, b.node)
	case a.origin != b.origin:
		return cmp.Compare(a.origin, b.origin)
	case a.prev != b.prev:
		return cmp.Compare(a.prev, b.prev)
	case a.mask != b.mask:
		return cmp.Compare(a.mask, b.mask)
	case a.hops > 0 && b.hops > 0:
		return cmp.Compare(a.chain[a.hops-1], b.chain[b.hops-1])
	}
	return 0
}

// maskSet maps node ids to query masks: open addressing, linear probing,
// sized to at most an eighth full, reset per walk.
type maskSet struct {
	keys []uint32
	vals []uint64
	used []bool
	n    int
	mask uint32
}

func (m *maskSet) reset(hint int) {
	size := 64
	for size < 8*hint { // an eighth full: a miss (most lookups) reads one byte
		size <<= 1
	}
	if len(m.keys) < size {
		m.keys, m.vals, m.used = make([]uint32, size), make([]uint64, size), make([]bool, size)
	} else {
		clear(m.used[:size])
	}
	m.mask, m.n = uint32(size-1), 0
}

func (m *maskSet) or(k uint32, v uint64) {
	for h := (k * 0x9E3779B1) & m.mask; ; h = (h + 1) & m.mask {
		if !m.used[h] {
			m.used[h], m.keys[h], m.vals[h] = true, k, v
			m.n++
			return
		}
		if m.keys[h] == k {
			m.vals[h] |= v
			return
		}
	}
}

func (m *maskSet) get(k uint32) uint64 {
	for h := (k * 0x9E3779B1) & m.mask; m.used[h]; h = (h + 1) & m.mask {
		if m.keys[h] == k {
			return m.vals[h]
		}
	}
	return 0
}
