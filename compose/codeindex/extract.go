package codeindex

import (
	"crypto/sha256"
	"encoding/hex"
	"go/ast"
	"go/types"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kgctx/kgctx/compose/codeindex/langs"
)

// Node kinds (the nodes' type in the store), one set for every language.
const (
	KindPackage   = langs.KindPackage
	KindFile      = langs.KindFile
	KindFunction  = langs.KindFunction
	KindMethod    = langs.KindMethod
	KindType      = langs.KindType
	KindInterface = langs.KindInterface
)

// Relationships.
const (
	RelContains   = langs.RelContains     // package -> file
	RelDefines    = langs.RelDefines      // file -> function, method, type, interface
	RelHasMethod  = langs.RelHasMethod    // type or interface -> method
	RelCalls      = langs.RelCalls        // function or method -> function or method (static, or on a known receiver)
	RelCallsIface = "calls_via_interface" // function or method -> an interface's method
	RelImplements = langs.RelImplements   // type -> interface
	RelImplBy     = langs.RelImplBy       // interface method -> the method of a type that implements it
	RelEmbeds     = "embeds"              // struct or interface -> embedded type
	RelUsesType   = "uses_type"           // function, method or type -> a type of its signature or fields
	RelImports    = langs.RelImports      // package -> package
	RelTests      = langs.RelTests        // test function -> what it exercises
	RelExtends    = langs.RelExtends      // class or interface -> its base (the other languages)
)

// node is what the graph says of one symbol, keyed by its id: the
// import path qualifies it ("pkg:" + path for packages, "file:" + path for
// files), so ids never collide; names are derived from ids (namer).
type node struct {
	Kind string `json:"k"`
	Pkg  string `json:"p,omitempty"` // import path of the declaring package
	Base string `json:"b,omitempty"` // Func, Type, Type.Method, init@file.go; the path of a file
	Desc string `json:"d,omitempty"`
	// Where it is declared: the module-relative file (with '/'), the
	// first and last lines; and its one-line signature.
	File string `json:"f,omitempty"`
	Line int    `json:"l,omitempty"`
	End  int    `json:"e,omitempty"`
	Sig  string `json:"s,omitempty"`
	// Other: declared in a file of another platform (not type-checked
	// here); a declaration of the same symbol in a checked file wins.
	Other bool `json:"o,omitempty"`
}

// edge is a triplet between ids.
type edge struct{ S, R, T string }

// fileFacts are what one file contributes: the nodes it declares and the
// edges it states.
type fileFacts struct {
	Hash  string          `json:"h"`
	Pkg   string          `json:"p"`
	Nodes map[string]node `json:"n,omitempty"`
	Edges [][3]string     `json:"e,omitempty"`
}

// pkgFacts are what one package contributes.
type pkgFacts struct {
	Name string `json:"name"`
	// DirHash hashes every .go file of the directory, whatever its build
	// constraints: a package whose DirHash is the same is not read again.
	DirHash string                `json:"dirHash"`
	Files   map[string]*fileFacts `json:"files"`
}

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

func pkgID(path string) string      { return "pkg:" + path }
func fileID(rel string) string      { return "file:" + rel }
func symID(pkg, base string) string { return pkg + "." + base }

// extract turns a checked package into its facts.
func (l *loader) extract(c *checked) *pkgFacts {
	ip := l.mod.importPath(c.files.Rel)
	pf := &pkgFacts{Name: c.files.Name, DirHash: c.files.DirHash, Files: map[string]*fileFacts{}}
	x := &extractor{l: l, ip: ip, c: c}
	for _, f := range c.files.Files {
		pf.Files[f.Rel] = x.file(f, c.info)
	}
	for _, f := range c.files.XTest {
		pf.Files[f.Rel] = x.file(f, c.xinfo)
	}
	for _, f := range c.files.Other {
		pf.Files[f.Rel] = x.declarations(f)
	}
	return pf
}

type extractor struct {
	l  *loader
	ip string
	c  *checked
}

// local is the module-relative package of an object's package path (the
// _test suffix of an external test package dropped), or "" if it is not
// the module's.
func (x *extractor) local(p *types.Package) string {
	if p == nil {
		return ""
	}
	path := strings.TrimSuffix(p.Path(), "_test")
	if x.l.mod.relDir(path) == "" {
		return ""
	}
	return path
}

