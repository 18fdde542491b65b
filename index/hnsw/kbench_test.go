package hnsw

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

func BenchmarkKernelCos(b *testing.B) {
	g, _ := New(Options{Dim: 128})
	r := rand.New(rand.NewPCG(1, 1))
	bufs := make([][]byte, 33)
	for i := range bufs {
		v := make([]float32, 128)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		normalizeInto(v, v)
		bufs[i] = make([]byte, g.rstride)
		quantize(bufs[i], v, Cosine)
	}
	q := g.queryOf(unsafe.Pointer(&bufs[0][0]))
	ptrs := make([]unsafe.Pointer, 32)
	for i := range ptrs {
		ptrs[i] = unsafe.Pointer(&bufs[i+1][0])
	}
	out := make([]float32, 32)
	for _, n := range []int{1, 4, 32} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				g.score(q, ptrs[:n], out, negInf)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
		})
	}
}
