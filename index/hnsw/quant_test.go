package hnsw

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestQuantKernels: the record kernels (assembly where available, and the
// portable ones) agree bit for bit, honour stop, and approximate the exact
// distances.
func TestQuantKernels(t *testing.T) {
	t.Logf("AVX2 record kernels: %v", useAVX2)
	r := rand.New(rand.NewPCG(5, 5))
	for _, metric := range []Metric{Cosine, L2} {
		for _, dim := range []int{1, 3, 16, 31, 32, 33, 100, 128, 300} {
			g, err := New(Options{Dim: dim, Metric: metric})
			if err != nil {
				t.Fatal(err)
			}
			mk := func() ([]float32, unsafe.Pointer) {
				v := make([]float32, dim)
				for i := range v {
					v[i] = float32(r.NormFloat64() * 3)
				}
				if metric == Cosine {
					normalizeInto(v, v)
				}
				buf := make([]uint64, (g.rstride+7)/8)
				quantize(unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), g.rstride), v, metric)
				return v, unsafe.Pointer(&buf[0])
			}
			qv, qp := mk()
			q := g.queryOf(qp)
			var ptrs []unsafe.Pointer
			var vecs [][]float32
			for range 41 {
				v, p := mk()
				vecs = append(vecs, v)
				ptrs = append(ptrs, p)
			}
			got := make([]float32, len(ptrs))
			want := make([]float32, len(ptrs))
			if n := g.score(q, ptrs, got, negInf); n != len(ptrs) {
				t.Fatalf("scored %d of %d", n, len(ptrs))
			}
			if metric == L2 {
				distBatchL2Go(q.p, g.qdim, ptrs, q.a, q.c, want, negInf)
			} else {
				distBatchCosGo(q.p, g.qdim, ptrs, want, negInf)
			}
			for j := range got {
				if got[j] != want[j] {
					t.Errorf("%v dim %d: kernel %v, portable %v", metric, dim, got[j], want[j])
				}
				exact := float64(g.dist(qv, vecs[j]))
				scale := 1.0
				if metric == L2 {
					scale = float64(l2sq(qv, make([]float32, dim))) + float64(l2sq(vecs[j], make([]float32, dim)))
				}
				if math.Abs(float64(got[j])-exact) > 0.02*scale+1e-3 {
					t.Errorf("%v dim %d: record distance %v, exact %v", metric, dim, got[j], exact)
				}
			}
			if d := g.qdist(q, qp); math.Abs(float64(d)) > 1e-5*(1+float64(q.a)) {
				t.Errorf("%v dim %d: distance to itself %v", metric, dim, d)
			}
			// stop: the first distance below the threshold ends the batch.
			stop := math.Nextafter32(want[10], posInf)
			first := 0
			for first < len(want) && !(want[first] < stop) {
				first++
			}
			if n := g.score(q, ptrs, got, stop); n != first+1 {
				t.Errorf("%v dim %d: stop after %d, want %d", metric, dim, n, first+1)
			}
		}
	}
}