// fileX extracts one file: its facts, and what the walk needs on the way.
type fileX struct {
	x     *extractor
	f     *srcFile
	info  *types.Info // nil for a file of another platform: declarations only
	ff    *fileFacts
	seen  map[edge]bool
	inits int // init functions met so far
}

func (fx *fileX) add(s, r, t string) {
	e := edge{s, r, t}
	if s == t || fx.seen[e] {
		return
	}
	fx.seen[e] = true
	fx.ff.Edges = append(fx.ff.Edges, [3]string{s, r, t})
}

// def records the node id, declared by the file, at the span of n.
func (fx *fileX) def(id string, nd node, at ast.Node) {
	fset := fx.x.l.fset
	nd.File = fx.f.Rel
	nd.Line, nd.End = fset.Position(at.Pos()).Line, fset.Position(at.End()).Line
	nd.Other = fx.info == nil
	fx.ff.Nodes[id] = nd
	fx.add(fileID(fx.f.Rel), RelDefines, id)
}

// file states what f declares and, when info is given (the file was
// type-checked), the calls, types and tests of its declarations. A file
// of another platform (info nil) states its declarations: nodes,
// defines, has_method, imports.
func (x *extractor) file(f *srcFile, info *types.Info) *fileFacts {
	ff := &fileFacts{Hash: f.Hash, Pkg: x.ip, Nodes: map[string]node{}}
	fx := &fileX{x: x, f: f, info: info, ff: ff, seen: map[edge]bool{}}
	fid := fileID(f.Rel)
	tf := x.l.fset.File(f.AST.Pos())
	fileNode := node{Kind: KindFile, Base: f.Rel, File: f.Rel, Line: 1}
	if tf != nil {
		fileNode.End = max(1, tf.LineCount())
	}
	ff.Nodes[fid] = fileNode
	if !f.Test && f.AST.Doc != nil && f.AST.Name.Name != "main" {
		ff.Nodes[pkgID(x.ip)] = node{Kind: KindPackage, Pkg: x.ip, Desc: langs.Synopsis(f.AST.Doc.Text())}
	}
	fx.add(pkgID(x.ip), RelContains, fid)
	if f.Test {
		// A test file says what its tests exercise; its helpers and
		// imports are left out (they would crowd blocks with test
		// scaffolding).
		for _, d := range f.AST.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && isTestName(fd.Name.Name) {
				fx.funcDecl(fd)
			}
		}
		return ff
	}
	// Imports: an edge to a package of the module or of another module;
	// the standard library is no node (it would only crowd blocks: every
	// package imports fmt), and is named in the file's description with
	// the others.
	var imps []string
	for _, is := range f.AST.Imports {
		p, err := strconv.Unquote(is.Path.Value)
		if err != nil || !validImportPath(p) {
			continue // a malformed path names no package: no node
		}
		imps = append(imps, p)
		if p == "C" || p == "unsafe" || isStdlib(p) {
			continue
		}
		fx.add(pkgID(x.ip), RelImports, pkgID(p))
	}
	if len(imps) > 0 {
		fileNode.Desc = langs.Synopsis("Imports " + strings.Join(imps, ", "))
		ff.Nodes[fid] = fileNode
	}
	for _, d := range f.AST.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			fx.funcDecl(d)
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				ts, ok := sp.(*ast.TypeSpec)
				if !ok || ts.Name.Name == "_" {
					continue
				}
				doc := ts.Doc
				var at ast.Node = ts
				if len(d.Specs) == 1 && d.Lparen == 0 {
					at = d // the span from the type keyword
					if doc == nil {
						doc = d.Doc
					}
				}
				id := symID(x.ip, ts.Name.Name)
				kind := KindType
				if _, ok := ts.Type.(*ast.InterfaceType); ok {
					kind = KindInterface
				}
				fx.def(id, node{Kind: kind, Pkg: x.ip, Base: ts.Name.Name, Desc: langs.Synopsis(doc.Text()), Sig: typeSig(x.l.fset, ts)}, at)
				fx.typeDecl(id, ts)
			}
		}
	}
	return ff
}

// isStdlib says whether an import path is the standard library's: its
// first element has no dot (the go command's rule).
func isStdlib(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}

