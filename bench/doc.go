// Package bench is kgctx's benchmark harness: scenarios that build or load
// a graph (FB15k-237, a generated code-architecture graph, SIFT vectors),
// then measure what the targets of DESIGN.md name: import rate, block
// latency in process and over HTTP on loopback, blocks/s with concurrent
// clients, HNSW recall and speed, peak RSS. `kgctx bench` binds its flags
// to Config; the Go benchmarks in this package's tests reuse the same
// workloads. Workload generators and dataset loaders live in
// bench/workload.
//
// Runs are not safe to run concurrently in one process (RSS is per
// process). Reports are plain values the caller owns.
package bench
