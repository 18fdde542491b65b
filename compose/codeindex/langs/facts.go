package langs

// Node kinds and relationships, the Go indexer's where they mean the same
// (codeindex's constants are these).
const (
	KindPackage   = "package"
	KindFile      = "file"
	KindFunction  = "function"
	KindMethod    = "method"
	KindType      = "type"
	KindInterface = "interface"

	RelContains   = "contains"
	RelDefines    = "defines"
	RelHasMethod  = "has_method"
	RelCalls      = "calls"
	RelImplements = "implements"
	RelImplBy     = "implemented_by"
	RelExtends    = "extends"
	RelImports    = "imports"
	RelTests      = "tests"
)

// Version is the version of what extraction states: a state whose files
// were extracted by another version is read again.
const Version = 1

// File is what one source file states on its own, without looking at any
// other file, so that it is kept (in codeindex's state) while the file is
// unchanged and resolved again, with every other file's, on each run.
// Owned by whoever holds it; never modified after Extract returns it.
type File struct {
	Path   string `json:"p"` // root-relative, '/'-separated
	Lang   string `json:"l"` // python, javascript, typescript, java, rust
	Hash   string `json:"h"`
	Lines  int    `json:"n,omitempty"`
	Test   bool   `json:"t,omitempty"`  // a test file by its language's conventions
	Errors int    `json:"er,omitempty"` // syntax error nodes (what they cover is left out)
	// Package is the file's package as the file declares it (Java's
	// package clause), else "".
	Package string `json:"pk,omitempty"`
	// Doc is the first sentence of the module's doc (a module docstring,
	// //! lines).
	Doc string `json:"d,omitempty"`
	// Mods are the inline modules the file declares (Rust's mod x { }),
	// as paths under the file's own module; Sym.Mod indexes them from 1.
	Mods [][]string `json:"m,omitempty"`
	// ModDecls are the file modules a Rust file declares (mod x;).
	ModDecls []string  `json:"md,omitempty"`
	Imports  []Binding `json:"i,omitempty"`
	Syms     []Sym     `json:"s,omitempty"`
	Refs     []Ref     `json:"r,omitempty"`
}

// Sym is a declaration: a function, a class or other type, an interface
// or trait, a method.
type Sym struct {
	Base string `json:"b"` // within its module: "Command", "Command.invoke", "test(\"retries\")"
	Kind string `json:"k"`
	// Mod is the inline module declaring it (Rust): 0 for the file's own
	// module, else 1 + an index into File.Mods.
	Mod  int    `json:"m,omitempty"`
	Desc string `json:"d,omitempty"`
	Sig  string `json:"s,omitempty"`
	Line int    `json:"l"`
	End  int    `json:"e"`
	Test bool   `json:"t,omitempty"` // a test (its calls are tests edges)
	// Owner is the type a method belongs to, as a path written in the
	// module (Python, TypeScript, Java: the enclosing class's base; Rust:
	// an impl's type); nil for a function or a type.
	Owner []string `json:"o,omitempty"`
}

// Binding is a name an import (or a re-export) binds in a module.
type Binding struct {
	Mod  int    `json:"m,omitempty"` // as Sym.Mod
	Name string `json:"n"`           // the local name; "*" for a wildcard import
	// Path is what is imported, in the language's terms: a Python dotted
	// module (relative ones as written, ".x"), a TS/JS specifier resolved
	// against the file's directory ("src/x" for "./x", "react" for a
	// package), a Java qualified name, a Rust path as written.
	Path []string `json:"p"`
	// Symbol is the imported name within Path's module ("" for a module
	// itself: import x, import * as x).
	Symbol string `json:"s,omitempty"`
	Export bool   `json:"x,omitempty"` // TS/JS export ... from: visible to importers
}

// Ref is a reference that names something another file may declare: a
// call, a base class, a test's subject. Resolved by name (resolve.go).
type Ref struct {
	From string `json:"f"`           // the referring symbol's base ("" for a Rust impl: FromPath)
	Mod  int    `json:"m,omitempty"` // as Sym.Mod
	Rel  string `json:"r"`           // calls, tests, extends (extends or implements, decided by the target)
	// Path is the name as written: ["foo"], ["mod", "f"], ["Class", "m"].
	Path []string `json:"p"`
	// How: "" a plain name; "self" a method of the enclosing class (self.m,
	// this.m); "super" a method of its bases; "implicit" (Java's m()) the
	// enclosing classes' methods, then Path as a name; "new" a class whose
	// constructor is called; "name" a test's subject by name (resolved in
	// the file's own scope and imports only, never guessed further).
	How string `json:"h,omitempty"`
	// Class is the enclosing class for "self", "super" and "implicit", as
	// a path in the module.
	Class []string `json:"c,omitempty"`
	// FromPath names the source when it is not a symbol of the file (a
	// Rust impl's type for implements).
	FromPath []string `json:"fp,omitempty"`
	Line     int      `json:"l,omitempty"`
}
