package traverse

import "fmt"

// Options shape one expansion. Zero fields take the defaults.
type Options struct {
	// Depth is the number of hops from a seed an edge may lie at
	// (default 2, at most MaxDepth). Use DepthZero for 0.
	Depth int
	// MaxFanout caps the edges each node offers, strongest first
	// (default 64).
	MaxFanout int
	// MaxVisited caps the nodes that enter the walk (default 4,096).
	MaxVisited int
	// HopDecay multiplies the score per extra hop, in (0,1] (default
	// 0.8: a second hop that explains more of the query than the first
	// must be able to outrank it).
	HopDecay float64
	// Rels, when set, restricts the walk to edges whose relationship id r
	// has Rels[r] true (Graph RAG's chosen predicates); nil walks every
	// edge.
	Rels []bool
	// Query, when set, makes the walk read the query (see Query): paths
	// are scored by how much of it they explain, and hubs offer the edges
	// that match it. Nil: the query-blind score of the first version.
	Query *Query
}

// DepthZero asks for depth 0 (only edges between seeds), since a zero Depth
// means the default.
const DepthZero = -1

// MaxDepth bounds Options.Depth.
const MaxDepth = 4

// Defaults.
const (
	DefaultDepth      = 2
	DefaultMaxFanout  = 64
	DefaultMaxVisited = 4096
	DefaultHopDecay   = 0.8
)

// Validate reports out-of-range fields.
func (o *Options) Validate() error {
	switch {
	case o.Depth < DepthZero || o.Depth > MaxDepth:
		return fmt.Errorf("%w: depth %d is outside 0..%d", ErrInvalidOptions, o.Depth, MaxDepth)
	case o.MaxFanout < 0 || o.MaxVisited < 0:
		return fmt.Errorf("%w: negative cap", ErrInvalidOptions)
	case o.HopDecay < 0 || o.HopDecay > 1:
		return fmt.Errorf("%w: hopDecay %v is outside (0,1]", ErrInvalidOptions, o.HopDecay)
	}
	return nil
}

func (o Options) withDefaults() Options {
	switch {
	case o.Depth == 0:
		o.Depth = DefaultDepth
	case o.Depth == DepthZero:
		o.Depth = 0
	}
	if o.MaxFanout == 0 {
		o.MaxFanout = DefaultMaxFanout
	}
	if o.MaxVisited == 0 {
		o.MaxVisited = DefaultMaxVisited
	}
	if o.HopDecay == 0 {
		o.HopDecay = DefaultHopDecay
	}
	return o
}
