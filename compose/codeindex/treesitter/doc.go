// Package treesitter runs tree-sitter's C runtime and grammars, compiled
// to WebAssembly (wasm32-wasi) and embedded in the binary, in wazero, a
// WebAssembly runtime written in Go: parsers for Python, JavaScript,
// TypeScript (and TSX), Java and Rust with no cgo.
//
// Modules: one per language family (python, javascript, typescript with
// typescript and tsx, java, rust), each tree-sitter's runtime (the Go
// module github.com/tree-sitter/go-tree-sitter v0.25.0, src/lib.c), its
// grammars and csrc/glue.c, built by scripts/build-grammars.sh and
// embedded gzipped (wasm/*.wasm.gz). A module is decompressed and
// compiled to machine code (wazero's compiler; its interpreter where the
// compiler does not run) on first use of one of its languages, once per
// Runtime; Options.CacheDir keeps the compiled code between processes.
//
// Parsing: Runtime.Parse hands the source to an instance of the module,
// which parses it and returns the whole tree in one flat array (glue.c's
// kg_dump, one call per file); Tree and Node read it in Go. Anonymous
// nodes that are punctuation or operators are left out of the dump;
// keywords (def, async, static, export) stay. A source with syntax
// errors gives a tree with ERROR or missing nodes where the grammar could
// not follow, and the rest parsed as usual (Tree.Errors counts them).
//
// Queries: NewQuery compiles a tree-sitter query (a tags.scm); Runtime.Match
// runs it over a source and applies the text predicates the C runtime
// leaves to its host: #eq?, #not-eq?, #any-eq?, #any-not-eq?, #match?,
// #not-match?, #any-match?, #any-not-match?, #any-of?, #not-any-of?.
// Directives (#set!, #strip!, #select-adjacent!) and property predicates
// (#is?, #is-not?) do not filter.
//
// Concurrency and ownership: a Runtime is safe for concurrent use. An
// instance of a module is not: each call takes one from a pool of its
// module (at most Options.Instances, default GOMAXPROCS) and gives it
// back, or drops it when its memory, which never shrinks, has grown past
// Options.RecycleAbove, or when the call failed (memory limit, timeout,
// ctx done). A parse or a query in progress stops at tree-sitter's next
// progress check (every few thousand steps) once its context is done:
// the module asks the host (kgctx.stop), which costs far less than
// wazero's WithCloseOnContextDone (a check compiled into every loop,
// which made parsing three times slower). A Tree is the caller's,
// immutable, safe to read from several goroutines; it holds its own copy
// of the source. A Query is immutable and may be used by several
// goroutines at once.
//
// Untrusted input: sources are parsed inside the WebAssembly sandbox, with
// no file system, no clock and no environment, within a memory limit
// (Options.MaxMemory) and a time limit per call (Options.ParseTimeout);
// a source over MaxSourceSize is refused. The compilation cache holds
// machine code that this process runs: Options.CacheDir must be a
// directory no other user can write (the caller checks; codeindex keeps
// it inside its state directory).
package treesitter
