// Package index is kgctx's seed search: it keeps a vector index (our HNSW,
// subpackage hnsw) and a BM25 full-text index (bleve, subpackage text) in
// step with the engine's nodes, and turns a query text into the topK nodes
// of a scope by reciprocal rank fusion (subpackage fuse) of both rankings.
// Embedders live in subpackage embed.
//
// # Consistency
//
// An Index is an engine.Indexer: the store calls Apply after every batch
// that changes nodes, in sequence order, and replays missed change sets at
// Attach (Open does the attaching). Node vectors are stored by the engine
// with the nodes themselves; the HNSW links, its metadata and a watermark
// are stored in the engine's aux key space ("hnsw/..."), written after the
// graph changes they describe; the text index keeps its own watermark in
// the same bleve batch as the documents. So each side is durable up to its
// watermark and the store replays the rest: reopening never rebuilds.
//
// # Concurrency
//
// Search is safe for concurrent use, and concurrent with Apply (HNSW and
// bleve both support concurrent reads and writes). Apply is called by the
// store with its writer lock held, one at a time.
//
// # Memory ownership
//
// Search appends to the caller's dst and returns it; the caller owns it.
// Allow bitmaps passed in are only read.
package index
