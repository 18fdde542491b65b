package traverse

import (
	"slices"
	"sync"

	"github.com/kgctx/kgctx/engine"
)

// Seed is a start node with its score in (0,1].
type Seed struct {
	Node  uint32
	Score float64
}

// Candidate is an edge met by the walk, with its importance.
type Candidate struct {
	Edge       uint32
	Src, Dst   uint32
	Rel        uint32
	Importance float64
	// From is the visited endpoint whose offer gave the best importance;
	// Hop is the edge's hop count from its best origin (1 = touches a seed).
	From uint32
	Hop  uint8
}

// Expand walks from seeds over v and appends every candidate edge to
// dst[:0], unordered (see Rank). Seeds that are not live nodes are ignored;
// a seed listed twice keeps its best score.
func Expand(v *engine.View, seeds []Seed, opts Options, dst []Candidate) []Candidate {
	o := opts.withDefaults()
	sc := getScratch(v.NodeCap())
	defer putScratch(sc)
	return sc.expand(v, seeds, o, dst[:0])
}

type slot struct {
	epoch uint32  // slot valid when == scratch.epoch
	round uint32  // frontier membership stamp
	hop   uint8   // hops from the best origin
	fpos  int32   // index in the next frontier
	reach float64 // best σ × decay^dist
}

type entry struct {
	node  uint32
	reach float64
	hop   uint8
}

type scratch struct {
	epoch    uint32
	round    uint32
	slots    []slot
	visited  []uint32
	frontier []entry
	next     []entry
	table    candTable
}

var pool = sync.Pool{New: func() any { return &scratch{} }}

func getScratch(nodes int) *scratch {
	sc := pool.Get().(*scratch)
	if len(sc.slots) < nodes {
		sc.slots = make([]slot, nodes+nodes/8)
		sc.epoch = 0
	}
	sc.epoch++
	if sc.epoch == 0 { // wrapped: stale stamps could collide
		clear(sc.slots)
		sc.epoch = 1
	}
	sc.visited = sc.visited[:0]
	sc.frontier = sc.frontier[:0]
	sc.next = sc.next[:0]
	return sc
}

func putScratch(sc *scratch) { pool.Put(sc) }

func (sc *scratch) expand(v *engine.View, seeds []Seed, o Options, dst []Candidate) []Candidate {
	ep := sc.epoch
	// Round 0: the seeds themselves.
	for _, s := range seeds {
		if !v.Live(s.Node) || !(s.Score > 0) {
			continue
		}
		sl := &sc.slots[s.Node]
		if sl.epoch != ep {
			if len(sc.visited) >= o.MaxVisited {
				continue
			}
			*sl = slot{epoch: ep, fpos: -1}
			sc.visited = append(sc.visited, s.Node)
		}
		sl.reach = max(sl.reach, min(s.Score, 1))
	}
	for _, n := range sc.visited {
		sc.frontier = append(sc.frontier, entry{node: n, reach: sc.slots[n].reach})
	}
	if o.Depth == 0 {
		return sc.seedEdges(v, o, dst)
	}
	// Rounds 1..depth-1: relax reach over the capped adjacency, using the
	// values the frontier had at the end of the previous round so that a
	// round extends paths by exactly one hop.
	for round := 1; round < o.Depth && len(sc.frontier) > 0; round++ {
		sc.round++
		rs := sc.round
		sortEntries(sc.frontier)
		sc.next = sc.next[:0]
		for _, f := range sc.frontier {
			cand := f.reach * o.HopDecay
			for _, in := range top(v, f.node, o.MaxFanout) {
				if !relOK(o.Rels, in.Rel) {
					continue
				}
				w := in.Other()
				sl := &sc.slots[w]
				if sl.epoch != ep {
					if len(sc.visited) >= o.MaxVisited {
						continue
					}
					*sl = slot{epoch: ep, fpos: -1}
					sc.visited = append(sc.visited, w)
				} else if cand <= sl.reach {
					continue
				}
				sl.reach = cand
				sl.hop = uint8(round)
				if sl.round == rs {
					sc.next[sl.fpos].reach = cand
				} else {
					sl.round = rs
					sl.fpos = int32(len(sc.next))
					sc.next = append(sc.next, entry{node: w, reach: cand, hop: uint8(round)})
				}
			}
		}
		sc.frontier, sc.next = sc.next, sc.frontier
	}
	// Every visited node offers its strongest edges as candidates.
	sc.table.reset(len(sc.visited) * 8)
	for _, n := range sc.visited {
		sl := &sc.slots[n]
		wn := v.NodeWeight(n)
		for _, in := range top(v, n, o.MaxFanout) {
			if !relOK(o.Rels, in.Rel) {
				continue
			}
			imp := sl.reach * in.Weight * (wn + v.NodeWeight(in.Other())) / 2
			dst = sc.offer(dst, n, in, imp, sl.hop+1)
		}
	}
	return dst
}

