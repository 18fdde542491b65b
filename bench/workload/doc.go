// Package workload supplies the data sets the kgctx benchmark harness
// (package bench) drives the engine with. It owns three families of input:
//
//   - Real knowledge graphs read from the shared datasets folder that sits
//     next to the repository (never inside it): FB15k-237 triplets with human
//     labels and descriptions, and the queries derived from its test split.
//     See FindDatasets for how the folder is located.
//   - A synthetic code-architecture graph (services, packages, files,
//     interfaces, functions, errors) whose size is a parameter, streamed edge
//     by edge so that million-node graphs can be generated without holding
//     them in memory.
//   - Vectors for HNSW benchmarks: the real SIFT-5k descriptors, clustered
//     generated vectors of any size, and a brute-force ground-truth helper.
//
// Everything is deterministic: loaders keep file order, and every generator
// takes a fixed seed, so two benchmark runs see byte-identical inputs and
// their numbers can be compared.
//
// # Concurrency
//
// Loaded values (FB15k, SIFT) are read-only after their loader returns and
// may be shared between goroutines. A Synthetic is immutable after
// NewSynthetic; each call to Each or Queries keeps its own state, so calls
// may run concurrently. The callback passed to Each runs on the caller's
// goroutine. GroundTruth fans out over GOMAXPROCS goroutines internally.
//
// # Memory
//
// LoadFB15k materialises the 272k training triplets: about 60 MB live,
// 224-byte structs sharing their label and description strings.
// Synthetic.Each holds O(1) state in the graph size: a fixed 600 KiB name
// cache plus a target set per source node (bounded by its out-degree); the
// 1M-node / 5M-edge stream runs in a few MB of live heap. It reuses a
// single engine.TripletInput for every callback, so the callback must copy
// what it keeps and must not retain the pointer. Clustered allocates one
// contiguous backing array of n*dim float32s.
package workload
