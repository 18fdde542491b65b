package traverse

import (
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
	// The parts of the best path's score (the query-aware walk fills
	// them; see Query): its seed, the seed's score, the share of the
	// query the path explains (F), the weight factor of the edge and its
	// endpoints, the hub factor of the nodes it passed through, and the
	// candidate before this one on the path (index+1 into the result; 0
	// for an edge of a seed).
	Seed             uint32
	SeedScore, Match float32
	WeightF, HubF    float32
	// EdgeF is the product of the path's edge factors (Query.RelFactor,
	// Query.AsideFactor).
	EdgeF  float32
	Parent int32
	// Lent marks a candidate whose importance is a longer path's (the
	// walk's lending); Gain one whose relationship or far end explains a
	// query word its path had not.
	Lent, Gain bool
}

// Expand walks from seeds over v and appends every candidate edge to
// dst[:0], unordered (Less orders them; NewRanker pops them best first).
// Seeds that are not live nodes are ignored; a seed listed twice keeps
// its best score.
func Expand(v *engine.View, seeds []Seed, opts Options, dst []Candidate) []Candidate {
	o := opts.withDefaults()
	sc := getScratch()
	defer putScratch(sc)
	if o.Depth == 0 {
		return sc.depthZero(v, seeds, o, dst[:0])
	}
	q := o.Query
	if q == nil {
		q = &noQuery
	}
	return sc.expandQuery(v, seeds, o, q, dst[:0])
}

type scratch struct {
	round   uint32
	nodes   nodeSet // the nodes that entered the walk, with their state
	visited []uint32
	table   candTable
	paths   []path // the current hop's paths
	next    []path // the next hop's
	masks   maskSet
	aside   maskSet // Query.Aside
	// The walk's memo of relationship masks, by relationship id.
	relMasks []uint64
	relSeen  []uint32
	relStamp uint32
	// farW holds the far endpoints' weights of the node being expanded,
	// read in one tight loop so that their cache misses overlap.
	farW []float64
	// alikeTab holds Query.Alike's factors by count (1/(1 + Alike ln n)),
	// for the rate it was made for.
	alikeTab  []float64
	alikeRate float64
	// names filters the nodes of Query.Nodes (a bit per nameBit hash) and
	// hope the relationships that explain a word the path being extended
	// has not (a bit per id): the scan past a node's strongest edges skips
	// an edge both miss at the cost of two bit tests.
	names [nameBits / 64]uint64
	hope  []uint64
	// order and kept: the beam's sorted keys and the paths it keeps.
	order []pathKey
	kept  []path
	// lists holds the frontier's edge lists (engine.View.Ranked, cleared
	// when the walk ends: they live as long as its View); touch keeps the
	// reads that fetch them from being dropped.
	lists [][]engine.Incident
	touch float64
}

// nameBits sizes scratch.names: with the few hundred nodes a query's
// words name, a node outside them passes the filter rarely.
const (
	nameLog  = 12
	nameBits = 1 << nameLog
)

// nameBit is node n's bit in scratch.names (a multiplicative hash).
func nameBit(n uint32) uint32 { return (n * 0x9E3779B1) >> (32 - nameLog) }

var pool = sync.Pool{New: func() any { return &scratch{} }}

func getScratch() *scratch {
	sc := pool.Get().(*scratch)
	sc.nodes.reset()
	sc.visited = sc.visited[:0]
	return sc
}

func putScratch(sc *scratch) { pool.Put(sc) }

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

// noQuery is the walk's query when the caller gives none: no words, so
// every path explains everything (F = 1) and the ranking is seeds, hops,
// hubs and weights.
var noQuery = Query{Rel: func(uint32) uint64 { return 0 }}

// depthZero handles depth 0: edges whose endpoints are both seeds, scored
// as hop 1 from the better seed.
func (sc *scratch) depthZero(v *engine.View, seeds []Seed, o Options, dst []Candidate) []Candidate {
	for _, s := range seeds {
		if !v.Live(s.Node) || !(s.Score > 0) {
			continue
		}
		i := sc.nodes.find(s.Node)
		if i < 0 {
			i = sc.nodes.add(s.Node)
			sc.visited = append(sc.visited, s.Node)
		}
		sc.nodes.reach[i] = max(sc.nodes.reach[i], min(s.Score, 1))
	}
	sc.table.reset(len(sc.visited) * 8)
	for _, n := range sc.visited {
		reach := sc.nodes.reach[sc.nodes.find(n)]
		for _, in := range top(v, n, o.MaxFanout) {
			other := in.Other()
			if sc.nodes.find(other) < 0 || !relOK(o.Rels, in.Rel) {
				continue
			}
			wf := (0.8 + 0.4*in.Weight) * (0.8 + 0.4*(v.NodeWeight(n)+v.NodeWeight(other))/2) / wfMax
			dst, _ = sc.offerQ(dst, n, in, reach*wf, 1, Candidate{Seed: n, SeedScore: float32(reach), Match: 1, WeightF: float32(wf), HubF: 1, EdgeF: 1})
		}
	}
	return dst
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
