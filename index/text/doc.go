// Package text is the full-text (BM25) side of kgctx seed search: given a
// query text such as "fix null pointer in auth middleware", it returns the
// top-k graph nodes of one tenant scope by BM25 over the nodes' names,
// aliases, types and descriptions.
//
// # What it owns
//
// An Index owns one bleve v2 index (scorch, zap segments) at Options.Path,
// or in memory when Path is "". Nothing else may write in that directory.
// Every node is one bleve document whose id is the node's dense uint32 id
// as 4 big-endian bytes, with the fields
//
//	name, aliases, type   NameAnalyzer ("kgctx_name"): identifier parts + joined name
//	description           TextAnalyzer ("kgctx_text"): identifier-aware English
//	org                   keyword: Org
//	scope                 keyword: Org + "\x00" + Project
//
// indexed only (no stored values, term vectors or doc values). The package
// also owns the two analyzers, registered in bleve's global registry at
// init, and a schema stamp in bleve's internal key space (Open refuses an
// index written with other analyzers: ErrSchemaMismatch). Caller meta keys
// (SetMeta, UpsertWithMeta) live in the same internal key space under a
// private prefix.
//
// # Analysis
//
// SplitName splits identifiers at separators (anything but letters, digits
// and marks: _ - . / : whitespace, punctuation) and at case and digit
// boundaries: AuthService -> auth service, HTTPServer -> http server,
// parseJSON2Go -> parse json 2 go, auth_middleware.go -> auth middleware go.
// The name analyzer indexes those parts plus their concatenation
// ("authservice"), so a query naming the entity exactly ("AuthService",
// "auth service") matches a term only that entity has and ranks it first.
// Names are neither stemmed nor stop-worded: identifiers match literally.
// Descriptions use bleve's English pipeline (possessives, stop words,
// Porter stemming) on words split with the same identifier rules, so
// "handles auth_middleware.go" is found by "handle auth middleware".
//
// # Query and scoring
//
// A search is, inside bleve,
//
//	(name:q^2 OR aliases:q^2 OR type:q^0.5 OR description:q)  restricted to  tenant [and Allow]
//
// with one match query per field (the query text analysed by that field's
// analyzer, its terms ORed). The tenant restriction is a term on the scope
// field (or the org field for org-wide searches) that takes no part in the
// score; bleve evaluates it either as a filter over the text matches or as
// a leapfrogging conjunction, picked per search from the tenant's size (see
// scopedQuery). A small Filter.Allow (<= 256 ids) joins the restriction as
// a doc-id query; a larger one is applied to the ranked hits, requesting
// more hits until k survive. Results are ordered by score, ties by ID,
// exactly (the cut at k is widened until no tie straddles it).
//
// Scoring is bleve's BM25 (IndexMapping.ScoringModel = "bm25", k1 = 1.2,
// b = 0.75), which differs from textbook BM25 in ways worth knowing:
//
//   - tf is sqrt(term frequency), and the saturation is
//     idf * tf*k1 / (tf + k1*(1 - b + b*len/avglen)) (no k1+1 factor);
//   - idf = ln(1 + (N - n + 0.5)/(n + 0.5)) uses N and n over the whole
//     index, all tenants together: one tenant's documents shift another's
//     term weights (they never make its documents match);
//   - avglen is not the mean field length but ceil(distinct terms of the
//     field, summed over segments / N), so length normalisation is
//     relative to an estimate that varies with segment layout;
//   - like Lucene's classic scoring, bleve multiplies each term score by
//     boost*idf*queryNorm and disjunctions by coord (matched/total
//     clauses): a node matching more query terms or fields gains more.
//
// Scores are therefore comparable within one query only. The tests check
// the properties that matter for ranking: a rare term outweighs a common
// one, a short field outranks a long one with the same match, and repeated
// terms saturate along the BM25 curve rather than growing like TF-IDF.
//
// # Durability
//
// Verified in the bleve v2.6.1 source (index/scorch): with a Path, scorch's
// "unsafe_batch" defaults to false, and Scorch.Batch then blocks until the
// persister has written the batch's segment file (zap: File.Sync) and
// committed the new root to its bolt file (bolt commit fsync, then
// rootBolt.Sync). This package never sets unsafe_batch, so when Upsert,
// Delete, UpsertWithMeta or SetMeta returns nil, the change survives a
// crash. One caveat: bleve does not fsync the directory after creating a
// segment file; this package fsyncs index_meta.json and the directory when
// it creates an index, not per batch. An in-memory index (Path "") is
// never persisted.
//
// A call is written as one bleve batch per BatchSize operations. Each batch
// is atomic and durable before the next starts, so a crash in the middle of
// a large Upsert leaves a prefix of its batches; replaying the call is
// idempotent. UpsertWithMeta puts the meta write in the last batch, so a
// replay watermark stored that way is never ahead of the documents.
//
// # Concurrency
//
// An Index is safe for concurrent use by multiple goroutines: searches run
// concurrently with each other and with Upsert, Delete and meta writes.
// Each search reads one scorch snapshot, so it sees every batch either
// entirely or not at all. Writes from different goroutines are serialised
// by bleve batch by batch; they do not interleave within a batch. Close
// waits for in-flight calls; every call after it fails with ErrClosed.
//
// # Memory ownership
//
// Upsert does not retain docs or their strings (values are copied into the
// bleve documents). SetMeta and UpsertWithMeta copy val; GetMeta returns a
// fresh copy. Search writes its hits into dst[:0] (growing it if needed)
// and returns that slice, which the caller owns; it reads Filter.Allow
// during the call only, so the bitmap must not be modified concurrently
// with the call but may be reused after it. SplitName returns a fresh
// slice.
//
// # Performance
//
// FB15k-237 descriptions (14,515 nodes: label as name, description), k=10,
// one tenant, 2-core machine: median search 0.2 ms, mean 0.4 ms (queries
// made of very common words such as "2010 American film" score thousands
// of matches, about 0.5 µs each, up to a few ms); Upsert of all nodes in
// one call about 0.65 s on disk, fsync included (~22k nodes/s). The same
// tenant among nine others of its size (150k documents): median 0.5 ms,
// mean 0.8 ms. See BenchmarkText_Search and BenchmarkText_Upsert.
package text
