package codeindex

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/gcexportdata"
)

// typeCache keeps the declarations of the packages a run imports (the
// standard library's, the module's as imports) as export data between
// runs, so that a re-index after a small change type-checks only the
// packages it reads: an entry is used while the sources it was made from
// are the same (the Go version's for the standard library, the files'
// contents for the module's). A nil *typeCache keeps nothing.
type typeCache struct {
	file    string
	entries map[string]cacheEntry
	fresh   map[string]cacheEntry
	imports map[string]*types.Package // the packages read, for gcexportdata
	loading map[string]bool
	goroot  string // gorootVersion
	dirty   bool   // an entry was made this run
}

type cacheEntry struct {
	Version string
	Imports []string // import paths, read first
	Data    []byte
}

const cacheMagic = "kgctx-codeindex-types-1"

// openTypeCache reads file; a missing or unreadable file (or one that
// readPrivate refuses) is an empty cache.
func openTypeCache(file string) *typeCache {
	c := &typeCache{file: file, entries: map[string]cacheEntry{}, fresh: map[string]cacheEntry{},
		imports: map[string]*types.Package{}, loading: map[string]bool{}}
	b, err := readPrivate(file)
	if err != nil {
		return c
	}
	var magic string
	dec := gob.NewDecoder(bytes.NewReader(b))
	if dec.Decode(&magic) != nil || magic != cacheMagic || dec.Decode(&c.entries) != nil {
		c.entries = map[string]cacheEntry{}
	}
	return c
}

// stdlib returns a standard library package from the cache without
// looking for its sources, when the cache has it for this Go.
func (c *typeCache) stdlib(l *loader, path string) *types.Package {
	if c == nil {
		return nil
	}
	e, ok := c.entries[path]
	if !ok || !strings.HasPrefix(e.Version, "goroot:") || e.Version != c.gorootVersion(l) {
		return nil
	}
	l.mu.Lock()
	d := l.deps[path]
	if d == nil {
		d = &depPkg{}
		l.deps[path] = d
	}
	l.mu.Unlock()
	d.once.Do(func() { d.pkg = c.load(l, path, e.Version) })
	return d.pkg
}

func (c *typeCache) gorootVersion(l *loader) string {
	if c.goroot == "" {
		v, _ := os.ReadFile(filepath.Join(l.build.GOROOT, "VERSION"))
		c.goroot = "goroot:" + l.build.GOROOT + ":" + string(bytes.TrimSpace(v))
	}
	return c.goroot
}

// version identifies the sources of a package: the Go version for the
// standard library, else a hash of the files' contents.
func (c *typeCache) version(l *loader, dir string, files []string) string {
	if c == nil {
		return ""
	}
	if strings.HasPrefix(dir, filepath.Join(l.build.GOROOT, "src")+string(filepath.Separator)) {
		return c.gorootVersion(l)
	}
	h := sha256.New()
	for _, f := range files {
		b, err := l.readSrc(filepath.Join(dir, f))
		if err != nil {
			return ""
		}
		h.Write([]byte(f))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// load returns the cached package path at version, its imports read
// first (through the loader, so from the cache or from source), or nil.
func (c *typeCache) load(l *loader, path, version string) *types.Package {
	if c == nil || version == "" || c.loading[path] {
		return nil
	}
	e, ok := c.entries[path]
	if !ok || e.Version != version {
		return nil
	}
	c.loading[path] = true
	defer delete(c.loading, path)
	for _, imp := range e.Imports {
		// An import outside the module and the standard library fails
		// now as it did when the entry was made; the export data has
		// what the package used of it.
		l.Import(imp)
	}
	if p := c.imports[path]; p != nil && p.Complete() {
		c.fresh[path] = e
		return p
	}
	pkg, err := readExportData(e.Data, l.fset, c.imports, path)
	if err != nil {
		return nil
	}
	c.fresh[path] = e
	return pkg
}

// keep records a package checked from source this run.
func (c *typeCache) keep(path, version string, pkg *types.Package) {
	if c == nil || version == "" || pkg == nil {
		return
	}
	c.imports[path] = pkg
	var buf bytes.Buffer
	if err := gcexportdata.Write(&buf, nil, pkg); err != nil {
		return
	}
	var imps []string
	for _, p := range pkg.Imports() {
		imps = append(imps, p.Path())
	}
	sort.Strings(imps)
	c.fresh[path] = cacheEntry{Version: version, Imports: imps, Data: buf.Bytes()}
	c.dirty = true
}

// save writes the cache when this run made an entry: the entries used
// or made, and the others still there (another run may need them),
// atomically.
func (c *typeCache) save() error {
	if c == nil || c.file == "" || !c.dirty {
		return nil
	}
	for k, e := range c.fresh {
		c.entries[k] = e
	}
	var buf bytes.Buffer
	enc := gob.NewEncoder(&buf)
	if err := errors.Join(enc.Encode(cacheMagic), enc.Encode(c.entries)); err != nil {
		return err
	}
	return writePrivate(c.file, buf.Bytes())
}

// readExportData is gcexportdata.Read, a panic on malformed data (the
// cache file is input like any other) turned into an error.
func readExportData(data []byte, fset *token.FileSet, imports map[string]*types.Package, path string) (pkg *types.Package, err error) {
	defer func() {
		if r := recover(); r != nil {
			pkg, err = nil, fmt.Errorf("export data of %s: %v", path, r)
		}
	}()
	return gcexportdata.Read(bytes.NewReader(data), fset, imports, path)
}
