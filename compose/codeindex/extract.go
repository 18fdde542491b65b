package codeindex

import (
	"crypto/sha256"
	"encoding/hex"
	"go/ast"
	"go/types"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Node kinds (the nodes' type in the store).
const (
	KindPackage   = "package"
	KindFile      = "file"
	KindFunction  = "function"
	KindMethod    = "method"
	KindType      = "type"
	KindInterface = "interface"
)

// Relationships.
const (
	RelContains   = "contains"            // package -> file
	RelDefines    = "defines"             // file -> function, method, type, interface
	RelHasMethod  = "has_method"          // type or interface -> method
	RelCalls      = "calls"               // function or method -> function or method (static, or on a known receiver)
	RelCallsIface = "calls_via_interface" // function or method -> an interface's method
	RelImplements = "implements"          // type -> interface
	RelEmbeds     = "embeds"              // struct or interface -> embedded type
	RelUsesType   = "uses_type"           // function, method or type -> a type of its signature or fields
	RelImports    = "imports"             // package -> package
	RelTests      = "tests"               // test function -> what it exercises
)

// node is what the graph says of one symbol, keyed by its id: the
// import path qualifies it ("pkg:" + path for packages, "file:" + path for
// files), so ids never collide; names are derived from ids (names.go).
type node struct {
	Kind string `json:"k"`
	Pkg  string `json:"p,omitempty"` // import path of the declaring package
	Base string `json:"b,omitempty"` // Func, Type, Type.Method; the path of a file
	Desc string `json:"d,omitempty"`
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

// typeFacts are a named type's method set (pointer receiver included), or
// an interface's, for implements.
type typeFacts struct {
	Iface   bool     `json:"i,omitempty"`
	Methods []string `json:"m"`
}

// pkgFacts are what one package contributes.
type pkgFacts struct {
	Name string `json:"name"`
	// DirHash hashes every .go file of the directory, whatever its build
	// constraints: a package whose DirHash is the same is not read again.
	DirHash string                `json:"dirHash"`
	Files   map[string]*fileFacts `json:"files"`
	Types   map[string]typeFacts  `json:"types,omitempty"`
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
	pf := &pkgFacts{Name: c.files.Name, DirHash: c.files.DirHash, Files: map[string]*fileFacts{}, Types: map[string]typeFacts{}}
	x := &extractor{l: l, ip: ip, c: c}
	for _, f := range c.files.Files {
		pf.Files[f.Rel] = x.file(f, c.info, c.pkg)
	}
	for _, f := range c.files.XTest {
		pf.Files[f.Rel] = x.file(f, c.xinfo, c.xpkg)
	}
	for _, f := range c.files.Other {
		pf.Files[f.Rel] = x.declarations(f)
	}
	if c.pkg != nil {
		x.methodSets(pf)
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

func (x *extractor) file(f *srcFile, info *types.Info, pkg *types.Package) *fileFacts {
	ff := &fileFacts{Hash: f.Hash, Pkg: x.ip, Nodes: map[string]node{}}
	seen := map[edge]bool{}
	add := func(s, r, t string) {
		e := edge{s, r, t}
		if s == t || seen[e] {
			return
		}
		seen[e] = true
		ff.Edges = append(ff.Edges, [3]string{s, r, t})
	}
	fid := fileID(f.Rel)
	ff.Nodes[fid] = node{Kind: KindFile, Base: f.Rel}
	if !f.Test && f.AST.Doc != nil && f.AST.Name.Name != "main" {
		ff.Nodes[pkgID(x.ip)] = node{Kind: KindPackage, Pkg: x.ip, Desc: synopsis(f.AST.Doc.Text())}
	}
	add(pkgID(x.ip), RelContains, fid)
	if f.Test {
		// A test file says what its tests exercise; its helpers and
		// imports are left out (they would crowd blocks with test
		// scaffolding).
		for _, d := range f.AST.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && isTestName(fd.Name.Name) {
				x.funcDecl(fd, f, info, pkg, ff, add)
			}
		}
		return ff
	}
	for _, is := range f.AST.Imports {
		p, err := strconv.Unquote(is.Path.Value)
		if err != nil || p == "C" || p == "unsafe" || !validImportPath(p) {
			continue // a malformed path names no package: no node
		}
		add(pkgID(x.ip), RelImports, pkgID(p))
	}
	for _, d := range f.AST.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			x.funcDecl(d, f, info, pkg, ff, add)
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				ts, ok := sp.(*ast.TypeSpec)
				if !ok {
					continue
				}
				doc := ts.Doc
				if doc == nil && len(d.Specs) == 1 {
					doc = d.Doc
				}
				id := symID(x.ip, ts.Name.Name)
				kind := KindType
				if _, ok := ts.Type.(*ast.InterfaceType); ok {
					kind = KindInterface
				}
				ff.Nodes[id] = node{Kind: kind, Pkg: x.ip, Base: ts.Name.Name, Desc: synopsis(doc.Text())}
				add(fid, RelDefines, id)
				x.typeDecl(id, ts, info, ff, add)
			}
		}
	}
	return ff
}

// declarations states what a file of another platform declares (it is
// not type-checked here: no calls, no types of signatures).
func (x *extractor) declarations(f *srcFile) *fileFacts {
	ff := &fileFacts{Hash: f.Hash, Pkg: x.ip, Nodes: map[string]node{}}
	fid := fileID(f.Rel)
	ff.Nodes[fid] = node{Kind: KindFile, Base: f.Rel}
	ff.Edges = append(ff.Edges, [3]string{pkgID(x.ip), RelContains, fid})
	def := func(id string, n node) {
		ff.Nodes[id] = n
		ff.Edges = append(ff.Edges, [3]string{fid, RelDefines, id})
	}
	for _, d := range f.AST.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.Name == "_" || d.Name.Name == "init" && d.Recv == nil {
				continue
			}
			if d.Recv == nil {
				def(symID(x.ip, d.Name.Name), node{Kind: KindFunction, Pkg: x.ip, Base: d.Name.Name, Desc: synopsis(d.Doc.Text())})
				continue
			}
			if len(d.Recv.List) != 1 {
				continue
			}
			recv := recvName(d.Recv.List[0].Type)
			if recv == "" {
				continue
			}
			id := symID(x.ip, recv+"."+d.Name.Name)
			def(id, node{Kind: KindMethod, Pkg: x.ip, Base: recv + "." + d.Name.Name, Desc: synopsis(d.Doc.Text())})
			ff.Edges = append(ff.Edges, [3]string{symID(x.ip, recv), RelHasMethod, id})
		case *ast.GenDecl:
			for _, sp := range d.Specs {
				ts, ok := sp.(*ast.TypeSpec)
				if !ok {
					continue
				}
				kind := KindType
				if _, ok := ts.Type.(*ast.InterfaceType); ok {
					kind = KindInterface
				}
				doc := ts.Doc
				if doc == nil && len(d.Specs) == 1 {
					doc = d.Doc
				}
				def(symID(x.ip, ts.Name.Name), node{Kind: kind, Pkg: x.ip, Base: ts.Name.Name, Desc: synopsis(doc.Text())})
			}
		}
	}
	return ff
}

