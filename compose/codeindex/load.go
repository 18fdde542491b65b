package codeindex

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/build"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// module is a Go module on disk: its path, root and packages.
type module struct {
	Path string // module path from go.mod
	Root string // absolute directory of go.mod
	// Pkgs are the module's package directories (module-relative, "." for
	// the root), sorted.
	Pkgs []string
	tree *tree // reads the files under Root
}

// readModule reads dir/go.mod and lists the package directories under it:
// vendor, testdata, hidden and _-prefixed directories and nested modules
// are not the module's, nor are directories reached through symbolic
// links (see tree). A tree without go.mod (from before modules) is read
// with modulePath as its path when one is given. warn hears what is
// skipped.
func readModule(ctx context.Context, dir, modulePath string, warn func(string)) (*module, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// The root is named by the caller, so a link to it is followed; what
	// is under it is then judged against its real path.
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, err
	}
	t := newTree(root, warn)
	data, err := t.readFile(filepath.Join(root, "go.mod"))
	if err != nil && !(os.IsNotExist(err) && modulePath != "") {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%w: %s (name its import path to read it anyway)", ErrNotModule, dir)
		}
		return nil, err
	}
	m := &module{Root: root, Path: modulePath, tree: t}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for m.Path == "" && sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(l, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			m.Path = strings.Trim(strings.TrimSpace(rest), `"`)
			break
		}
	}
	if m.Path == "" {
		return nil, fmt.Errorf("codeindex: %s/go.mod has no module line", dir)
	}
	if !validImportPath(m.Path) {
		return nil, fmt.Errorf("codeindex: module path %q is not a clean import path", m.Path)
	}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			t.linkedDir(p)
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root {
			if name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
		}
		files, err := t.listGo(p)
		if err != nil {
			return err
		}
		if len(files) > 0 {
			rel, _ := filepath.Rel(root, p)
			m.Pkgs = append(m.Pkgs, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(m.Pkgs)
	return m, err
}

// bareModule is a tree without a Go module: its root, read for the
// other languages.
func bareModule(dir string, warn func(string)) (*module, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("codeindex: %s is not a directory", dir)
	}
	return &module{Root: root, tree: newTree(root, warn)}, nil
}

// importPath is the import path of the module-relative directory rel.
func (m *module) importPath(rel string) string {
	if rel == "." {
		return m.Path
	}
	return m.Path + "/" + rel
}

// hasPkg says whether rel is one of the module's package directories.
func (m *module) hasPkg(rel string) bool {
	_, ok := slices.BinarySearch(m.Pkgs, rel)
	return ok
}

// relDir is the module-relative directory of a module import path, or ""
// when the path is not the module's.
func (m *module) relDir(importPath string) string {
	if importPath == m.Path {
		return "."
	}
	if rest, ok := strings.CutPrefix(importPath, m.Path+"/"); ok {
		return rest
	}
	return ""
}

// buildCtx selects files as `go build` would on this machine, cgo off (the
// pure-Go variants of the standard library).
func buildCtx() *build.Context {
	c := build.Default
	c.CgoEnabled = false
	return &c
}

// srcFile is one parsed file of the module.
type srcFile struct {
	Rel  string // module-relative path, slash-separated
	AST  *ast.File
	Hash string
	Test bool // a _test.go file
}

// pkgFiles are the files of one module package directory, parsed.
type pkgFiles struct {
	Rel   string // module-relative directory
	Name  string // package name
	Files []*srcFile
	XTest []*srcFile // package name_test
	// Other are the files excluded here by build constraints (another
	// GOOS or GOARCH, a custom tag, cgo): their declarations are indexed,
	// not type-checked. A package may have only those.
	Other   []*srcFile
	Imports []string
	DirHash string // see pkgFacts.DirHash
}

