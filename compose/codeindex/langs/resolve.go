package langs

import (
	"path"
	"slices"
	"sort"
	"strings"
)

// Input is what Resolve reads: every file's facts, and the Rust crates.
type Input struct {
	Files map[string]*File // by path
	// Crates are the Rust crates: the directory of each Cargo.toml ("."
	// for the root's) and its package name ('-' read as '_').
	Crates map[string]string
}

// Graph is the resolved graph of a set of files: modules (Spaces),
// symbols, and the edges between their ids.
//
// Ids: a module's Space.ID ("py:src/app/core.py", "js:src/index.ts",
// "java:com.example.app", "rs:crates/x::a::b"); a symbol's is its
// module's id, "#" and its base; a file's "file:" and its path; a package
// outside the repository's "ext:", its language and its name.
type Graph struct {
	Spaces map[string]*Space
	// Syms locate every symbol by id: its file and index in File.Syms.
	Syms map[string]SymAt
	// External names the packages outside the repository that files
	// import, by id.
	External map[string]string
	// FileDesc is each file's description ("Imports a, b").
	FileDesc map[string]string
	Edges    [][3]string // sorted
}

// Space is a module: what qualifies its symbols' names.
type Space struct {
	ID    string
	Lang  string
	Files []string
	// Names are the names it may take, the first that no other module
	// takes winning: "core", then "app/core", then longer paths; the
	// last is unique in the repository.
	Names []string
	Doc   string
}

// SymAt locates a symbol.
type SymAt struct {
	File  string
	Index int
}

// family is the resolution family of a language: TypeScript and
// JavaScript import each other.
func family(lang string) string {
	if lang == "typescript" || lang == "javascript" {
		return "js"
	}
	return lang
}

type space struct {
	*Space
	fam      string
	syms     map[string]SymAt
	kinds    map[string]string
	prefixes map[string]bool // proper prefixes of bases (classes, namespaces, inline modules)
	binds    []Binding       // the bindings of its file module (mod 0), for lookups through it
	bindFile *File
	// Python: the dotted name and the directory path key; Rust: the
	// crate directory and module path.
	dotted  string
	pyDir   string // for a package's __init__.py: the package directory
	crate   string
	modPath []string
	own     bool // a crate root of its own (tests/x.rs, src/bin/x.rs): no child modules by path
}

type scope struct {
	f   *File
	sp  *space
	mod int
}

func (sc scope) prefix() []string {
	if sc.mod > 0 && sc.mod <= len(sc.f.Mods) {
		return sc.f.Mods[sc.mod-1]
	}
	return nil
}

type target struct {
	sp   *space
	base string
}

func (t target) ok() bool { return t.sp != nil }

func (t target) id() string { return t.sp.ID + "#" + t.base }

func (t target) kind() string {
	if t.sp == nil || t.base == "" {
		return ""
	}
	return t.sp.kinds[t.base]
}

type resolver struct {
	in        Input
	files     []*File // sorted by path
	spaces    map[string]*space
	fileSpace map[string]*space
	pyDotted  map[string]*space // nil: ambiguous
	pyPath    map[string]*space
	jsPath    map[string]*space
	javaPkg   map[string]*space
	rsMod     map[string]*space // crate dir + "::" + module path
	crateRoot map[string]string // crate name -> crate dir
	methods   map[string]map[string]string
	bases     map[string][]string
	edges     map[[3]string]bool
	// Lookups through modules and bindings are remembered: they do not
	// depend on where they start, and star imports and re-exports that
	// point at each other (a hostile tree can make thousands) would
	// otherwise be walked again at every reference. A lookup in progress
	// is memoised as none, which cuts cycles.
	memberMemo map[memberKey]target
	followMemo map[followKey]target
}

type memberKey struct {
	sp  *space
	seg string
}

type followKey struct {
	file string
	mod  int
	name string
	path string
	sym  string
}