// declarations states what a file of another platform declares: it is
// not type-checked here (its platform's files would be checked together,
// and they redeclare this platform's), so it adds no calls and no types
// of signatures. A symbol it shares with this platform's files is one
// node.
func (x *extractor) declarations(f *srcFile) *fileFacts {
	return x.file(f, nil)
}

// typeDecl states an interface's methods, what a type embeds and the
// types of its fields.
func (fx *fileX) typeDecl(id string, ts *ast.TypeSpec) {
	x, info := fx.x, fx.info
	switch t := ts.Type.(type) {
	case *ast.InterfaceType:
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				if info == nil {
					continue
				}
				if tid := x.typeID(info.Types[m.Type].Type); tid != "" {
					fx.add(id, RelEmbeds, tid)
				}
				continue
			}
			ft, _ := m.Type.(*ast.FuncType)
			for _, n := range m.Names {
				mid := symID(x.ip, ts.Name.Name+"."+n.Name)
				fx.def(mid, node{Kind: KindMethod, Pkg: x.ip, Base: ts.Name.Name + "." + n.Name, Desc: langs.Synopsis(m.Doc.Text()),
					Sig: ifaceMethodSig(x.l.fset, n, ft)}, m)
				fx.add(id, RelHasMethod, mid)
			}
		}
	case *ast.StructType:
		if info == nil {
			return
		}
		for _, fl := range t.Fields.List {
			tv, ok := info.Types[fl.Type]
			if !ok {
				continue
			}
			for _, tid := range x.namedIn(tv.Type) {
				if len(fl.Names) == 0 {
					fx.add(id, RelEmbeds, tid)
				} else {
					fx.add(id, RelUsesType, tid)
				}
			}
		}
	}
}

// initBase names the file's next init function: init@file.go, then
// init@file.go(2), (3) for further ones in the same file. A package may
// have any number of init functions, none of which can be called or
// named in Go; the file's name makes each distinct, stable while the
// file keeps its inits, and findable with grep.
func (fx *fileX) initBase() string {
	fx.inits++
	b := "init@" + path.Base(fx.f.Rel)
	if fx.inits > 1 {
		b += "(" + strconv.Itoa(fx.inits) + ")"
	}
	return b
}

func (fx *fileX) funcDecl(d *ast.FuncDecl) {
	x, f, info := fx.x, fx.f, fx.info
	name := d.Name.Name
	if name == "_" {
		return
	}
	var id string
	sig := funcSig(x.l.fset, d)
	switch {
	case d.Recv != nil && len(d.Recv.List) == 1:
		recv := ReceiverName(d.Recv.List[0].Type)
		if recv == "" {
			return
		}
		id = symID(x.ip, recv+"."+name)
		fx.def(id, node{Kind: KindMethod, Pkg: x.ip, Base: recv + "." + name, Desc: langs.Synopsis(d.Doc.Text()), Sig: sig}, d)
		fx.add(symID(x.ip, recv), RelHasMethod, id)
	case d.Recv != nil:
		return
	case name == "init":
		base := fx.initBase()
		id = symID(x.ip, base)
		fx.def(id, node{Kind: KindFunction, Pkg: x.ip, Base: base, Desc: langs.Synopsis(d.Doc.Text()), Sig: sig}, d)
	default:
		id = symID(x.ip, name)
		fx.def(id, node{Kind: KindFunction, Pkg: x.ip, Base: name, Desc: langs.Synopsis(d.Doc.Text()), Sig: sig}, d)
	}
	if info == nil {
		return
	}
	test := f.Test && d.Recv == nil && isTestName(name)
	if obj, ok := info.Defs[d.Name].(*types.Func); ok && !test {
		sig := obj.Type().(*types.Signature)
		for _, tup := range []*types.Tuple{sig.Params(), sig.Results()} {
			for i := 0; i < tup.Len(); i++ {
				for _, tid := range x.namedIn(tup.At(i).Type()) {
					fx.add(id, RelUsesType, tid)
				}
			}
		}
	}
	rel := RelCalls
	if test {
		rel = RelTests
		x.testedByName(name, fx.add, id)
	}
	if d.Body == nil {
		return
	}
	ast.Inspect(d.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		fn := calleeOf(call.Fun, info)
		if fn == nil {
			return true
		}
		tp := x.local(fn.Pkg())
		if tp == "" {
			return true
		}
		sig, _ := fn.Type().(*types.Signature)
		if sig == nil {
			return true
		}
		if r := sig.Recv(); r != nil {
			rt := r.Type()
			if p, ok := rt.(*types.Pointer); ok {
				rt = p.Elem()
			}
			named, ok := types.Unalias(rt).(*types.Named)
			if !ok {
				return true
			}
			target := symID(tp, named.Obj().Name()+"."+fn.Name())
			if types.IsInterface(named) && !test {
				fx.add(id, RelCallsIface, target)
			} else {
				fx.add(id, rel, target)
			}
			return true
		}
		if fn.Parent() != fn.Pkg().Scope() {
			return true // a local function value
		}
		fx.add(id, rel, symID(tp, fn.Name()))
		return true
	})
}