// typeDecl states an interface's methods, what a type embeds and the
// types of its fields.
func (x *extractor) typeDecl(id string, ts *ast.TypeSpec, info *types.Info, ff *fileFacts, add func(s, r, t string)) {
	switch t := ts.Type.(type) {
	case *ast.InterfaceType:
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				if tid := x.typeID(info.Types[m.Type].Type); tid != "" {
					add(id, RelEmbeds, tid)
				}
				continue
			}
			for _, n := range m.Names {
				mid := symID(x.ip, ts.Name.Name+"."+n.Name)
				ff.Nodes[mid] = node{Kind: KindMethod, Pkg: x.ip, Base: ts.Name.Name + "." + n.Name, Desc: synopsis(m.Doc.Text())}
				add(id, RelHasMethod, mid)
			}
		}
	case *ast.StructType:
		for _, fl := range t.Fields.List {
			tv, ok := info.Types[fl.Type]
			if !ok {
				continue
			}
			for _, tid := range x.namedIn(tv.Type) {
				if len(fl.Names) == 0 {
					add(id, RelEmbeds, tid)
				} else {
					add(id, RelUsesType, tid)
				}
			}
		}
	}
}

func (x *extractor) funcDecl(d *ast.FuncDecl, f *srcFile, info *types.Info, pkg *types.Package, ff *fileFacts, add func(s, r, t string)) {
	name := d.Name.Name
	if name == "_" || (name == "init" && d.Recv == nil) {
		return
	}
	var id string
	if d.Recv != nil && len(d.Recv.List) == 1 {
		recv := recvName(d.Recv.List[0].Type)
		if recv == "" {
			return
		}
		id = symID(x.ip, recv+"."+name)
		ff.Nodes[id] = node{Kind: KindMethod, Pkg: x.ip, Base: recv + "." + name, Desc: synopsis(d.Doc.Text())}
		add(symID(x.ip, recv), RelHasMethod, id)
	} else {
		id = symID(x.ip, name)
		ff.Nodes[id] = node{Kind: KindFunction, Pkg: x.ip, Base: name, Desc: synopsis(d.Doc.Text())}
	}
	add(fileID(f.Rel), RelDefines, id)
	test := f.Test && d.Recv == nil && isTestName(name)
	if obj, ok := info.Defs[d.Name].(*types.Func); ok && !test {
		sig := obj.Type().(*types.Signature)
		for _, tup := range []*types.Tuple{sig.Params(), sig.Results()} {
			for i := 0; i < tup.Len(); i++ {
				for _, tid := range x.namedIn(tup.At(i).Type()) {
					add(id, RelUsesType, tid)
				}
			}
		}
	}
	rel := RelCalls
	if test {
		rel = RelTests
		x.testedByName(name, add, id)
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
				add(id, RelCallsIface, target)
			} else {
				add(id, rel, target)
			}
			return true
		}
		if fn.Parent() != fn.Pkg().Scope() {
			return true // a local function value
		}
		add(id, rel, symID(tp, fn.Name()))
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

