//go:build amd64 && !purego

package hnsw

import "unsafe"

// Software prefetches (quant_amd64.s). The graph walk gathers the
// neighbours it will score, prefetches all their records at once and only
// then scores them, so their cache misses overlap instead of queueing one
// after the other: on the 2-core CI machine a random access costs ~190 ns
// alone and ~12 ns with 16 in flight.

//go:noescape
func prefetchAll(ptrs []unsafe.Pointer, size int)

//go:noescape
func prefetchRange(p unsafe.Pointer, size int)

//go:noescape
func distBatchCosAVX2(q unsafe.Pointer, n int, ptrs []unsafe.Pointer, out []float32, stop float32) int

//go:noescape
func distBatchL2AVX2(q unsafe.Pointer, n int, ptrs []unsafe.Pointer, a, c float32, out []float32, stop float32) int
