//go:build race

package hnsw

// raceEnabled shrinks workloads: the race detector slows this code ~10x.
const raceEnabled = true
