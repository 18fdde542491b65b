package codeindex

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/build"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"go/types"
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
}

// ErrNotModule: the directory has no go.mod.
var ErrNotModule = fmt.Errorf("codeindex: not a Go module (no go.mod)")

// readModule reads dir/go.mod and lists the package directories under it:
// vendor, testdata, hidden and _-prefixed directories and nested modules
// are not the module's. A tree without go.mod (from before modules) is
// read with modulePath as its path when one is given.
func readModule(dir, modulePath string) (*module, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil && !(os.IsNotExist(err) && modulePath != "") {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("%w: %s (name its import path to read it anyway)", ErrNotModule, dir)
		}
		return nil, err
	}
	m := &module{Root: root, Path: modulePath}
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
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
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
		ents, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
				rel, _ := filepath.Rel(root, p)
				m.Pkgs = append(m.Pkgs, filepath.ToSlash(rel))
				break
			}
		}
		return nil
	})
	sort.Strings(m.Pkgs)
	return m, err
}

// importPath is the import path of the module-relative directory rel.
func (m *module) importPath(rel string) string {
	if rel == "." {
		return m.Path
	}
	return m.Path + "/" + rel
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
	// Other are the files of other platforms (excluded here by build
	// constraints): their declarations are indexed, not type-checked.
	Other   []*srcFile
	Imports []string
	DirHash string // see pkgFacts.DirHash
}

// dirHash hashes the names and contents of every .go file in dir.
func dirHash(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
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
type loader struct {
	mod     *module
	fset    *token.FileSet
	ctx     *build.Context
	noTests bool // leave _test.go files out

	cache *typeCache // nil: none

	mu       sync.Mutex
	deps     map[string]*depPkg   // import path -> its declarations-only check
	resolved map[string]*resolved // import path as written -> where it is
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

func newLoader(m *module) *loader {
	return &loader{mod: m, fset: token.NewFileSet(), ctx: buildCtx(), deps: map[string]*depPkg{}, resolved: map[string]*resolved{}}
}

// Import implements types.Importer.
func (l *loader) Import(p string) (*types.Package, error) { return l.ImportFrom(p, "", 0) }

// ImportFrom implements types.ImporterFrom: module packages and the
// standard library are checked from source, declarations only, or read
// from the type cache when their sources have not changed; other packages
// are not found (their uses stay unresolved).
func (l *loader) ImportFrom(p, dir string, _ types.ImportMode) (*types.Package, error) {
	if p == "unsafe" {
		return types.Unsafe, nil
	}
	if p == "C" {
		return nil, fmt.Errorf("cgo is not read")
	}
	key := p
	var files []string
	var srcDir string
	if rel := l.mod.relDir(p); rel != "" {
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
			bp, err := l.ctx.ImportDir(srcDir, 0)
			if err != nil {
				d.err = err
				return
			}
			files = bp.GoFiles
		}
		version := l.cache.version(l, srcDir, files)
		if pkg := l.cache.load(l, key, version); pkg != nil {
			d.pkg = pkg
			return
		}
		var asts []*ast.File
		for _, f := range files {
			a, err := parser.ParseFile(l.fset, filepath.Join(srcDir, f), nil, parser.SkipObjectResolution)
			if err != nil && a == nil {
				continue
			}
			stripBodies(a)
			asts = append(asts, a)
		}
		conf := types.Config{Importer: l, IgnoreFuncBodies: true, Error: func(error) {}, FakeImportC: true}
		d.pkg, _ = conf.Check(key, l.fset, asts, nil)
		l.cache.keep(key, version, d.pkg)
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
	if strings.HasPrefix(dir, l.ctx.GOROOT) {
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
	src := filepath.Join(l.ctx.GOROOT, "src")
	cands := []string{p}
	if strings.HasPrefix(dir, src+string(filepath.Separator)) {
		cands = []string{"vendor/" + p, p} // the standard library's own vendored packages
	}
	for _, c := range cands {
		first, _, _ := strings.Cut(c, "/")
		if strings.Contains(first, ".") {
			continue // a domain: not the standard library
		}
		bp, err := l.ctx.ImportDir(filepath.Join(src, filepath.FromSlash(c)), 0)
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
// parallel. Files excluded by build constraints are left out.
func (l *loader) parsePackages(rels []string) ([]*pkgFiles, error) {
	out := make([]*pkgFiles, len(rels))
	errs := make([]error, len(rels))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, rel := range rels {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = l.parsePackage(rel)
		}()
	}
	wg.Wait()
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
	bp, err := l.ctx.ImportDir(dir, 0)
	if err != nil {
		if _, ok := err.(*build.NoGoError); ok {
			return nil, nil
		}
		if bp == nil || bp.Name == "" {
			return nil, nil // mixed or unreadable packages are skipped
		}
	}
	p := &pkgFiles{Rel: rel, Name: bp.Name}
	if p.DirHash, err = dirHash(dir); err != nil {
		return nil, err
	}
	read := func(names []string, test bool) ([]*srcFile, error) {
		var fs []*srcFile
		for _, n := range names {
			full := filepath.Join(dir, n)
			src, err := os.ReadFile(full)
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
	p.Other = slices.DeleteFunc(p.Other, func(f *srcFile) bool { return f.AST.Name.Name != bp.Name || !anyPlatform(f.AST) })
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

// platforms are the GOOS/GOARCH pairs a file of another platform is
// tried for (a file that builds on none, like //go:build ignore, is not
// the package's).
var platforms = func() [][2]string {
	var out [][2]string
	for _, goos := range []string{"linux", "darwin", "windows", "freebsd", "openbsd", "netbsd", "dragonfly", "solaris", "illumos", "aix", "plan9", "android", "ios", "js", "wasip1"} {
		for _, arch := range []string{"amd64", "arm64", "386", "arm", "wasm", "ppc64le", "s390x", "riscv64", "mips64"} {
			out = append(out, [2]string{goos, arch})
		}
	}
	return out
}()

var unixOS = map[string]bool{"linux": true, "darwin": true, "freebsd": true, "openbsd": true, "netbsd": true, "dragonfly": true,
	"solaris": true, "illumos": true, "aix": true, "android": true, "ios": true}

// anyPlatform says whether f's //go:build line holds on some platform.
func anyPlatform(f *ast.File) bool {
	var expr constraint.Expr
	for _, cg := range f.Comments {
		if cg.Pos() > f.Package {
			break
		}
		for _, c := range cg.List {
			if constraint.IsGoBuild(c.Text) {
				if e, err := constraint.Parse(c.Text); err == nil {
					expr = e
				}
			}
		}
	}
	if expr == nil {
		return true // excluded by its name (foo_windows.go): that platform
	}
	for _, pl := range platforms {
		ok := expr.Eval(func(tag string) bool {
			switch {
			case tag == pl[0] || tag == pl[1]:
				return true
			case tag == "unix":
				return unixOS[pl[0]]
			case strings.HasPrefix(tag, "go1."):
				return true
			}
			return tag == "cgo" || tag == "gc"
		})
		if ok {
			return true
		}
	}
	return false
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
	c.pkg, _ = conf.Check(ip, l.fset, asts, c.info)
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
