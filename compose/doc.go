// Package compose turns retrieval into the markdown blocks an agent reads:
// the graph block (## Knowledge Graph Triplets) now; the observations
// block, the session block, the in-session injector, budgets, the recall
// matrix, the retrieval query text and feedback ranking as they arrive.
//
// A block is built in one pass: seeds from package index, expansion and
// scoring from package traverse, both under one engine.View so they see one
// snapshot; then candidates best first, each endpoint checked by the Cedar
// PEP (package policy) lazily and cached per request, each line rendered
// from sanitised text and added only if the whole block, header included,
// stays within the token budget (skip and continue).
//
// # Concurrency
//
// A Composer is safe for concurrent use once built; its fields must not be
// changed afterwards. Per-call scratch is pooled.
//
// # Memory ownership
//
// Returned blocks and slices belong to the caller.
package compose
