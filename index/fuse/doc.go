// Package fuse merges ranked result lists, the last step of hybrid search:
// the vector (HNSW) and text (BM25) retrievers each return their own best-
// first list of node IDs, and reciprocal rank fusion turns them into one.
//
// RRF uses only ranks, never the retrievers' scores, which live on
// incomparable scales (cosine vs BM25). Normalize then rescales the fused
// scores into (0, 1] so they can seed a graph expansion.
//
// # Determinism
//
// Fused scores are accumulated in 64-bit fixed point, so a node's score
// does not depend on the order of the lists or on floating-point summation
// order: nodes with the same multiset of ranks tie exactly, and ties are
// broken by ID ascending. The same input always yields the same output.
//
// # Concurrency
//
// RRF and Normalize are safe for concurrent use. RRF borrows its scratch
// table from a sync.Pool, so steady-state calls allocate nothing when the
// caller reuses dst.
//
// # Memory ownership
//
// RRF never retains or modifies the input lists; it writes its result into
// dst[:0] (growing it only when too small) and returns it. Normalize works
// in place.
//
// fuse has no error paths and therefore no errors.go: every input,
// including empty lists and n larger than the union, has a defined result.
package fuse