// testedByName links TestFoo to Foo, and TestType_Method to Type.Method,
// when the package declares them.
func (x *extractor) testedByName(name string, add func(s, r, t string), id string) {
	if x.c.pkg == nil {
		return
	}
	for _, p := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			name = strings.TrimPrefix(rest, "_")
			break
		}
	}
	typ, method, _ := strings.Cut(name, "_")
	sc := x.c.pkg.Scope()
	for _, cand := range []string{typ, lowerFirst(typ)} {
		obj := sc.Lookup(cand)
		if obj == nil {
			continue
		}
		if method != "" {
			if tn, ok := obj.(*types.TypeName); ok {
				m, _, _ := types.LookupFieldOrMethod(types.NewPointer(tn.Type()), true, x.c.pkg, method)
				if m, ok := m.(*types.Func); ok {
					add(id, RelTests, symID(x.ip, cand+"."+m.Name()))
					return
				}
			}
		}
		switch obj.(type) {
		case *types.Func, *types.TypeName:
			add(id, RelTests, symID(x.ip, cand))
		}
		return
	}
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

func isTestName(name string) bool {
	for _, p := range []string{"Test", "Benchmark", "Fuzz", "Example"} {
		if rest, ok := strings.CutPrefix(name, p); ok {
			if rest == "" {
				return true
			}
			r, _ := utf8.DecodeRuneInString(rest)
			return !unicode.IsLower(r)
		}
	}
	return false
}

// calleeOf resolves a call's function: a package-level function, a method
// (through a selector), an instantiated generic; nil otherwise.
func calleeOf(fun ast.Expr, info *types.Info) *types.Func {
	for {
		switch f := fun.(type) {
		case *ast.ParenExpr:
			fun = f.X
			continue
		case *ast.IndexExpr:
			fun = f.X
			continue
		case *ast.IndexListExpr:
			fun = f.X
			continue
		}
		break
	}
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return nil
	}
	fn, _ := info.Uses[id].(*types.Func)
	if fn == nil {
		return nil
	}
	return fn.Origin()
}

// ReceiverName is a method receiver's type name (pointer, parentheses and
// type parameters dropped), "" when it names none: the Type of a node
// named Type.Method.
func ReceiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// typeID is the id of a module named type, or "".
func (x *extractor) typeID(t types.Type) string {
	if t == nil {
		return ""
	}
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Parent() != n.Obj().Pkg().Scope() {
		return ""
	}
	p := x.local(n.Obj().Pkg())
	if p == "" {
		return ""
	}
	return symID(p, n.Obj().Name())
}

// namedIn lists the module named types a type is made of (through
// pointers, slices, arrays, maps, channels and type arguments).
func (x *extractor) namedIn(t types.Type) []string {
	var out []string
	seen := map[types.Type]bool{}
	var walk func(t types.Type)
	walk = func(t types.Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		switch u := t.(type) {
		case *types.Alias:
			walk(types.Unalias(u))
		case *types.Pointer:
			walk(u.Elem())
		case *types.Slice:
			walk(u.Elem())
		case *types.Array:
			walk(u.Elem())
		case *types.Map:
			walk(u.Key())
			walk(u.Elem())
		case *types.Chan:
			walk(u.Elem())
		case *types.Named:
			if id := x.typeID(u); id != "" {
				out = append(out, id)
			}
			if ta := u.TypeArgs(); ta != nil {
				for i := 0; i < ta.Len(); i++ {
					walk(ta.At(i))
				}
			}
		}
	}
	walk(t)
	return out
}