// dirHash hashes the names and contents of every .go file of dir that
// the tree reads.
func dirHash(t *tree, dir string) (string, error) {
	files, err := t.listGo(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range files {
		b, err := t.readFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return "", err
		}
		h.Write([]byte(e.Name()))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(len(b))))
		h.Write([]byte{0})
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// loader type-checks packages from source: the module's fully (with the
// information extraction needs), the standard library with function
// bodies ignored, anything else not at all (it stays unresolved).
//
// The module's files are read through its tree (links leaving the root,
// large and irregular files skipped). A loader checks one package at a
// time (check); parsing may run in parallel. Once ctx is done every
// import fails at once, so a check in progress ends soon.
type loader struct {
	ctx     context.Context // the run's: types.Importer takes none
	mod     *module
	fset    *token.FileSet
	build   *build.Context
	noTests bool // leave _test.go files out

	cache *typeCache // nil: none
	// whole: the module's packages are never read from the cache, whose
	// export data holds only their exported names (see withUnexported).
	whole bool

	mu       sync.Mutex
	deps     map[string]*depPkg   // import path -> its declarations-only check
	resolved map[string]*resolved // import path as written -> where it is
	// active are the module packages being checked as imports, the
	// innermost last. Importing one of them again is an import cycle,
	// which would otherwise wait for ever on its own depPkg.once.
	active []string
	cycle  error // the first cycle met (ErrImportCycle)
}

// resolved is where an import outside the module is, or why not.
type resolved struct {
	key, dir string
	files    []string
	err      error
}

type depPkg struct {
	once sync.Once
	pkg  *types.Package
	err  error
}

func newLoader(ctx context.Context, m *module) *loader {
	bc := buildCtx()
	// go/build lists and opens the module's files through the tree;
	// the standard library's as usual.
	bc.ReadDir = func(dir string) ([]fs.FileInfo, error) {
		if m.tree.within(dir) {
			return m.tree.listGo(dir)
		}
		return readDirInfo(dir)
	}
	bc.OpenFile = func(p string) (io.ReadCloser, error) {
		if m.tree.within(p) {
			return m.tree.open(p)
		}
		return os.Open(p)
	}
	return &loader{ctx: ctx, mod: m, fset: token.NewFileSet(), build: bc, deps: map[string]*depPkg{}, resolved: map[string]*resolved{}}
}

// readSrc reads a source file: the module's through its tree.
func (l *loader) readSrc(p string) ([]byte, error) {
	if l.mod.tree.within(p) {
		return l.mod.tree.readFile(p)
	}
	return os.ReadFile(p)
}

// enter marks the module package p as being checked as an import; it
// fails with ErrImportCycle if it already is. leave undoes it.
func (l *loader) enter(p string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i := slices.Index(l.active, p); i >= 0 {
		cyc := slices.Clone(l.active[i:])
		// Start at the smallest path, so that a cycle reads the same
		// whichever package the run met first.
		low := 0
		for j, q := range cyc {
			if q < cyc[low] {
				low = j
			}
		}
		cyc = append(cyc[low:], cyc[:low]...)
		cyc = append(cyc, cyc[0])
		err := fmt.Errorf("%w: %s", ErrImportCycle, strings.Join(cyc, " -> "))
		if l.cycle == nil {
			l.cycle = err
		}
		return err
	}
	l.active = append(l.active, p)
	return nil
}

func (l *loader) leave() {
	l.mu.Lock()
	l.active = l.active[:len(l.active)-1]
	l.mu.Unlock()
}

// failed is why the run must stop: ctx done, or an import cycle met.
func (l *loader) failed() error {
	if err := l.ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cycle
}

// Import implements types.Importer.
func (l *loader) Import(p string) (*types.Package, error) { return l.ImportFrom(p, "", 0) }

