// Package langs states what the sources of other languages than Go
// declare and reference, read with tree-sitter (package treesitter), and
// resolves the references across a repository by name: the extraction
// half of `kgctx index` for Python (python.go), TypeScript and
// JavaScript (typescript.go), Java (java.go) and Rust (rust.go).
//
// Two stages, so that a run re-reads only the files that changed:
// Extract states one file on its own (File: its declarations, imports as
// bindings, and references as names written in the source: calls, base
// classes, the subjects of tests); Resolve takes every file's facts and
// turns them into a graph: modules (Space), symbols, and edges between
// their ids. codeindex keeps each File in its state while the file's
// content is unchanged and calls Resolve on all of them every run, so a
// declaration added, renamed or removed in one file changes the edges of
// the files that name it.
//
// Nodes and edges are the Go indexer's where they mean the same: a
// module is a package node (a Python or TS/JS file, a Java package, a
// Rust module), which contains its files; a file defines its functions,
// types (classes, structs, enums, type aliases), interfaces (TS and Java
// interfaces, Rust traits, Python Protocols) and methods (nested classes
// and TS namespaces as Outer.Inner); a type or interface has_method its
// methods; calls and tests link functions and methods; imports link
// modules (and a package outside the repository, the standard library
// aside); extends (a class or interface to its base), implements (a
// class to an interface, a Rust type to a trait) and implemented_by (an
// interface's method to each implementing type's method, inherited ones
// too) link types. A symbol's name is its module's name, '.', and its
// name within the module (Sym.Base): core.Cart.add. Module names are
// given by codeindex from Space.Names.
//
// What is resolved, and what is not: a name that an import, the module
// itself, an enclosing class or a base class declares; self.m(),
// this.m(), super.m() through the class and its bases; Java's x.m() when
// x is declared with a type; a call of a class (Python), new C() (TS/JS,
// Java) to its constructor. A method called on a value of unknown type
// (x.m() in Python or TypeScript), a name only the runtime binds
// (setattr, dynamic import, reflection, macros' generated items), an
// import of a path alias (tsconfig paths), and anything outside the
// repository name nothing: left out, never guessed across files.
//
// Concurrency: Extract may be called from several goroutines (the
// Runtime is safe for concurrent use); Resolve reads its input and does
// not modify it. Returned values are the caller's.
package langs