// recvName is the receiver's type name (pointer and type parameters
// dropped).
func recvName(e ast.Expr) string {
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

// methodSets records the method sets of the package's named types and
// interfaces (generic ones left out), for implements.
func (x *extractor) methodSets(pf *pkgFacts) {
	sc := x.c.pkg.Scope()
	for _, name := range sc.Names() {
		tn, ok := sc.Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		named, ok := tn.Type().(*types.Named)
		if !ok || named.TypeParams().Len() > 0 {
			continue
		}
		pos := x.l.fset.Position(tn.Pos())
		if strings.HasSuffix(pos.Filename, "_test.go") {
			continue
		}
		iface := types.IsInterface(named)
		var ms *types.MethodSet
		if iface {
			ms = types.NewMethodSet(named)
			if ms.Len() == 0 {
				continue
			}
		} else {
			ms = types.NewMethodSet(types.NewPointer(named))
		}
		var keys []string
		for i := 0; i < ms.Len(); i++ {
			keys = append(keys, methodKey(ms.At(i).Obj().(*types.Func)))
		}
		sort.Strings(keys)
		pf.Types[symID(x.ip, name)] = typeFacts{Iface: iface, Methods: keys}
	}
}

// methodKey names a method with its signature, package-qualified, so
// that two method sets compare as strings.
func methodKey(f *types.Func) string {
	name := f.Name()
	if !f.Exported() && f.Pkg() != nil {
		name = f.Pkg().Path() + "." + name
	}
	sig := f.Type().(*types.Signature)
	plain := types.NewSignatureType(nil, nil, nil, sig.Params(), sig.Results(), sig.Variadic())
	return name + " " + types.TypeString(plain, func(p *types.Package) string { return p.Path() })
}

// synopsis is the first sentence of a doc comment, at most 300 bytes.
func synopsis(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.Index(text, "\n\n"); i >= 0 {
		text = text[:i]
	}
	text = strings.Join(strings.Fields(text), " ")
	for i := 0; i+1 < len(text); i++ {
		if text[i] == '.' && text[i+1] == ' ' {
			text = text[:i+1]
			break
		}
	}
	if len(text) > 300 {
		cut := 300
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return text
}