// ImportFrom implements types.ImporterFrom: module packages and the
// standard library are checked from source, declarations only, or read
// from the type cache when their sources have not changed; other packages
// are not found (their uses stay unresolved).
func (l *loader) ImportFrom(p, dir string, _ types.ImportMode) (*types.Package, error) {
	if err := l.ctx.Err(); err != nil {
		return nil, err
	}
	if p == "unsafe" {
		return types.Unsafe, nil
	}
	if p == "C" {
		return nil, fmt.Errorf("cgo is not read")
	}
	if !validImportPath(p) {
		return nil, fmt.Errorf("%q is not a clean import path: left unresolved", p)
	}
	key := p
	var files []string
	var srcDir string
	cache := l.cache
	if rel := l.mod.relDir(p); rel != "" {
		if l.whole {
			cache = nil
		}
		if !l.mod.hasPkg(rel) {
			return nil, fmt.Errorf("%s: no such package in the module: left unresolved", p)
		}
		if err := l.enter(p); err != nil {
			return nil, err
		}
		defer l.leave()
		srcDir = filepath.Join(l.mod.Root, filepath.FromSlash(rel))
	} else {
		if pkg := l.cache.stdlib(l, p); pkg != nil {
			return pkg, nil
		}
		r := l.resolve(p, dir)
		if r.err != nil {
			return nil, r.err
		}
		key, srcDir, files = r.key, r.dir, r.files
	}
	l.mu.Lock()
	d := l.deps[key]
	if d == nil {
		d = &depPkg{}
		l.deps[key] = d
	}
	l.mu.Unlock()
	d.once.Do(func() {
		if files == nil {
			bp, err := l.build.ImportDir(srcDir, 0)
			if err != nil {
				d.err = err
				return
			}
			files = bp.GoFiles
		}
		version := cache.version(l, srcDir, files)
		if pkg := cache.load(l, key, version); pkg != nil {
			d.pkg = pkg
			return
		}
		var asts []*ast.File
		for _, f := range files {
			full := filepath.Join(srcDir, f)
			src, err := l.readSrc(full)
			if err != nil {
				continue
			}
			a, err := parser.ParseFile(l.fset, full, src, parser.SkipObjectResolution)
			if err != nil && a == nil {
				continue
			}
			stripBodies(a)
			asts = append(asts, a)
		}
		conf := types.Config{Importer: l, IgnoreFuncBodies: true, Error: func(error) {}, FakeImportC: true}
		d.pkg, _ = conf.Check(key, l.fset, asts, nil)
		cache.keep(key, version, d.pkg)
	})
	if d.pkg == nil {
		return nil, fmt.Errorf("%s: %v", p, d.err)
	}
	return d.pkg, nil
}

// resolve finds a standard library package (the importer's directory
// matters only for the standard library's own vendored packages).
func (l *loader) resolve(p, dir string) *resolved {
	ck := p
	if strings.HasPrefix(dir, l.build.GOROOT) {
		ck = p + "\x00goroot"
	}
	l.mu.Lock()
	r := l.resolved[ck]
	l.mu.Unlock()
	if r != nil {
		return r
	}
	if dir == "" {
		dir = l.mod.Root
	}
	// The standard library, found by hand: go/build's Import would run
	// `go list` for every path it does not find (a process each).
	r = &resolved{err: fmt.Errorf("%s: not the module's nor the standard library's: left unresolved", p)}
	src := filepath.Join(l.build.GOROOT, "src")
	cands := []string{p}
	if strings.HasPrefix(dir, src+string(filepath.Separator)) {
		cands = []string{"vendor/" + p, p} // the standard library's own vendored packages
	}
	for _, c := range cands {
		first, _, _ := strings.Cut(c, "/")
		if strings.Contains(first, ".") {
			continue // a domain: not the standard library
		}
		bp, err := l.build.ImportDir(filepath.Join(src, filepath.FromSlash(c)), 0)
		if err == nil {
			r = &resolved{key: c, dir: bp.Dir, files: bp.GoFiles}
			break
		}
	}
	l.mu.Lock()
	l.resolved[ck] = r
	l.mu.Unlock()
	return r
}

// stripBodies drops function bodies: a dependency's declarations are
// all a check of its importers needs.
func stripBodies(f *ast.File) {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			fd.Body = nil
		}
	}
}

