// Package compose turns retrieval into the markdown blocks an agent reads:
// the graph block (## Knowledge Graph Triplets) now; the observations
// block, the session block, the in-session injector, budgets, the recall
// matrix, the retrieval query text and feedback ranking as they arrive.
//
// A block is built in one pass: seeds from package index, expansion and
// scoring from package traverse, both under one engine.View so they see one
// snapshot; then candidates best first, each endpoint checked by the Cedar
// PEP (package policy) lazily and cached per request, each line rendered
// and added only if the whole block, header included, stays within the
// token budget (skip and continue).
//
// # Rendering untrusted text
//
// Names, relationships, ids and observation text are untrusted. Every
// renderer writes its lines through one helper (render.go): trusted markup
// goes in as literals, untrusted text only sanitised (no control or format
// characters, no line breaks, capped) and, where it starts a markdown block
// (a line, or a list item's content), with its leading block marker
// escaped. So no input adds a heading, a list item or any other block to a
// block, and a block never repeats a line.
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
