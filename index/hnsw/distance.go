package hnsw

import "math"

// Distance kernels. The portable ones below are unrolled 8 ways with
// independent accumulators so the CPU overlaps the floating-point latency;
// re-slicing to a fixed window lets the compiler drop the bounds checks in
// the loop. They never allocate. The Go compiler does not vectorise, so on
// amd64 CPUs with AVX2 and FMA, init (distance_amd64.go) swaps in assembly
// kernels that are about 3x faster per 128-d distance; build with -tags
// purego to keep the Go ones. Tests check both against each other.
var (
	l2sq       = l2sqGo
	dot        = dotGo
	cosineDist = cosineDistGo
	simdKernel = "" // name of the assembly kernels in use, for benchmarks
)

// dotGo returns the inner product of a and b. len(b) must be >= len(a).
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(a) >= 8 {
		x := a[:8:8]
		y := b[:8:8]
		s0 += x[0] * y[0]
		s1 += x[1] * y[1]
		s2 += x[2] * y[2]
		s3 += x[3] * y[3]
		s4 += x[4] * y[4]
		s5 += x[5] * y[5]
		s6 += x[6] * y[6]
		s7 += x[7] * y[7]
		a = a[8:]
		b = b[8:]
	}
	for i := range a {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// l2sqGo returns the squared Euclidean distance of a and b. len(b) must be
// >= len(a).
func l2sqGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(a) >= 8 {
		x := a[:8:8]
		y := b[:8:8]
		d0 := x[0] - y[0]
		d1 := x[1] - y[1]
		d2 := x[2] - y[2]
		d3 := x[3] - y[3]
		d4 := x[4] - y[4]
		d5 := x[5] - y[5]
		d6 := x[6] - y[6]
		d7 := x[7] - y[7]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		s4 += d4 * d4
		s5 += d5 * d5
		s6 += d6 * d6
		s7 += d7 * d7
		a = a[8:]
		b = b[8:]
	}
	for i := range a {
		d := a[i] - b[i]
		s0 += d * d
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// cosineDistGo is the Cosine metric's distance for unit vectors.
func cosineDistGo(a, b []float32) float32 { return 1 - dotGo(a, b) }

// checkFinite reports whether every component of v is finite, and whether v
// has at least one non-zero component.
func checkFinite(v []float32) (finite, nonZero bool) {
	for _, x := range v {
		if x != x || x > math.MaxFloat32 || x < -math.MaxFloat32 {
			return false, nonZero
		}
		if x != 0 {
			nonZero = true
		}
	}
	return true, nonZero
}

// normalizeInto writes v / |v| into dst (len(dst) == len(v)). A zero vector
// is copied unchanged. The norm is accumulated in float64 so that
// normalising the same input always yields the same bits, which Load relies
// on to reproduce the slab exactly from the caller's stored vectors.
func normalizeInto(dst, v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		copy(dst, v)
		return
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range v {
		dst[i] = float32(float64(x) * inv)
	}
}

// levelFromUniform maps u in [0,1) to a level.
func levelFromUniform(u, mult float64) int {
	l := -math.Log(1-u) * mult // 1-u in (0,1]: no log(0)
	if l >= maxLevel {
		return maxLevel
	}
	return int(l)
}