// parsePackages parses the files of the module packages rels, in
// parallel. Files excluded by build constraints are left out. It stops
// early when the run's ctx is done.
func (l *loader) parsePackages(rels []string) ([]*pkgFiles, error) {
	out := make([]*pkgFiles, len(rels))
	errs := make([]error, len(rels))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, rel := range rels {
		if l.ctx.Err() != nil {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = l.parsePackage(rel)
		}()
	}
	wg.Wait()
	if err := l.ctx.Err(); err != nil {
		return nil, err
	}
	var kept []*pkgFiles
	for i, p := range out {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if p != nil {
			kept = append(kept, p)
		}
	}
	return kept, nil
}

func (l *loader) parsePackage(rel string) (*pkgFiles, error) {
	dir := filepath.Join(l.mod.Root, filepath.FromSlash(rel))
	bp, err := l.build.ImportDir(dir, 0)
	if err != nil {
		_, noGo := err.(*build.NoGoError)
		switch {
		case bp == nil:
			return nil, nil
		case noGo && len(bp.IgnoredGoFiles) > 0:
			// Only files of other platforms or tags: read as such.
		case noGo || bp.Name == "":
			return nil, nil // mixed or unreadable packages are skipped
		}
	}
	p := &pkgFiles{Rel: rel, Name: bp.Name}
	if p.DirHash, err = dirHash(l.mod.tree, dir); err != nil {
		return nil, err
	}
	read := func(names []string, test bool) ([]*srcFile, error) {
		var fs []*srcFile
		for _, n := range names {
			if err := l.ctx.Err(); err != nil {
				return nil, err
			}
			full := filepath.Join(dir, n)
			src, err := l.mod.tree.readFile(full)
			if err != nil {
				return nil, err
			}
			a, err := parser.ParseFile(l.fset, full, src, parser.ParseComments|parser.SkipObjectResolution)
			if a == nil {
				return nil, err
			}
			fs = append(fs, &srcFile{Rel: path.Join(rel, n), AST: a, Hash: hashOf(src), Test: test})
		}
		return fs, nil
	}
	if p.Files, err = read(bp.GoFiles, false); err != nil {
		return nil, err
	}
	var other []string
	for _, n := range bp.IgnoredGoFiles {
		if !strings.HasSuffix(n, "_test.go") {
			other = append(other, n)
		}
	}
	if p.Other, err = read(other, false); err != nil {
		return nil, err
	}
	p.Other = slices.DeleteFunc(p.Other, func(f *srcFile) bool { return !buildable(f.AST) })
	if p.Name == "" && len(p.Other) > 0 {
		p.Name = p.Other[0].AST.Name.Name
	}
	p.Other = slices.DeleteFunc(p.Other, func(f *srcFile) bool { return f.AST.Name.Name != p.Name })
	if p.Name == "" {
		return nil, nil // only files no build includes
	}
	if l.noTests {
		p.Imports = bp.Imports
		return p, nil
	}
	tf, err := read(bp.TestGoFiles, true)
	if err != nil {
		return nil, err
	}
	p.Files = append(p.Files, tf...)
	if p.XTest, err = read(bp.XTestGoFiles, true); err != nil {
		return nil, err
	}
	p.Imports = bp.Imports
	return p, nil
}

// buildable says whether some build could include f: whether its build
// constraint (//go:build, else the // +build lines) holds for some choice
// of tags other than "ignore", which is taken as unset. Any GOOS, GOARCH,
// release tag or custom tag may be chosen, so a file of any platform or
// tag is the package's, and one that no build includes (//go:build
// ignore, the convention for generators and examples run by hand) is not.
// A file excluded by its name alone (foo_windows.go) has no constraint:
// buildable.
func buildable(f *ast.File) bool {
	var expr, plus constraint.Expr
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			e, err := constraint.Parse(c.Text)
			switch {
			case err != nil:
			case constraint.IsGoBuild(c.Text):
				expr = e
			case plus == nil:
				plus = e
			default:
				plus = &constraint.AndExpr{X: plus, Y: e} // plus-build lines all hold
			}
		}
	}
	if expr == nil {
		expr = plus // a go:build line wins over plus-build lines
	}
	if expr == nil {
		return true
	}
	var tags []string
	collectTags(expr, &tags)
	if len(tags) > 16 {
		return true // too many to try: a line naming that many is meant to build
	}
	for bits := 0; bits < 1<<len(tags); bits++ {
		if expr.Eval(func(tag string) bool {
			i := slices.Index(tags, tag)
			return tag != "ignore" && bits&(1<<i) != 0
		}) {
			return true
		}
	}
	return false
}

