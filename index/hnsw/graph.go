package hnsw

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
)

// Graph is an HNSW index over caller-chosen uint32 ids. See the package
// documentation for the concurrency contract. The zero Graph is not usable;
// call New or Load.
type Graph struct {
	opts    Options // with defaults applied
	dim     int
	m, m0   int // list capacity on upper layers / layer 0
	stride0 int // 1 + m0
	strideU int // 1 + m
	qdim    int // components of a quantised record (dim rounded up to 32)
	rstride int // bytes per quantised record
	mult    float64
	dist    func(a, b []float32) float32
	sparse  int // Options.Sparse: nonzeros kept in a slot; 0 = dense layout
	// maskWords is the uint64 words of a sparse slot's mask of nonzeros.
	maskWords int
	zero      []float32 // Dim zeros: a tombstone's vector

	dir    atomic.Pointer[directory]
	growMu sync.Mutex

	// slotMu is held shared by every operation that reads vectors or links
	// (Search, Exact, Add, Delete) and exclusively only to rewrite the
	// vector, level and upper lists of a slot that was used before
	// (re-adding a deleted id, replacing a vector) and by Check. That is
	// what lets searches read vectors without per-node locks: a slot's
	// memory never changes under a reader that may still hold its id.
	slotMu sync.RWMutex

	// entry packs the entry point: bit 63 valid, bits 32-39 level, low 32
	// bits id. Readers load it atomically; writers hold epMu.
	entry atomic.Uint64
	epMu  sync.Mutex

	// opMu serialises Add/Delete of the same id (striped; collisions only
	// cost a little parallelism). AddBatch holds the stripes of a whole
	// wave, taken in ascending order.
	opMu [opStripes]sync.Mutex

	rngMu sync.Mutex
	rng   *rand.Rand

	live       atomic.Int64 // linked, not deleted
	tombstones atomic.Int64 // present and deleted

	pool sync.Pool // *scratch
}

// Result is one search hit. Distance is in the graph's metric (1 - cos for
// Cosine, squared Euclidean for L2); results are in ascending distance,
// ties by ascending id.
type Result struct {
	ID       uint32
	Distance float32
}

// SearchOptions are per-call search parameters. The zero value searches
// everything with the graph's EfSearch.
type SearchOptions struct {
	// Ef overrides Options.EfSearch when > 0. It is raised to k if smaller.
	Ef int
	// Allow restricts results to these ids; nil means all. The bitmap is
	// only read, and must not be modified during the call.
	Allow *roaring.Bitmap
}

// New returns an empty graph.
func New(opts Options) (*Graph, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("new: %w", err)
	}
	o := opts.withDefaults()
	g := &Graph{
		opts:      o,
		dim:       o.Dim,
		m:         o.M,
		m0:        2 * o.M,
		stride0:   1 + 2*o.M,
		strideU:   1 + o.M,
		mult:      levelMult(o.M),
		sparse:    o.Sparse,
		maskWords: (o.Dim + 63) / 64,
		zero:      make([]float32, o.Dim),
		rng:       rand.New(rand.NewPCG(uint64(o.Seed), 0x9e3779b97f4a7c15)),
	}
	g.qdim, g.rstride = recordSizes(o.Dim, o.Metric)
	if o.Metric == L2 {
		g.dist = l2sq
	} else {
		g.dist = cosineDist
	}
	g.dir.Store(&directory{})
	g.pool.New = func() any { return new(scratch) }
	return g, nil
}

// Options returns the effective options (defaults applied).
func (g *Graph) Options() Options { return g.opts }

// Dim returns the vector dimension.
func (g *Graph) Dim() int { return g.dim }

// Len returns the number of live (inserted, not deleted) nodes.
func (g *Graph) Len() int { return int(g.live.Load()) }

// Contains reports whether id is live: its Add has returned and it has not
// been deleted since.
func (g *Graph) Contains(id uint32) bool {
	ch := g.dir.Load().chunkOf(id)
	return ch != nil && isLive(ch.state[id&chunkMask].Load())
}

// Vector returns a read-only view of id's stored vector (L2-normalised under
// Cosine), or nil if id is not live. In the dense layout the view aliases
// the graph's storage: it stays valid until id is re-added (which rewrites
// the slot in place), and must never be modified. Under Options.Sparse it
// is a copy (or, for a vector kept whole, a view as above).
func (g *Graph) Vector(id uint32) []float32 {
	ch := g.dir.Load().chunkOf(id)
	if ch == nil || !isLive(ch.state[id&chunkMask].Load()) {
		return nil
	}
	var buf []float32
	if g.sparse > 0 {
		buf = make([]float32, g.dim)
	}
	return g.vec(buf, ch, id&chunkMask)
}

const entryValid = uint64(1) << 63

func packEntry(id uint32, level int) uint64 {
	return entryValid | uint64(level)<<32 | uint64(id)
}

func unpackEntry(e uint64) (id uint32, level int, ok bool) {
	return uint32(e), int(e>>32) & 0xff, e&entryValid != 0
}

// randomLevel draws floor(-ln(U) * mL), the paper's exponentially decaying
// level distribution, capped at maxLevel.
func (g *Graph) randomLevel() int {
	g.rngMu.Lock()
	u := g.rng.Float64()
	g.rngMu.Unlock()
	return levelFromUniform(u, g.mult)
}

const opStripes = 256

func (g *Graph) opLock(id uint32) *sync.Mutex { return &g.opMu[opStripe(id)] }

// opStripe is id's stripe of opMu: a multiplicative hash, so consecutive ids
// (the common batch) spread out.
func opStripe(id uint32) int { return int((id * 0x9e3779b1) >> 24) }
