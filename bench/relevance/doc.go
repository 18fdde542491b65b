// Package relevance is kgctx's relevance harness (`kgctx bench
// relevance`): it imports the retrieval-quality dev sets of the shared
// datasets folder into in-memory apps through the real import path, asks
// kgctx for its blocks on every question, builds the same blocks with
// simple baselines on the same data, budget and line format, and reports
// what each block holds.
//
// Sets (one in-memory app per family; one project per set, per LoCoMo
// conversation, per codeloc repository):
//   - metaqa-{1,2,3}hop: MetaQA dev questions over its KB; the query is the
//     question with the topic entity's brackets removed.
//   - fb15k-{1,2}hop and their -para twins: questions generated from
//     FB15k-237 train (fb15kq.go), plain and paraphrased wording of the
//     same facts. The graph is the one workload.LoadFB15k builds (entity
//     labels as names, readable relation names: raw relation paths can
//     exceed the engine's 128-byte relationship limit).
//     fb15k-fresh-1hop(-para) asks the one-hop facts in templates,
//     relation wordings and synonyms written apart from those the ranking
//     was tuned on (fb15kfresh.go); every one-hop set is asked at depth 1
//     too.
//   - codeloc: the commits of the five Go repositories; the query is the
//     subject and the first body line.
//   - locomo: the QA items with evidence of the three conversations; each
//     turn is an observation "[date] speaker: text (shares a photo: ...)".
//   - codeindex (with Config.CodeSrc; a run without Config.Sets adds it):
//     codeloc's commits over the graph `kgctx index` makes of each
//     repository's snapshot (codeindex.go), kgctx's graph and session
//     blocks at 500, 750 and 1,500 tokens beside BM25 over the same
//     triplets and an Aider-style repo map of the same source (repomap.go).
//   - codelangs-python, codelangs-typescript (with Config.CodeSrc, asked by
//     name): the same questions of three Python and three TypeScript
//     repositories (CodeSets: commits after a snapshot, the functions each
//     changed as gold; codelangs.go), the repo map tagging them with each
//     grammar's tags.scm.
//
// Metrics (names compared through engine.NormalizeName, relationships
// through engine.NormalizeRelationship, so surface forms do not count as
// misses):
//   - answer hit: 1 when any gold answer is the source or target of a
//     line of the block; answer recall: the fraction of the distinct gold
//     answers that are.
//   - triplet hit (FB15k 1-hop): the asked triplet is a line of the block;
//     path hit (2-hop): both triplets of the chain are.
//   - function recall: the fraction of gold functions that are a source or
//     target of a line; file recall: the fraction of gold files reached, a
//     file being reached when its own node, or a node it defines or
//     contains (an edge file -defines|contains-> node in the repository's
//     graph), is a source or target of a line.
//   - codeindex's function recall, file recall and precision
//     (codeBlockScores) read code maps too: a gold function is named by a
//     line's endpoint, or by a map line holding its qualified name or, in
//     its file's section, its bare name; a file by a line, a member, or a
//     map's file line; precision is the share of a block's lines (triplet
//     and map lines) naming a gold function or file. Code names compare
//     exactly (codeloc's "#2" aside).
//   - evidence recall: the fraction of a QA item's evidence turns whose
//     observation id is in the block's observation ids (evidence ids that
//     name no turn are dropped; items left without evidence skipped); also
//     per LoCoMo category.
//   - precision (every set; the last column): the share of a block's items
//     that hold gold, NaN for an empty block (counted apart): MetaQA, the
//     lines with a gold answer as an endpoint; FB15k, the lines that are
//     gold triplets; codeloc, the lines with an endpoint that is a gold
//     function, a gold file or a node a gold file defines or contains;
//     LoCoMo, the evidence observations among the block's lines and
//     observations; codeindex as above.
//   - tokens: ceil(code points / 4) of the block; latency p50/p99 of
//     composing one block in process (a baseline's is its ranking plus its
//     rendering at that budget).
//
// Each row also counts anomalies: empty blocks, blocks over budget, blocks
// repeating a line, and kgctx blocks whose text disagrees with their own
// triplets, observation ids or token count.
//
// Baselines (baselines.go) rank an in-memory copy of the project's
// triplets, made from the store's export after the import, and render
// with the same header, line format, budget and skip-and-continue as
// kgctx. Nothing in the harness looks at a dataset's content beyond its
// format: the same code would run on other questions, conversations and
// repositories of the same kinds.
//
// Runs are deterministic given Config.Seed except for latencies.
package relevance