func collectTags(e constraint.Expr, tags *[]string) {
	switch e := e.(type) {
	case *constraint.TagExpr:
		if !slices.Contains(*tags, e.Tag) {
			*tags = append(*tags, e.Tag)
		}
	case *constraint.NotExpr:
		collectTags(e.X, tags)
	case *constraint.AndExpr:
		collectTags(e.X, tags)
		collectTags(e.Y, tags)
	case *constraint.OrExpr:
		collectTags(e.X, tags)
		collectTags(e.Y, tags)
	}
}

// checked is a module package type-checked with its in-package tests, and
// its external test package if any.
type checked struct {
	files *pkgFiles
	pkg   *types.Package
	info  *types.Info
	xpkg  *types.Package
	xinfo *types.Info
}

func newInfo() *types.Info {
	return &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}
}

// checkCtx is check, given up when the run's ctx is done: go/types takes
// no context, and a package built to be slow to check (or merely large)
// must not keep an interrupted run waiting. The check given up ends on
// its own, soon (every import now fails), and its result is dropped.
func (l *loader) checkCtx(p *pkgFiles) (*checked, error) {
	done := make(chan *checked, 1)
	go func() { done <- l.check(p) }()
	select {
	case c := <-done:
		return c, l.failed()
	case <-l.ctx.Done():
		return nil, l.ctx.Err()
	}
}

// check type-checks p fully (bodies included) with its in-package test
// files, and its external test package. Errors are kept out: what cannot
// be resolved is left out of the graph.
func (l *loader) check(p *pkgFiles) *checked {
	c := &checked{files: p, info: newInfo()}
	ip := l.mod.importPath(p.Rel)
	var asts []*ast.File
	for _, f := range p.Files {
		asts = append(asts, f.AST)
	}
	conf := types.Config{Importer: l, Error: func(error) {}, FakeImportC: true}
	if len(asts) > 0 { // none: only files of other platforms
		c.pkg, _ = conf.Check(ip, l.fset, asts, c.info)
	}
	if len(p.XTest) > 0 {
		c.xinfo = newInfo()
		var xs []*ast.File
		for _, f := range p.XTest {
			xs = append(xs, f.AST)
		}
		// An external test package imports the package with its
		// in-package tests, as `go test` builds it: the one just checked.
		xconf := conf
		if c.pkg != nil {
			xconf.Importer = withPackage{l, c.pkg}
		}
		c.xpkg, _ = xconf.Check(ip+"_test", l.fset, xs, c.xinfo)
	}
	return c
}

// withUnexported is a loader for another universe of packages, in which
// the module's are checked from source (declarations only), never read
// from the type cache: its export data holds only exported names, and
// implements must see unexported types (nats.go's kvs, obs). The
// standard library's packages are shared: the module's refer only to
// their exported names, so the cache's serve both universes.
func (l *loader) withUnexported() *loader {
	u := &loader{ctx: l.ctx, mod: l.mod, fset: l.fset, build: l.build, noTests: l.noTests, cache: l.cache, whole: true,
		deps: map[string]*depPkg{}, resolved: map[string]*resolved{}}
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, d := range l.deps {
		if l.mod.relDir(k) == "" {
			u.deps[k] = d
		}
	}
	return u
}

// withPackage is the loader with one package replaced.
type withPackage struct {
	l   *loader
	pkg *types.Package
}

func (w withPackage) Import(p string) (*types.Package, error) { return w.ImportFrom(p, "", 0) }

func (w withPackage) ImportFrom(p, dir string, m types.ImportMode) (*types.Package, error) {
	if p == w.pkg.Path() {
		return w.pkg, nil
	}
	return w.l.ImportFrom(p, dir, m)
}
