// Package codeindex turns a Go module into triplets with go/parser and
// go/types (and golang.org/x/tools' export-data codec for its cache of
// imported packages' declarations), no LLM and no network: `kgctx index`.
//
// Nodes are the module's packages, files, functions, methods, types and
// interfaces, named as a reader writes them: pkg.Func, pkg.Type.Method,
// pkg.Type, the file's module-relative path, the package's name (its
// module-relative directory when two packages share a name; its import
// path is kept as an alias). A package may have any number of init
// functions, which Go gives no name: each is pkg.init@file.go, and a
// second one in the same file pkg.init@file.go(2). Every name is sent
// exact (engine.TripletInput.SourceExact): case kept, nothing folded, so
// Conn.close and Conn.Close are two nodes named as in the source, with no
// synthetic suffix. Every symbol node carries its location (the
// module-relative file with '/', its first and last lines; a file node
// spans its lines) and a one-line signature printed from the source
// (`func (nc *Conn) Close()`, `type Conn struct`, an interface method as
// the interface writes it; at most 256 bytes); the first sentence of a
// doc comment is the description. A file's description names its imports
// ("Imports bufio, context, ...").
//
// Edges: contains (package -> file), defines (file -> symbol), has_method
// (type or interface -> method), calls (resolved with type information:
// static calls and methods of known receivers), calls_via_interface (a
// call through an interface, to the interface's method), implements (type
// -> interface) and implemented_by (an interface's method -> the method
// of each implementing type, named where each is declared: an embedded
// interface's, an embedded type's), embeds, uses_type (signatures and
// struct fields), imports (package -> package of the module or of another
// module: the standard library is no node, only named in file
// descriptions), tests (a Test, Benchmark, Fuzz or Example function ->
// what it calls in the module, and Foo for TestFoo). So a walk goes from
// a call through an interface to its implementations and on to their
// callees. Calls and types outside the module are left out; what go/types
// cannot resolve (an import outside the module and the standard library,
// which is never fetched) is left out, never guessed.
//
// implements is what go/types decides (types.Implements of the type's
// pointer, so pointer receivers count, parameter names and named results
// never matter), over the module's packages checked as imports
// (declarations only, from the type cache when unchanged) so that every
// type compared comes from one consistent set; a generic type is compared
// instantiated with its own type parameters. Types and interfaces of
// _test.go files and of files of another platform are not compared.
//
// Files: every .go file of the module is read whatever its build
// constraints, except those no build can include (//go:build ignore):
// those of this platform are type-checked, those of another GOOS or
// GOARCH, a custom tag or cgo are read for their declarations (nodes,
// defines, has_method, imports, locations, signatures; no calls, which
// would need their platform's check). A symbol declared once per platform
// is one node, defined by each file, located in this platform's.
//
// Loading: the module's packages are parsed in parallel and type-checked
// from source with their tests; the standard library and the module's
// packages as imports are checked from source with function bodies
// stripped (declarations are all an importer needs), once each per run.
//
// Incremental: a State records per package the files' content hashes,
// the nodes and edges each file states (between ids that never collide:
// import path qualified), the implements edges, and the triplets written. A
// run reads again only the packages with a file added, changed or removed
// (by hash, or by `git diff --name-only REV` with Options.Since), renders
// every edge with the names of this run, and sends the store the
// difference: new triplets and those of the packages read (descriptions
// may change; no weight is sent, so learnt weights stay), deletes of the
// triplets no longer stated and of the nodes no triplet names (the
// store's delete cascades to edges and index entries). implements is
// recomputed over every package whenever one was read, so a changed
// interface updates the types of untouched packages. The state is trusted
// only while the store still holds the module's package node, exact (a
// cleared graph is indexed afresh). A state of the build that folded
// names (version 4) is not used; its nodes are deleted before the module
// is indexed afresh, so that none stays beside its exact namesake.
//
// Untrusted input: the module's files, the state and the type cache are
// all read as input that may be hostile. Files behind symbolic links that
// leave the module's root are not read, nor .go files over MaxFileSize or
// that are not regular files (tree, files.go); import paths that are not
// clean are not looked up; an import cycle is an error (ErrImportCycle)
// before anything is written. A state is kept 0600 in a directory that
// no other user may write (PrepareStateDir), is bound to the store,
// tenant and module root it describes (Binding), and names what a run may
// delete: a run deletes only nodes of the indexer's kinds and edges of
// its relationships, whatever the state says. Every stage checks the
// run's context; a run stopped while writing returns no state, so the
// caller keeps the previous one and the next run finishes the work.
//
// Other languages: Python, TypeScript, JavaScript, Java and Rust sources
// under the root (with or without a go.mod) are parsed with tree-sitter
// grammars compiled to WebAssembly (package treesitter) and stated and
// resolved by package langs, into the same node kinds and relationships
// (plus extends); their modules are named apart from the Go packages
// (polyglot.go). Their facts are kept per file in the State and reused
// while a file's content hash is unchanged (or git says it is, with
// Since); resolution runs over every file each run. Dependency and build
// directories (node_modules, vendor, target, dist, build, out, coverage,
// virtual environments, hidden ones) are not walked, and generated or
// minified files are skipped with a note, as are files the parser gives
// up on; a file with syntax errors states what the parser read.
//
// Concurrency: Run, LoadState and PrepareStateDir may be called from
// several goroutines, for different state files; two runs must not share
// a state file or a type cache file. A run cancelled during a type check
// returns without waiting for it; the abandoned check ends soon after.
package codeindex
