// Package embed turns text into fixed-length, L2-normalised float32 vectors
// for the HNSW cosine index.
//
// It owns the Embedder contract and two implementations:
//
//   - Lexical, the embedded default: feature hashing of words, word bigrams
//     and character trigrams. No model, no network, fully deterministic, so
//     an index built on one machine is reproducible on another.
//   - HTTP, a client for any OpenAI-compatible /v1/embeddings endpoint
//     (OpenAI, Ollama, vLLM, llama.cpp server, ...).
//
// plus the vector helpers Normalize and Dot.
//
// # Vectors
//
// Every vector returned by an Embedder has exactly Dim() components and unit
// L2 norm, so cosine similarity is a plain dot product. Cosine is undefined
// for the zero vector, so text that carries no signal (empty or blank; for
// Lexical: no letter or digit at all) embeds to the fixed unit basis vector
// e0 = (1, 0, 0, ...) instead of an error: a batch of node texts must not
// fail because one node has no description, and all blank texts compare
// equal to each other. See EmptyVector.
//
// # Concurrency
//
// Lexical and HTTP are immutable after construction and safe for concurrent
// use by any number of goroutines.
//
// # Memory ownership
//
// Vectors returned by Embed belong to the caller. Lexical.Embed carves all
// vectors of one call out of a single backing array (one allocation per call)
// with capped capacity, so appending to one vector never overwrites another.
// Lexical.EmbedInto writes into the caller's dst and does not retain it.
//
// # Naming
//
// Name() identifies the embedder and its dimension ("lexical-v1/128",
// "http/nomic-embed-text/768"). A store records it next to its index and
// refuses to mix vectors from a different embedder: vectors from different
// embedders live in unrelated spaces even when their dimensions agree. Any
// change to the Lexical feature design must bump its version.
package embed
