// Package geom names shapes.
package geom

import (
	"example.com/shapes"
	"github.com/elsewhere/unresolved"
)

// Named is a square with a name.
type Named struct {
	shapes.Square
	Name string
}

// Big says whether a shape is big.
func Big(s shapes.Shape) bool { return shapes.Total([]shapes.Shape{s}) > unresolved.Limit() }

// Describe names n's area.
func (n *Named) Describe() float64 { return n.Area() }

// Cached is a store by embedding.
type Cached struct{ *shapes.Renamed }
