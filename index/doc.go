// Package index is kgctx's seed search: it keeps a vector index (our HNSW,
// subpackage hnsw) and a BM25 full-text index (bleve, subpackage text) in
// step with the engine's nodes and observations, and turns a query text
// into the topK nodes of a scope by fusing both rankings. The fusion is
// reciprocal rank fusion (subpackage fuse) by default; Query.Scores asks
// for score fusion instead (BM25 scores divided by the best, plus the
// weighted cosine similarities), which keeps the gaps of each ranking: the composer's graph,
// session and RAG blocks all search that way. Embedders live in subpackage
// embed. What a word is (the stop words, the Porter stem) is defined once,
// in subpackage words, a leaf that the text index, the embedder, the
// composer and the benchmarks all read.
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
// watermark and the store replays the rest: reopening never rebuilds,
// except a text index that has no watermark (its folder was lost) or was
// written with other analyzers (text.ErrSchemaMismatch, an older kgctx):
// the change log keeps only what the indexes have not passed, so Attach
// rebuilds such a text index from every live document of the store. An
// Apply that fails (a bleve or Badger error) is retried by the store, and
// if it keeps failing the store's Sync and IndexFailure report
// engine.ErrIndexBehind (the writes themselves succeed: they are stored)
// until a later change set, or the next open, catches the index up.
//
// # Concurrency
//
// Search is safe for concurrent use, and concurrent with Apply (HNSW and
// bleve both support concurrent reads and writes). Apply is called by the
// store's apply queue, one goroutine that hands it the committed change
// sets one at a time in sequence order, without the writer lock: a writer
// goes on with its next batch while the last one is indexed, and readers
// that need their writes wait for the queue (read-your-writes).
//
// # Memory ownership
//
// Search appends to the caller's dst and returns it; the caller owns it.
// Allow bitmaps passed in are only read.
package index