// Resolve resolves every file's references against every file's
// declarations: calls, base classes and tests by name, import-aware
// (Python imports, ES modules and require, Java packages and imports,
// Rust modules and use). What does not resolve to a declaration of the
// repository is left out, never guessed: a method called on a value whose
// type is not declared (x.m() in Python or TypeScript) names nothing.
func Resolve(in Input) *Graph {
	r := &resolver{in: in, spaces: map[string]*space{}, fileSpace: map[string]*space{}, pyDotted: map[string]*space{},
		pyPath: map[string]*space{}, jsPath: map[string]*space{}, javaPkg: map[string]*space{}, rsMod: map[string]*space{},
		crateRoot: map[string]string{}, methods: map[string]map[string]string{}, bases: map[string][]string{}, edges: map[[3]string]bool{},
		memberMemo: map[memberKey]target{}, followMemo: map[followKey]target{}}
	for _, p := range sortedKeys(in.Files) {
		r.files = append(r.files, in.Files[p])
	}
	for dir, name := range in.Crates {
		if old, ok := r.crateRoot[name]; !ok || dir < old {
			r.crateRoot[name] = dir
		}
	}
	r.makeSpaces()
	g := &Graph{Spaces: map[string]*Space{}, Syms: map[string]SymAt{}, External: map[string]string{}, FileDesc: map[string]string{}}
	for id, sp := range r.spaces {
		g.Spaces[id] = sp.Space
		for b, at := range sp.syms {
			g.Syms[sp.ID+"#"+b] = at
		}
	}
	// contains, defines; methods by owner (has_method).
	for _, f := range r.files {
		sp := r.fileSpace[f.Path]
		r.edge(sp.ID, RelContains, "file:"+f.Path)
		for i, s := range f.Syms {
			id := sp.ID + "#" + s.Base
			if at := sp.syms[s.Base]; at.File != f.Path || at.Index != i {
				continue // declared first by another file of the package
			}
			r.edge("file:"+f.Path, RelDefines, id)
			if s.Owner == nil {
				continue
			}
			sc := scope{f: f, sp: sp, mod: s.Mod}
			var owner target
			if f.Lang == "rust" {
				owner = r.path(sc, s.Owner, nil, 0)
			} else {
				owner = target{sp: sp, base: strings.Join(s.Owner, ".")}
			}
			if k := owner.kind(); k != KindType && k != KindInterface {
				continue
			}
			name := s.Base[strings.LastIndexByte(s.Base, '.')+1:]
			oid := owner.id()
			if r.methods[oid] == nil {
				r.methods[oid] = map[string]string{}
			}
			if _, dup := r.methods[oid][name]; !dup {
				r.methods[oid][name] = id
				r.edge(oid, RelHasMethod, id)
			}
		}
	}
	// Bases first: calls through self and super walk them.
	for _, f := range r.files {
		sp := r.fileSpace[f.Path]
		for _, ref := range f.Refs {
			if ref.Rel != RelExtends {
				continue
			}
			sc := scope{f: f, sp: sp, mod: ref.Mod}
			from := target{sp: sp, base: ref.From}
			if ref.FromPath != nil {
				from = r.path(sc, ref.FromPath, nil, 0)
			}
			fk := from.kind()
			if fk != KindType && fk != KindInterface {
				continue
			}
			t := r.path(sc, ref.Path, ref.Class, 0)
			tk := t.kind()
			if tk != KindType && tk != KindInterface || t.id() == from.id() {
				continue
			}
			rel := RelExtends
			if tk == KindInterface && fk == KindType {
				rel = RelImplements
			}
			r.edge(from.id(), rel, t.id())
			if !slices.Contains(r.bases[from.id()], t.id()) {
				r.bases[from.id()] = append(r.bases[from.id()], t.id())
			}
		}
	}
	for _, f := range r.files {
		sp := r.fileSpace[f.Path]
		for _, ref := range f.Refs {
			if ref.Rel == RelExtends {
				continue
			}
			sc := scope{f: f, sp: sp, mod: ref.Mod}
			if to := r.call(sc, ref); to != "" {
				r.edge(sp.ID+"#"+ref.From, ref.Rel, to)
			}
		}
	}
	// implemented_by: each interface method to the method of each type
	// that implements the interface, directly or through its bases (the
	// type's own method, or the one it inherits).
	for _, typ := range sortedKeys(r.bases) {
		if r.byID(typ).kind() != KindType {
			continue
		}
		for _, iface := range r.interfacesOf(typ) {
			for _, name := range sortedKeys(r.methods[iface]) {
				if m := r.methodOf(typ, name, 0); m != "" {
					r.edge(r.methods[iface][name], RelImplBy, m)
				}
			}
		}
	}
	r.imports(g)
	for e := range r.edges {
		g.Edges = append(g.Edges, e)
	}
	sort.Slice(g.Edges, func(i, j int) bool {
		a, b := g.Edges[i], g.Edges[j]
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		if a[1] != b[1] {
			return a[1] < b[1]
		}
		return a[2] < b[2]
	})
	return g
}

