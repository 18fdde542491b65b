package embed

import (
	"context"
	"math"
	"testing"
)

func TestNormalize(t *testing.T) {
	v := []float32{3, 4}
	if !Normalize(v) || v[0] != 0.6 || v[1] != 0.8 {
		t.Fatalf("Normalize(3,4) = %v", v)
	}
	z := []float32{0, 0, 0}
	if Normalize(z) || z[0] != 0 {
		t.Fatal("zero vector normalised")
	}
	if Normalize(nil) {
		t.Fatal("nil normalised")
	}
	n := []float32{1, float32(math.NaN())}
	if Normalize(n) || n[0] != 1 {
		t.Fatal("NaN vector normalised or modified")
	}
	inf := []float32{float32(math.Inf(1)), 1}
	if Normalize(inf) {
		t.Fatal("Inf vector normalised")
	}
	// Tiny components do not underflow: the sum is taken in float64.
	tiny := []float32{1e-30, 1e-30}
	if !Normalize(tiny) || math.Abs(float64(tiny[0])-math.Sqrt2/2) > 1e-6 {
		t.Fatalf("tiny = %v", tiny)
	}
}

func TestDot(t *testing.T) {
	for n := range 11 {
		a, b := make([]float32, n), make([]float32, n)
		var want float32
		for i := range n {
			a[i], b[i] = float32(i+1), float32(2*i-3)
			want += a[i] * b[i]
		}
		if got := Dot(a, b); got != want {
			t.Errorf("n=%d: Dot = %v want %v", n, got, want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Dot of different lengths did not panic")
		}
	}()
	Dot(make([]float32, 2), make([]float32, 3))
}

func TestEmptyVector(t *testing.T) {
	v := []float32{5, 6, 7}
	EmptyVector(v)
	if !isEmptyVector(v) || norm(v) != 1 {
		t.Fatalf("EmptyVector = %v", v)
	}
}

func BenchmarkDot128(b *testing.B) {
	x, y := make([]float32, 128), make([]float32, 128)
	for i := range x {
		x[i], y[i] = float32(i), float32(128-i)
	}
	var s float32
	for b.Loop() {
		s += Dot(x, y)
	}
	_ = s
}

func TestCounted(t *testing.T) {
	lex, err := NewLexical(LexicalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := NewCounted(lex)
	if _, err := c.Embed(context.Background(), []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.Embed(ctx, []string{"c"})
	calls, _, secs := c.Stats()
	if calls != 2 || secs < 0 || c.Dim() != lex.Dim() || c.Name() != lex.Name() {
		t.Fatalf("calls %d, seconds %v, dim %d, name %q", calls, secs, c.Dim(), c.Name())
	}
}
