// Package compose turns retrieval into the markdown blocks an agent reads
// and learns from what they did:
//
//   - the graph block (## Knowledge Graph Triplets, GraphBlock);
//   - the session block (SessionBlock): observations, then the graph part,
//     budgets per work type, the recall matrix's gates, cross-project
//     transfer, the injection log it writes;
//   - Graph RAG (RAG): semantic hits, then expansion over chosen predicates;
//   - the in-session injector (Injector): a tool call's lookups within a
//     latency budget, injected or queued for the next turn;
//   - learning (learning.go): feedback on a session's logs (EMA weights)
//     and the tool-result graph (errors, fixes, propagation);
//   - the configuration documents (Settings) and the policy-checked read
//     paths of the API (access.go: triplet queries, nodes, observations,
//     injection logs all go through the same scope and Cedar check as a
//     block).
//
// # Ranking
//
// Every block that shows triplets finds them the same way (graph.go,
// query.go): seeds from package index (BM25 and vectors fused by score),
// rescored by how their names match the query's weighted words (verbatim
// names dominate, gaps kept), plus the nodes whose whole name the query
// spells out; then package traverse walks from them, scoring each edge by
// the share of the query its path explains; the budget is spread among the
// seeds, lines that add no node wait (novelty), and each endpoint passes
// the Cedar PEP (package policy) before its line is rendered, skip and
// continue within the token budget, header included. Observations are
// ranked by fused relevance times their learnt weight, the best hits
// bringing the note recorded next in their session (follow.go). The README
// ("How triplets are scored") has the formula and a worked example; every
// block route can explain each line's score parts. Query words weigh their
// inverse frequency among the scope's own names (code.go, scopeFreqs).
//
// # Code graphs
//
// A code indexer's graph is read for what it is (code.go): test code (the
// sources of `tests` edges) is set aside unless the work item is about
// tests; when the seeds are code symbols (they carry locations), paths
// weigh by relationship and direction (what a function calls and its
// implementations first, where it lives and what its package imports
// last) and by the size of the symbol they lead to; and the graph and
// session blocks add a code map (codemap.go): each file's path, then its
// ranked symbols' line numbers and signatures, rendering the containment
// candidates (defines, has_method, contains) in one budget with the
// triplet lines.
//
// # Rendering untrusted text
//
// Names, relationships, ids and observation text are untrusted. Every
// renderer writes its lines through one helper (render.go): trusted markup
// goes in as literals, untrusted text only sanitised (no control or format
// characters, no line breaks, capped) and, where it starts a markdown block
// (a line, or a list item's content), with a backslash before what would
// change the block's lines (a heading, a quote, a fence, a rule, a setext
// underline, a table delimiter, HTML, a link definition). So no input adds
// a line or a heading to a block, names are otherwise shown verbatim
// ("_models.Response", "1. FC Köln": a nested list marker stays), and a
// block never repeats a line.
//
// # Concurrency and lifetime
//
// A Composer is safe for concurrent use once built; its fields must not be
// changed afterwards. Per-call scratch is pooled; the name-length and
// name-stem caches grow with the nodes queries touch and never go stale
// (names never change, ids are never reused); the per-scope caches of code
// readings and name frequencies are replaced, never changed, when the
// scope's counts move (a stale one misjudges a word or a test or two). Settings caches each
// configuration document, loading it under its lock, and hands out copies.
// An Injector is safe for concurrent use; its per-session memory (what was
// shown in-session, blocks pending the next turn) is bounded
// (MaxInjectorSessions, least recently used first; MaxPendingPerSession)
// and lives in memory only: a restart loses it, and only in-session blocks
// can then be shown again (the start-of-session block's are read back from
// the injection logs; blocks pushed to a runtime are on the durable inject
// queue).
//
// # Memory ownership
//
// Returned blocks and slices belong to the caller.
package compose