func (r *resolver) edge(s, rel, t string) {
	if s != t {
		r.edges[[3]string{s, rel, t}] = true
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// interfacesOf lists the interfaces a type implements through its bases,
// transitively.
func (r *resolver) interfacesOf(typ string) []string {
	var out []string
	seen := map[string]bool{typ: true}
	queue := []string{typ}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		for _, b := range r.bases[t] {
			if seen[b] {
				continue
			}
			seen[b] = true
			if r.byID(b).kind() == KindInterface {
				out = append(out, b)
			}
			queue = append(queue, b)
		}
	}
	return out
}

func stripExt(p string) string { return strings.TrimSuffix(p, path.Ext(p)) }

// suffixNames are the names from the last element of parts, then from
// the last two joined with '/', and so on.
func suffixNames(parts []string) []string {
	var out []string
	for i := len(parts) - 1; i >= 0; i-- {
		out = append(out, strings.Join(parts[i:], "/"))
	}
	return out
}

func appendNew(names []string, more ...string) []string {
	for _, n := range more {
		if n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// makeSpaces groups the files into modules and fills the lookup tables.
func (r *resolver) makeSpaces() {
	pyPkg := map[string]bool{}
	for _, f := range r.files {
		if f.Lang == "python" && path.Base(f.Path) == "__init__.py" {
			pyPkg[path.Dir(f.Path)] = true
		}
	}
	get := func(id, lang string) *space {
		sp := r.spaces[id]
		if sp == nil {
			sp = &space{Space: &Space{ID: id, Lang: lang}, fam: family(lang), syms: map[string]SymAt{}, kinds: map[string]string{}, prefixes: map[string]bool{}}
			r.spaces[id] = sp
		}
		return sp
	}
	dottedSeen := map[string]int{}
	for _, f := range r.files {
		var sp *space
		switch family(f.Lang) {
		case "python":
			sp = get("py:"+f.Path, f.Lang)
			dir, stem := path.Dir(f.Path), strings.TrimSuffix(path.Base(f.Path), ".py")
			var parts []string
			if stem != "__init__" {
				parts = []string{stem}
				r.pyPath[strings.TrimPrefix(dir+"/"+stem, "./")] = sp
			} else {
				r.pyPath[dir] = sp
				sp.pyDir = dir
			}
			for d := dir; d != "." && d != "/" && pyPkg[d]; d = path.Dir(d) {
				parts = append([]string{path.Base(d)}, parts...)
			}
			sp.dotted = strings.Join(parts, ".")
			full := strings.ReplaceAll(stripExt(f.Path), "/", ".")
			full = strings.TrimSuffix(full, ".__init__")
			for _, d := range []string{sp.dotted, full} {
				if d == "" {
					continue
				}
				if dottedSeen[d]++; dottedSeen[d] == 1 {
					r.pyDotted[d] = sp
				} else if r.pyDotted[d] != sp {
					r.pyDotted[d] = nil // two modules of that name: neither is guessed
				}
			}
			sp.Names = appendNew(suffixNames(parts), stripExt(f.Path), f.Path)
		case "js":
			sp = get("js:"+f.Path, f.Lang)
			p := stripExt(f.Path)
			p = strings.TrimSuffix(p, ".d") // types.d.ts
			if _, taken := r.jsPath[p]; !taken {
				r.jsPath[p] = sp
			}
			parts := strings.Split(p, "/")
			if parts[len(parts)-1] == "index" && len(parts) > 1 {
				parts = parts[:len(parts)-1]
			}
			sp.Names = appendNew(suffixNames(parts), p, f.Path)
		case "java":
			pkg := f.Package
			if pkg == "" {
				pkg = strings.ReplaceAll(path.Dir(f.Path), "/", ".")
			}
			sp = get("java:"+pkg, f.Lang)
			r.javaPkg[pkg] = sp
			sp.Names = appendNew(suffixNames(strings.Split(pkg, ".")), "java:"+pkg)
		case "rust":
			crate, mod, own := r.rustModule(f.Path)
			var id string
			if own {
				id = "rs:" + f.Path
			} else {
				id = "rs:" + crate + "::" + strings.Join(mod, "::")
				if _, taken := r.rsMod[crate+"::"+strings.Join(mod, "::")]; taken {
					id, own = "rs:"+f.Path, true // main.rs beside lib.rs
				}
			}
			sp = get(id, f.Lang)
			sp.crate, sp.modPath, sp.own = crate, mod, own
			if !own {
				r.rsMod[crate+"::"+strings.Join(mod, "::")] = sp
			}
			cname := r.in.Crates[crate]
			if cname == "" {
				cname = path.Base(crate)
			}
			var names []string
			if len(mod) == 0 {
				if own && len(r.in.Crates) > 0 && !strings.HasSuffix(f.Path, "/lib.rs") {
					names = appendNew(names, stripExt(path.Base(f.Path)))
				}
				names = appendNew(names, cname)
			} else {
				names = suffixNames(append([]string{cname}, mod...))
			}
			sp.Names = appendNew(names, stripExt(f.Path), f.Path)
		default:
			continue
		}
		sp.Files = append(sp.Files, f.Path)
		r.fileSpace[f.Path] = sp
		if sp.Doc == "" {
			sp.Doc = f.Doc
		}
		if sp.bindFile == nil {
			sp.bindFile = f
			for _, b := range f.Imports {
				if b.Mod == 0 {
					sp.binds = append(sp.binds, b)
				}
			}
		}
		for i, s := range f.Syms {
			if _, dup := sp.syms[s.Base]; dup {
				continue
			}
			sp.syms[s.Base] = SymAt{File: f.Path, Index: i}
			sp.kinds[s.Base] = s.Kind
			parts := strings.Split(s.Base, ".")
			for k := 1; k < len(parts); k++ {
				sp.prefixes[strings.Join(parts[:k], ".")] = true
			}
		}
		for _, m := range f.Mods {
			sp.prefixes[strings.Join(m, ".")] = true
		}
	}
	// A JS/TS directory imports as its index file.
	for _, f := range r.files {
		if family(f.Lang) != "js" {
			continue
		}
		p := strings.TrimSuffix(stripExt(f.Path), ".d")
		if path.Base(p) == "index" {
			if _, taken := r.jsPath[path.Dir(p)]; !taken {
				r.jsPath[path.Dir(p)] = r.fileSpace[f.Path]
			}
		}
	}
}

// rustModule places a .rs file: its crate directory and module path, or
// own for a crate root of its own (tests, examples, benches, src/bin,
// build.rs, a file of no crate).
func (r *resolver) rustModule(p string) (crate string, mod []string, own bool) {
	dir := path.Dir(p)
	for {
		if _, ok := r.in.Crates[dir]; ok {
			break
		}
		if dir == "." || dir == "/" {
			dir = ""
			break
		}
		dir = path.Dir(dir)
	}
	if dir == "" {
		return path.Dir(p), nil, true
	}
	rel := p
	if dir != "." {
		rel = strings.TrimPrefix(p, dir+"/")
	}
	rest, ok := strings.CutPrefix(rel, "src/")
	if !ok || strings.HasPrefix(rest, "bin/") {
		return dir, nil, true
	}
	parts := strings.Split(strings.TrimSuffix(rest, ".rs"), "/")
	switch last := parts[len(parts)-1]; {
	case len(parts) == 1 && (last == "lib" || last == "main"):
		parts = nil
	case last == "mod":
		parts = parts[:len(parts)-1]
	}
	return dir, parts, false
}

// binds are the bindings in scope.
func (r *resolver) binds(sc scope) []Binding {
	var out []Binding
	for _, b := range sc.f.Imports {
		if b.Mod == sc.mod {
			out = append(out, b)
		}
	}
	return out
}

const maxDepth = 12

// path resolves a name as written in scope: its head, then each member.
func (r *resolver) path(sc scope, p []string, class []string, depth int) target {
	if len(p) == 0 || depth > maxDepth {
		return target{}
	}
	var t target
	rest := p[1:]
	if sc.sp.fam == "rust" {
		t, rest = r.rsHead(sc, p, depth)
	} else {
		t = r.head(sc, p[0], class, depth)
	}
	for _, seg := range rest {
		if !t.ok() {
			return t
		}
		t = r.member(t, seg, depth+1)
	}
	return t
}

// head resolves the first name of a path in scope.
func (r *resolver) head(sc scope, name string, class []string, depth int) target {
	sp := sc.sp
	if sp.fam == "java" {
		for k := len(class); k >= 1; k-- {
			if b := strings.Join(class[:k], ".") + "." + name; sp.has(b) {
				return target{sp, b}
			}
		}
	}
	if pre := sc.prefix(); pre != nil {
		if b := strings.Join(pre, ".") + "." + name; sp.has(b) || sp.prefixes[b] {
			return target{sp, b}
		}
	}
	if sp.has(name) || sp.prefixes[name] {
		return target{sp, name}
	}
	bs := r.binds(sc)
	for _, b := range bs {
		if b.Name == name {
			if t := r.follow(sc, b, depth+1); t.ok() {
				return t
			}
		}
	}
	for _, b := range bs {
		if b.Name == "*" {
			if t := r.member(r.follow(sc, b, depth+1), name, depth+1); t.ok() {
				return t
			}
		}
	}
	return target{}
}

func (sp *space) has(base string) bool {
	_, ok := sp.syms[base]
	return ok
}

// member is the member seg of t: a symbol of a module, a method of a
// class (inherited ones too), a module's re-export or submodule.
func (r *resolver) member(t target, seg string, depth int) target {
	if !t.ok() || depth > maxDepth {
		return target{}
	}
	sp := t.sp
	nb := seg
	if t.base != "" {
		nb = t.base + "." + seg
	}
	if sp.has(nb) || sp.prefixes[nb] {
		return target{sp, nb}
	}
	if t.base != "" {
		if k := t.kind(); k == KindType || k == KindInterface {
			if m := r.methodOf(t.id(), seg, 0); m != "" {
				return r.byID(m)
			}
		}
		return target{}
	}
	key := memberKey{sp, seg}
	if u, ok := r.memberMemo[key]; ok {
		return u
	}
	r.memberMemo[key] = target{}
	u := r.moduleMember(sp, seg, depth)
	r.memberMemo[key] = u
	return u
}

// moduleMember is what a module's name seg is besides its own symbols:
// a binding (a re-export), a submodule, or a name of a module it
// star-imports, those searched breadth first over the star imports
// (each module once: webs of modules star-importing each other cost a
// walk of the web, not a walk of its paths).
func (r *resolver) moduleMember(sp *space, seg string, depth int) target {
	visited := map[*space]bool{sp: true}
	queue := []*space{sp}
	for len(queue) > 0 {
		m := queue[0]
		queue = queue[1:]
		if m != sp && (m.has(seg) || m.prefixes[seg]) {
			return target{m, seg}
		}
		if m.bindFile == nil {
			continue
		}
		bsc := scope{f: m.bindFile, sp: m}
		for _, b := range m.binds {
			if b.Name == seg {
				if u := r.follow(bsc, b, depth+1); u.ok() {
					return u
				}
			}
		}
		if m == sp {
			if u := r.submodule(sp, seg); u.ok() {
				return u
			}
		}
		for _, b := range m.binds {
			if b.Name != "*" {
				continue
			}
			u := r.follow(bsc, b, depth+1)
			switch {
			case !u.ok():
			case u.base != "": // Java's import static a.b.C.*: C's members
				if v := r.member(u, seg, depth+1); v.ok() {
					return v
				}
			case !visited[u.sp]:
				visited[u.sp] = true
				queue = append(queue, u.sp)
			}
		}
	}
	return target{}
}

// submodule is a module's submodule seg (Python packages, Rust modules).
func (r *resolver) submodule(sp *space, seg string) target {
	switch sp.fam {
	case "python":
		if sp.pyDir != "" {
			if s := r.pyPath[strings.TrimPrefix(sp.pyDir+"/"+seg, "./")]; s != nil {
				return target{sp: s}
			}
		}
		if sp.dotted != "" {
			if s := r.pyDotted[sp.dotted+"."+seg]; s != nil {
				return target{sp: s}
			}
		}
	case "rust":
		if s := r.rsMod[sp.crate+"::"+strings.Join(append(slices.Clone(sp.modPath), seg), "::")]; s != nil && !sp.own {
			return target{sp: s}
		}
	}
	return target{}
}

func (r *resolver) byID(id string) target {
	i := strings.IndexByte(id, '#')
	if i < 0 {
		return target{}
	}
	sp := r.spaces[id[:i]]
	if sp == nil {
		return target{}
	}
	return target{sp, id[i+1:]}
}

// methodOf finds a method of a type by name: its own, else its bases'
// (breadth of inheritance bounded).
func (r *resolver) methodOf(typ, name string, depth int) string {
	if m := r.methods[typ][name]; m != "" {
		return m
	}
	if depth > 6 {
		return ""
	}
	for _, b := range r.bases[typ] {
		if m := r.methodOf(b, name, depth+1); m != "" {
			return m
		}
	}
	return ""
}

// follow resolves what a binding binds.
func (r *resolver) follow(sc scope, b Binding, depth int) target {
	if depth > maxDepth {
		return target{}
	}
	key := followKey{sc.f.Path, sc.mod, b.Name, strings.Join(b.Path, "\x00"), b.Symbol}
	if t, ok := r.followMemo[key]; ok {
		return t
	}
	r.followMemo[key] = target{}
	t := r.followOnce(sc, b, depth)
	r.followMemo[key] = t
	return t
}

func (r *resolver) followOnce(sc scope, b Binding, depth int) target {
	mod := r.module(sc, b.Path, depth)
	if !mod.ok() {
		return target{}
	}
	if b.Symbol == "" {
		return mod
	}
	t := mod
	for _, seg := range strings.Split(b.Symbol, ".") {
		t = r.member(t, seg, depth+1)
	}
	return t
}

// module resolves an import's path to a module (or, in Rust, whatever
// the path names).
func (r *resolver) module(sc scope, p []string, depth int) target {
	switch sc.sp.fam {
	case "python":
		if len(p) > 0 && strings.HasPrefix(p[0], ".") {
			dir := path.Dir(sc.f.Path)
			for range len(p[0]) - 1 {
				dir = path.Dir(dir)
			}
			key := dir
			if len(p) > 1 {
				key = strings.TrimPrefix(dir+"/"+strings.Join(p[1:], "/"), "./")
			}
			if s := r.pyPath[key]; s != nil {
				return target{sp: s}
			}
			return target{}
		}
		// The longest dotted prefix that is a module, then members.
		for k := len(p); k >= 1; k-- {
			if s := r.pyDotted[strings.Join(p[:k], ".")]; s != nil {
				t := target{sp: s}
				for _, seg := range p[k:] {
					t = r.member(t, seg, depth+1)
				}
				return t
			}
		}
	case "js":
		if len(p) == 0 {
			return target{sp: sc.sp}
		}
		if s := r.jsPath[p[0]]; s != nil {
			return target{sp: s}
		}
	case "java":
		for k := len(p); k >= 1; k-- {
			if s := r.javaPkg[strings.Join(p[:k], ".")]; s != nil {
				t := target{sp: s}
				for _, seg := range p[k:] {
					t = r.member(t, seg, depth+1)
				}
				return t
			}
		}
		if len(p) == 0 {
			return target{sp: sc.sp}
		}
	case "rust":
		if len(p) == 0 {
			return target{sp: sc.sp}
		}
		return r.path(sc, p, nil, depth+1)
	}
	return target{}
}

// rsHead resolves the head of a Rust path (crate::, self::, super::, a
// name in scope, a child module, another crate of the workspace) and
// returns what is left to walk.
func (r *resolver) rsHead(sc scope, p []string, depth int) (target, []string) {
	sp := sc.sp
	cur := func(mod []string) target {
		if s := r.rsMod[sp.crate+"::"+strings.Join(mod, "::")]; s != nil {
			return target{sp: s}
		}
		return target{}
	}
	switch p[0] {
	case "crate":
		if sp.own {
			return target{sp: sp}, p[1:]
		}
		return cur(nil), p[1:]
	case "self":
		if pre := sc.prefix(); pre != nil {
			return target{sp, strings.Join(pre, ".")}, p[1:]
		}
		return target{sp: sp}, p[1:]
	case "super":
		// super of an inline module is its parent, of a file module the
		// module above it.
		rest := p
		pre := sc.prefix()
		mod := slices.Clone(sp.modPath)
		for len(rest) > 0 && rest[0] == "super" {
			rest = rest[1:]
			if len(pre) > 0 {
				pre = pre[:len(pre)-1]
			} else if len(mod) > 0 {
				mod = mod[:len(mod)-1]
			} else {
				return target{}, nil
			}
		}
		var t target
		if len(mod) == len(sp.modPath) {
			t = target{sp: sp}
		} else {
			t = cur(mod)
		}
		if t.ok() && len(pre) > 0 {
			t.base = strings.Join(pre, ".")
		}
		return t, rest
	}
	if t := r.head(sc, p[0], nil, depth); t.ok() {
		return t, p[1:]
	}
	if !sp.own && sc.prefix() == nil {
		if t := cur(append(slices.Clone(sp.modPath), p[0])); t.ok() {
			return t, p[1:]
		}
	}
	if dir, ok := r.crateRoot[p[0]]; ok {
		if s := r.rsMod[dir+"::"]; s != nil {
			return target{sp: s}, p[1:]
		}
	}
	return target{}, nil
}

// call resolves a call or a test's subject to a function or method id
// ("" when it names none; a test's subject may be a type).
func (r *resolver) call(sc scope, ref Ref) string {
	var t target
	switch ref.How {
	case "self", "super":
		cls := r.classOf(sc, ref.Class)
		if !cls.ok() || len(ref.Path) != 1 {
			return ""
		}
		if ref.How == "self" {
			return r.methodOf(cls.id(), ref.Path[0], 0)
		}
		for _, b := range r.bases[cls.id()] {
			if m := r.methodOf(b, ref.Path[0], 0); m != "" {
				return m
			}
		}
		return ""
	case "implicit":
		for k := len(ref.Class); k >= 1; k-- {
			if m := r.methodOf(sc.sp.ID+"#"+strings.Join(ref.Class[:k], "."), ref.Path[0], 0); m != "" {
				return m
			}
		}
		t = r.path(sc, ref.Path, nil, 0)
	default:
		t = r.path(sc, ref.Path, ref.Class, 0)
	}
	switch t.kind() {
	case KindFunction, KindMethod:
		return t.id()
	case KindType:
		if ref.How == "name" {
			return t.id()
		}
		switch sc.sp.fam {
		case "python":
			return r.methodOf(t.id(), "__init__", 0)
		case "js":
			return r.methodOf(t.id(), "constructor", 0)
		case "java":
			return r.methods[t.id()][t.base[strings.LastIndexByte(t.base, '.')+1:]]
		}
	case KindInterface:
		if ref.How == "name" {
			return t.id()
		}
	}
	return ""
}

// classOf is the enclosing class of a self or super reference.
func (r *resolver) classOf(sc scope, class []string) target {
	if len(class) == 0 {
		return target{}
	}
	if sc.sp.fam == "rust" {
		return r.path(sc, class, nil, 0)
	}
	return target{sc.sp, strings.Join(class, ".")}
}

// imports states the imports edges (module -> module of the repository,
// or -> a package outside it, the standard library aside) and each
// file's description.
func (r *resolver) imports(g *Graph) {
	for _, f := range r.files {
		sp := r.fileSpace[f.Path]
		var names []string
		for _, b := range f.Imports {
			if len(b.Path) == 0 && (f.Lang != "rust" || b.Symbol == "") {
				continue // a local alias (export default x)
			}
			sc := scope{f: f, sp: sp, mod: b.Mod}
			written, ext := importName(f.Lang, b)
			names = appendNew(names, written)
			t := r.module(sc, b.Path, 0)
			if f.Lang == "rust" && !t.ok() && len(b.Path) == 0 {
				t = r.path(sc, []string{b.Symbol}, nil, 0)
			}
			if t.ok() {
				if t.sp != sp {
					r.edge(sp.ID, RelImports, t.sp.ID)
				}
				continue
			}
			if ext == "" || stdlib[family(f.Lang)][strings.SplitN(ext, ".", 2)[0]] {
				continue
			}
			if f.Lang == "rust" && (ext == "crate" || ext == "self" || ext == "super" || ext == "Self") {
				continue
			}
			id := "ext:" + family(f.Lang) + ":" + ext
			g.External[id] = ext
			r.edge(sp.ID, RelImports, id)
		}
		if len(names) > 0 {
			g.FileDesc[f.Path] = Synopsis("Imports " + strings.Join(names, ", "))
		}
	}
}

// importName is an import as its file writes it, and the name of the
// package outside the repository it would be ("" for none).
func importName(lang string, b Binding) (written, ext string) {
	switch family(lang) {
	case "python":
		w := strings.Join(b.Path, ".")
		if strings.HasPrefix(b.Path[0], ".") {
			w = b.Path[0] + strings.Join(b.Path[1:], ".")
			return w, ""
		}
		return w, b.Path[0]
	case "js":
		p := b.Path[0]
		if n, ok := strings.CutPrefix(p, "pkg:"); ok {
			return n, n
		}
		return p, ""
	case "java":
		w := strings.Join(b.Path, ".")
		if b.Symbol != "" {
			w += "." + b.Symbol
		}
		return w, strings.Join(b.Path, ".")
	case "rust":
		parts := append(slices.Clone(b.Path), b.Symbol)
		if b.Name == "*" {
			parts = append(slices.Clone(b.Path), "*")
		}
		parts = slices.DeleteFunc(parts, func(s string) bool { return s == "" })
		if len(parts) == 0 {
			return "", ""
		}
		return strings.Join(parts, "::"), parts[0]
	}
	return "", ""
}
