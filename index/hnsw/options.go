package hnsw

import (
	"fmt"
	"math"
)

// Metric selects the distance function. The zero value means Cosine.
type Metric int

const (
	// Cosine distance, 1 - cos(a, b), in [0, 2]. Vectors are L2-normalised
	// on insert (and queries on search), so the kernel is a plain dot
	// product. This is the default and what text embedders want.
	Cosine Metric = iota + 1
	// L2 is the squared Euclidean distance (no square root: it preserves
	// the order and saves the sqrt). Use it for SIFT-like descriptors.
	L2
)

// String returns "cosine", "l2" or "Metric(n)".
func (m Metric) String() string {
	switch m {
	case 0, Cosine:
		return "cosine"
	case L2:
		return "l2"
	}
	return fmt.Sprintf("Metric(%d)", int(m))
}

// Defaults applied by New for zero fields of Options.
const (
	DefaultM              = 16
	DefaultEfConstruction = 200
	DefaultEfSearch       = 64
	DefaultExactCutoff    = 2048
)

// Upper bounds that keep per-node memory and search cost sane; values above
// them are almost certainly unit mistakes.
const (
	maxDim = 1 << 16
	maxM   = 512
	maxEf  = 1 << 20
	// maxSparseDim bounds Dim under Options.Sparse (a slot's mask is a
	// few words).
	maxSparseDim = 256
)

// Options configures a Graph. A zero field means its default, except Dim,
// which is required.
type Options struct {
	// Dim is the number of components of every vector. Required.
	Dim int

	// M is the maximum number of neighbours a node keeps on each upper
	// layer; layer 0 keeps up to 2*M. Higher M raises recall and memory
	// (about 8*M bytes per node for layer 0) and slows inserts. 16 is a good
	// default; 32-48 for very high-dimensional or hard data; below 8 recall
	// suffers. Default 16, minimum 2.
	M int

	// EfConstruction is the candidate list size while inserting. Higher
	// values build a better graph, more slowly; raising it past ~400 rarely
	// helps. Values below M are raised to M. Default 200.
	EfConstruction int

	// EfSearch is the default candidate list size of Search (per-call
	// SearchOptions.Ef overrides it). It trades speed for recall; it is
	// raised to k when smaller. Default 64.
	EfSearch int

	// Metric is the distance function; the zero value means Cosine.
	Metric Metric

	// Seed seeds the level generator. The graph (levels, neighbour lists,
	// entry point) is a pure function of the options, Seed included, and of
	// the sequence of Add, AddBatch and Delete calls with their ids and
	// vectors, provided those calls do not overlap: AddBatch builds the same
	// graph whatever its workers count, GOMAXPROCS and the goroutine
	// schedule. Searches and persistence reads running alongside change
	// nothing; writes running concurrently with each other give a valid
	// graph that depends on their interleaving. See the package
	// documentation for what else it depends on (batch splits, kernels,
	// Load).
	Seed int64

	// ExactCutoff: a filtered Search whose allow-list holds at most this many
	// ids scans the allow-list exactly instead of walking the graph (exact
	// and, for small lists, faster). A filtered search is also exact when
	// the allow-list holds fewer than 1/20 of the live nodes, because the
	// graph walk would then visit about 20x more nodes than it returns.
	// Default 2048.
	ExactCutoff int

	// Sparse, when above 0, keeps each vector as the mask of its nonzero
	// components and their values, up to Sparse of them in the node's
	// slot (Dim/8 + 4*Sparse bytes, rounded to words), instead of Dim
	// float32; a vector with more is kept whole beside the slot.
	// Distances are computed on the vector restored whole, with the same
	// kernels, so every result is the one the dense layout gives. For
	// embedders whose vectors are mostly zeros: the lexical embedder's 128
	// components hold 54 nonzeros on average for a node's name, type and
	// description (the synthetic graph), and Sparse 64 keeps a node in 272
	// bytes instead of 512. Requires Dim <= 256; 0 (the default) keeps the
	// dense layout. The layout is in memory only: Load takes it from its
	// options, never from what was saved.
	Sparse int
}

// Validate reports whether o is usable. Zero fields are valid (they mean the
// default); negative values, a missing Dim or an unknown Metric are not.
// Validate does not modify o; New applies the defaults.
func (o *Options) Validate() error {
	switch {
	case o.Dim <= 0:
		return fmt.Errorf("Dim %d must be positive: %w", o.Dim, ErrInvalidOptions)
	case o.Dim > maxDim:
		return fmt.Errorf("Dim %d above %d: %w", o.Dim, maxDim, ErrInvalidOptions)
	case o.M < 0 || o.M == 1 || o.M > maxM:
		return fmt.Errorf("option M %d must be 0 (default) or in [2, %d]: %w", o.M, maxM, ErrInvalidOptions)
	case o.EfConstruction < 0 || o.EfConstruction > maxEf:
		return fmt.Errorf("EfConstruction %d out of range: %w", o.EfConstruction, ErrInvalidOptions)
	case o.EfSearch < 0 || o.EfSearch > maxEf:
		return fmt.Errorf("EfSearch %d out of range: %w", o.EfSearch, ErrInvalidOptions)
	case o.Metric != 0 && o.Metric != Cosine && o.Metric != L2:
		return fmt.Errorf("unknown %v: %w", o.Metric, ErrInvalidOptions)
	case o.ExactCutoff < 0:
		return fmt.Errorf("ExactCutoff %d must not be negative: %w", o.ExactCutoff, ErrInvalidOptions)
	case o.Sparse < 0 || o.Sparse > o.Dim || o.Sparse > 0 && o.Dim > maxSparseDim:
		return fmt.Errorf("option Sparse %d must be 0 or in [1, Dim] with Dim <= %d: %w", o.Sparse, maxSparseDim, ErrInvalidOptions)
	}
	return nil
}

// withDefaults returns o with every zero field replaced by its default.
func (o Options) withDefaults() Options {
	if o.M == 0 {
		o.M = DefaultM
	}
	if o.EfConstruction == 0 {
		o.EfConstruction = DefaultEfConstruction
	}
	if o.EfConstruction < o.M {
		o.EfConstruction = o.M
	}
	if o.EfSearch == 0 {
		o.EfSearch = DefaultEfSearch
	}
	if o.Metric == 0 {
		o.Metric = Cosine
	}
	if o.ExactCutoff == 0 {
		o.ExactCutoff = DefaultExactCutoff
	}
	return o
}

// levelMult is mL of the paper, 1/ln(M): it makes the expected number of
// nodes shrink by a factor M per layer.
func levelMult(m int) float64 { return 1 / math.Log(float64(m)) }
