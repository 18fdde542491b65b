//go:build !amd64 || purego

package hnsw

import "unsafe"

func prefetchAll(ptrs []unsafe.Pointer, size int) {}

func prefetchRange(p unsafe.Pointer, size int) {}

func distBatchCosAVX2(q unsafe.Pointer, n int, ptrs []unsafe.Pointer, out []float32, stop float32) int {
	panic("hnsw: no AVX2 kernel in this build")
}

func distBatchL2AVX2(q unsafe.Pointer, n int, ptrs []unsafe.Pointer, a, c float32, out []float32, stop float32) int {
	panic("hnsw: no AVX2 kernel in this build")
}
