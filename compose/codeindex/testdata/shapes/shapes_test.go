package shapes

import "testing"

func TestTotal(t *testing.T) {
	if Total([]Shape{Square{Side: 2}}) != 4 {
		t.Fatal("total")
	}
}

func TestSquare_Area(t *testing.T) {
	_ = Square{Side: 1}.Area()
}
