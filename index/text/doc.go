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
// index written with other analyzers: ErrSchemaMismatch; package index then
// rebuilds it from the store). Caller meta keys
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
// "handles auth_middleware.go" is found by "handle auth middleware"; the
// stop words (the function words) and the stemmer are package words',
// the composer's too. AppendWords is the query's reading of a text (split,
// every stop word dropped, request wording included, stemmed), for
// callers that match words outside the index.
//
// The query text is analysed per field the same way, with one addition
// for name and aliases: identifier terms. The name analyzer treats the
// whole query as one name, so for "why is DecodePriceLinks slow" it yields
// the parts and "whyisdecodepricelinksslow", never "decodepricelinks", the
// term only the node DecodePriceLinks has. So the query also looks up the
// concatenated parts of every whitespace-separated word with several parts
// ("decodepricelinks", "pkgpaymentsretry" for pkg/payments/retry), with 3
// times the weight of a name term (a name written as one word names its
// node more surely than the words around it), and of every run of 2 to 4
// consecutive words without a function word ("in the payments
// gateway service" -> "paymentsgateway", "paymentsgatewayservice",
// "gatewayservice"). Most of these terms exist in no document and cost a
// dictionary lookup per segment; the one that exists names a node exactly.
//
// # Query and scoring
//
// Conceptually a search is
//
//	(name:q^2 OR aliases:q^2 OR type:q^0.5 OR description:q)  restricted to  tenant [and Allow]
//
// with the query's terms per field ORed. It is evaluated by this package
// (engine.go) on bleve's index: bleve's searchers cost about 0.3 µs per
// posting on such a query (nested disjunctions, one DocumentMatch per
// posting and level, byte-slice id comparisons), the package's own
// document-at-a-time loop over the segments' postings iterators about
// 0.07 µs, and it scores exactly as bleve would (TestEngineMatchesBleve
// compares the two on every hit).
//
// The tenant restriction is the scope field's term (or the org field's,
// for org-wide searches); it takes no part in the score. Per segment, if
// every live document is in the tenant (a single-tenant deployment) it
// costs nothing, otherwise the tenant's postings are advanced in step with
// the matches (roaring skips). Filter.Allow is checked on the node id of
// every match that would enter the top k. Results are ordered by score,
// ties by ID, exactly, in one pass: the collector reads the node id of
// every match that enters the top k or ties with its worst hit, from a
// per-segment array of node ids that searches fill as they need it
// (idcache.go; a stored-id read costs about 0.5 µs at 1M documents, and a
// query with a common term can tie thousands of matches).
//
// # Bounded query cost
//
// The cost of a search grows with the postings of its terms: every
// posting of a searched term is decoded and scored. Words like "service",
// "payments", "fix" or "parser" match tens of thousands of nodes of a
// code graph, so unbounded BM25 costs tens of ms at 100k nodes and grows
// linearly with the index. A search therefore scores only the rarest
// terms (highest IDF) within a posting budget, Options.MaxPostings
// (DefaultMaxPostings):
//
//  1. look up the document frequency (df, the postings count over the
//     whole index, all tenants) of every distinct (field, term) of the
//     query; terms with df 0 match nothing and are left out;
//  2. take them by increasing df (decreasing IDF; ties by field, then
//     term) and keep each while the kept dfs sum to at most the budget;
//     stop at the first that does not fit (every later one is at least as
//     common);
//  3. if not even the rarest fits, keep it alone when its df is at most
//     3x the budget (the hard cap), so one moderately common word still
//     finds something; otherwise keep nothing: the query has only
//     ultra-common words, the text search returns no hits, and the vector
//     side of index.Index's fusion ranks the query alone.
//
// The kept terms select the matches (phase 1). The dropped terms then
// re-rank them (phase 2): every match gains the BM25 contribution of each
// dropped term it contains, computed for a term frequency of 1 and the
// match's field length when a kept term matched that field (the field's
// average length otherwise), and counts it in the coord factors below.
// At most the 8 rarest dropped terms re-rank, and only terms in at most
// half of the documents (idf below 0.7: nearly every match has them).
// Containment is found by skipping through the dropped term's postings
// bitmap from match to match, so re-ranking costs a search per match and
// dropped term, not a decode of its postings. So the ranking among the
// documents of the rare terms stays close to full BM25: for
// "timeout reading invoice" the ~2,000 errors with "timeout" are the
// matches, and the one that also has "reading" and "invoice" ranks first.
// What the rule gives up is documents that contain none of the kept terms,
// which are found only through the dropped terms' combination: a query
// with no distinctive word ("refactor payments parse invoice line" when
// each word is common) finds what its rarest words find.
//
// Why this rule: a term's IDF is what makes it count in BM25, and the
// most common terms are both the most expensive to score and the least
// discriminating (at df = N/10, idf is about 2.3; at df = 3, about 12.5,
// and a term's weight grows with idf squared). The budget is absolute
// rather than a fraction of N because it bounds latency, which depends on
// postings decoded, not on the index size; in a larger index more terms
// exceed it, and those are exactly the ones whose IDF falls.
//
// How the default (4,000) was chosen: on the synthetic code graph of
// bench/workload (one document per node), 600 queries about one known
// node each (function, error, file, package, service, interface; by
// exact name, by description, by the words of the name), k = 30, 2-core
// machine, thread CPU per search at 1M documents:
//
//	budget     p50      p99      target first   in top 10   MRR
//	none       38 ms    170 ms   84%            100%        0.92
//	4,000      0.23 ms  1.1 ms   83%            87%         0.85
//	8,000      0.85 ms  1.9 ms   84%            88%         0.85
//	16,000     1.6 ms   4.4 ms   84%            99%         0.91
//
// At 100k documents the 4,000 budget ranks exactly as well as the
// unbounded search (target first for 96%, in the top 10 for all, MRR
// 0.98) at 0.8 ms p50 and 1.4 ms p99 instead of 3.5 and 18 ms. What 4,000
// loses at 1M are queries with no distinctive word ("refactor billing
// parse invoice line", each word in 10k+ nodes), whose target is not
// among the matches of the rarest words; queries naming a node (by
// identifier, path, or run of words) find it first. Buying those back
// takes a budget four times larger, at four times the cost.
//
// Stats (SearchStats) reports the terms kept and dropped and the postings
// searched. Document frequencies are cached per index snapshot (a
// snapshot is immutable; any write or merge starts a new cache), so the
// common words of a query stream are looked up once per snapshot.
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
//     Here a field's coord is (matched terms)/D_f, where D_f is the number
//     of tokens the field's analyzer makes of the query (the clauses of
//     bleve's match query; identifier terms are extra clauses that do not
//     count in D_f), and the outer coord is (fields matched)/(fields with
//     a query term in the index).
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
// Searches keep two caches, both tied to the segments they describe: the
// document frequencies of recent query terms for the current snapshot
// (at most 65,536 entries), and per segment an array of node ids (4 bytes
// per document, 4 MB per million documents), filled as searches need it.
//
// # Performance
//
// 2-core machine shared with other jobs (wall-time percentiles include
// waiting for a CPU; p99-cpu-µs, the searching thread's CPU time, does
// not), k = 30, BenchmarkText_SearchSynthetic (package bench) and
// BenchmarkText_Search (FB15k-237, this package), before (bleve's searchers over all
// query terms) and after this design:
//
//	                         mean      p50       p99       p99 CPU
//	synthetic-100k  before   24 ms     15.5 ms   84 ms     83 ms
//	                after    0.6 ms    0.55 ms   1.9-2.4   1.4-1.6 ms
//	synthetic-1m    before   223 ms    136 ms    720 ms    696 ms
//	                after    0.25-0.33 0.2-0.25  0.8-1.1   0.7-1.0 ms
//
// (100k documents cost more than 1M: more of a query's terms fit the
// budget, so more postings are scored and more matches re-ranked.)
// FB15k-237 descriptions (14,515 nodes, k = 10): mean 0.44 -> 0.1 ms, p99
// 3.4 -> 0.5 ms; the same tenant among nine others (150k documents): mean
// 0.87 -> 0.07 ms. Upsert is unchanged by this design: about 20k
// documents/s for the 100k-node graph in calls of 10k (4-6 CPU-seconds,
// fsync included; BenchmarkText_UpsertSynthetic in package bench), 11k/s for the 1M-node
// graph in calls of 50k while other jobs shared the machine; its cost is
// inside bleve (segment building about 40%, analysis 25%, merging 10%).
package text