// relOK reports whether the walk may follow relationship r.
func relOK(rels []bool, r uint32) bool {
	return rels == nil || (int(r) < len(rels) && rels[r])
}

// top is the prefix of n's ranked edges the walk may use.
func top(v *engine.View, n uint32, fanout int) []engine.Incident {
	list := v.Ranked(n)
	if len(list) > fanout {
		list = list[:fanout]
	}
	return list
}

// seedEdges handles depth 0: edges whose endpoints are both seeds.
func (sc *scratch) seedEdges(v *engine.View, o Options, dst []Candidate) []Candidate {
	ep := sc.epoch
	sc.table.reset(len(sc.visited) * 8)
	for _, n := range sc.visited {
		sl := &sc.slots[n]
		wn := v.NodeWeight(n)
		for _, in := range top(v, n, o.MaxFanout) {
			if sc.slots[in.Other()].epoch != ep || !relOK(o.Rels, in.Rel) {
				continue
			}
			imp := sl.reach * in.Weight * (wn + v.NodeWeight(in.Other())) / 2
			dst = sc.offer(dst, n, in, imp, 1)
		}
	}
	return dst
}

// offer records edge in, seen from its endpoint from, as a candidate.
func (sc *scratch) offer(dst []Candidate, from uint32, in engine.Incident, imp float64, hop uint8) []Candidate {
	idx, found := sc.table.slot(in.Edge, int32(len(dst)))
	if !found {
		src, dstN := in.Ends(from)
		return append(dst, Candidate{Edge: in.Edge, Src: src, Dst: dstN, Rel: in.Rel, Importance: imp, From: from, Hop: hop})
	}
	c := &dst[idx]
	if imp > c.Importance || (imp == c.Importance && hop < c.Hop) {
		c.Importance, c.From, c.Hop = imp, from, hop
	}
	return dst
}

// sortEntries orders a frontier by reach descending, then node id, which is
// the order nodes are admitted in when MaxVisited binds.
func sortEntries(es []entry) {
	slices.SortFunc(es, func(a, b entry) int {
		switch {
		case a.reach > b.reach:
			return -1
		case a.reach < b.reach:
			return 1
		case a.node < b.node:
			return -1
		case a.node > b.node:
			return 1
		}
		return 0
	})
}

// candTable maps edge ids to candidate indexes: open addressing with linear
// probing, cleared by epoch so reuse costs nothing.
type candTable struct {
	keys  []uint32
	vals  []int32
	stamp []uint32
	epoch uint32
	mask  uint32
	n     int
}

func (t *candTable) reset(hint int) {
	size := 1024
	for size < hint*2 {
		size <<= 1
	}
	if len(t.keys) < size {
		t.keys = make([]uint32, size)
		t.vals = make([]int32, size)
		t.stamp = make([]uint32, size)
		t.epoch = 0
	}
	t.mask = uint32(len(t.keys) - 1)
	t.epoch++
	if t.epoch == 0 {
		clear(t.stamp)
		t.epoch = 1
	}
	t.n = 0
}

// slot returns the index stored for key, or stores val and reports false.
func (t *candTable) slot(key uint32, val int32) (int32, bool) {
	if t.n*2 >= len(t.keys) {
		t.grow()
	}
	h := (key * 0x9E3779B1) & t.mask
	for {
		if t.stamp[h] != t.epoch {
			t.stamp[h], t.keys[h], t.vals[h] = t.epoch, key, val
			t.n++
			return val, false
		}
		if t.keys[h] == key {
			return t.vals[h], true
		}
		h = (h + 1) & t.mask
	}
}

func (t *candTable) grow() {
	oldK, oldV, oldS, oldE := t.keys, t.vals, t.stamp, t.epoch
	size := len(oldK) * 2
	t.keys, t.vals, t.stamp = make([]uint32, size), make([]int32, size), make([]uint32, size)
	t.mask, t.epoch, t.n = uint32(size-1), 1, 0
	for i, s := range oldS {
		if s == oldE {
			t.slot(oldK[i], oldV[i])
		}
	}
}
