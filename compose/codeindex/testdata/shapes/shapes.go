// Package shapes measures shapes. It is a fixture of the code indexer.
package shapes

import "math"

// Shape is anything with an area.
type Shape interface {
	// Area is the shape's area.
	Area() float64
}

// Square is a square. Its sides are equal.
type Square struct{ Side float64 }

// Area is the square's area.
func (s Square) Area() float64 { return s.Side * s.Side }

// Circle is a circle.
type Circle struct{ R float64 }

// Area is the circle's area.
func (c *Circle) Area() float64 { return math.Pi * c.R * c.R }

// Total sums the areas.
func Total(ss []Shape) float64 {
	t := 0.0
	for _, s := range ss {
		t += s.Area()
	}
	return total(t)
}

func init() {}

// total rounds a sum.
func total(x float64) float64 { return math.Round(x) }
