package embed

import (
	"context"
	"math"
)

// Embedder turns texts into vectors.
type Embedder interface {
	// Dim is the length of every returned vector.
	Dim() int
	// Embed returns one L2-normalised vector per text, in order. Safe for
	// concurrent use. Blank texts yield EmptyVector (see package doc).
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Name identifies the embedder and dimension, e.g. "lexical-v1/128";
	// it is stored with the index so a store can refuse a different
	// embedder.
	Name() string
}

// EmptyVector fills v with the vector used for text that carries no signal:
// the unit basis vector e0 = (1, 0, ..., 0). It is a unit vector, so cosine
// stays defined, and it is the same for every embedder and dimension. v must
// not be empty.
func EmptyVector(v []float32) {
	clear(v)
	v[0] = 1
}

// Normalize scales v in place to unit L2 norm. It returns false, leaving v
// unchanged, when v is the zero vector or its norm is not finite (NaN or Inf
// components), since such a vector has no direction.
func Normalize(v []float32) bool {
	// Accumulate in float64: a 4096-d float32 sum of squares loses enough
	// precision to leave norms visibly off 1.
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return false
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
	return true
}

// Dot returns the dot product of a and b, the cosine similarity when both
// are unit vectors. a and b must have the same length; anything else is a
// caller bug and panics.
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		panic("BUG: embed.Dot: vectors of different length")
	}
	// Four independent accumulators break the add dependency chain; this is
	// roughly 3x faster than the naive loop for 128-d and up.
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		a4, b4 := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += a4[0] * b4[0]
		s1 += a4[1] * b4[1]
		s2 += a4[2] * b4[2]
		s3 += a4[3] * b4[3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
