package codeindex

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/kgctx/kgctx/compose/codeindex/langs"
	"github.com/kgctx/kgctx/compose/codeindex/treesitter"
	"github.com/kgctx/kgctx/engine"
)

// Sources of other languages than Go (Python, TypeScript and
// JavaScript, Java, Rust) are read with tree-sitter grammars run in
// WebAssembly (package treesitter) and stated per file (package langs);
// each file's facts are kept in the State while the file is unchanged,
// and all of them are resolved together on every run (langs.Resolve), so
// that a changed file's new or vanished declarations change the edges of
// the files that name them.

// skipDirs are directories whose files are not the repository's own
// code: dependencies, build output, caches, virtual environments (and
// Go's testdata, as for Go). Hidden directories are skipped too, and a
// directory holding pyvenv.cfg (a virtual environment of any name).
var skipDirs = map[string]bool{
	"node_modules": true, "bower_components": true, "jspm_packages": true, "vendor": true,
	"target": true, "dist": true, "build": true, "out": true, "coverage": true,
	"__pycache__": true, "site-packages": true, "venv": true, "testdata": true,
}

// SkippedDir says whether `kgctx index` leaves a directory of that name
// unread: a dependency, build, cache or virtual environment folder, or a
// hidden one (a folder holding pyvenv.cfg is skipped too, whatever its
// name).
func SkippedDir(name string) bool { return strings.HasPrefix(name, ".") || skipDirs[name] }

// srcFile of another language found in the tree.
type langSource struct {
	rel  string // root-relative, '/'
	lang string
}

// sources is what the walk found besides the Go packages.
type sources struct {
	files   []langSource
	crates  map[string]string // Cargo.toml directories -> crate name
	goFiles int               // .go files seen (counted when there is no go.mod)
}

// listSources walks the tree for sources of other languages than Go,
// and the Rust crates' Cargo.toml.
func listSources(ctx context.Context, t *tree) (*sources, error) {
	s := &sources{crates: map[string]string{}}
	root := t.root
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if p != root && errors.Is(err, fs.ErrPermission) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || skipDirs[name]) {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Lstat(filepath.Join(p, "pyvenv.cfg")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 {
			t.linkedDir(p)
		}
		switch {
		case name == "Cargo.toml":
			if b, err := t.readFile(p); err == nil {
				s.crates[path.Dir(rel)] = crateName(b, path.Base(path.Dir(filepath.ToSlash(p))))
			}
		case strings.HasSuffix(name, ".go"):
			s.goFiles++
		default:
			if lang := langs.LanguageOf(rel); lang != "" {
				s.files = append(s.files, langSource{rel: rel, lang: lang})
			}
		}
		return nil
	})
	sort.Slice(s.files, func(i, j int) bool { return s.files[i].rel < s.files[j].rel })
	return s, err
}

// errFound stops Indexable's walk at the first source.
var errFound = errors.New("found")

// Indexable says whether Run would find something to read in dir: a
// go.mod (or modulePath given), or a source of another language that Run
// reads. It returns ErrNotModule, wrapped with what it looked for, when
// there is nothing, so that a caller can refuse before it opens a store.
func Indexable(ctx context.Context, dir, modulePath string) error {
	if modulePath != "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		return nil
	}
	m, err := bareModule(dir, nil)
	if err != nil {
		return err
	}
	err = filepath.WalkDir(m.Root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p != m.Root && (strings.HasPrefix(d.Name(), ".") || skipDirs[d.Name()]) {
				return filepath.SkipDir
			}
			return nil
		}
		if langs.LanguageOf(d.Name()) != "" {
			return errFound
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%w, nor a source of another language read (Python, TypeScript, JavaScript, Java, Rust): %s", ErrNotModule, dir)
}

// crateName reads a Cargo.toml's [package] name ('-' as '_', as Rust
// code names the crate), or def.
func crateName(toml []byte, def string) string {
	sc := bufio.NewScanner(bytes.NewReader(toml))
	section := ""
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "[") {
			section = strings.Trim(l, "[] ")
			continue
		}
		if section != "package" && section != "lib" {
			continue
		}
		if k, v, ok := strings.Cut(l, "="); ok && strings.TrimSpace(k) == "name" {
			v = strings.Trim(strings.TrimSpace(v), `"'`)
			if v != "" && !strings.ContainsAny(v, " /\\") {
				return strings.ReplaceAll(v, "-", "_")
			}
		}
	}
	return strings.ReplaceAll(def, "-", "_")
}

// generated says why a source is not read as the repository's own code,
// or "": a generator's marker in its first five lines ("Code generated
// ... DO NOT EDIT", "@generated", "auto-generated"), or lines over 300
// bytes on average in a file over 4 KiB (minified).
func generated(src []byte) string {
	head := src
	for i, n := 0, 0; i < len(src); i++ {
		if src[i] == '\n' {
			if n++; n == 5 {
				head = src[:i]
				break
			}
		}
	}
	low := bytes.ToLower(head[:min(len(head), 2048)])
	for _, m := range []string{"@generated", "code generated", "do not edit", "auto-generated", "autogenerated", "this file is generated", "this file was generated"} {
		if bytes.Contains(low, []byte(m)) {
			return "generated (" + m + ")"
		}
	}
	if len(src) > 4096 {
		lines := bytes.Count(src, []byte{'\n'}) + 1
		if len(src)/lines > 300 {
			return fmt.Sprintf("minified (%d bytes a line)", len(src)/lines)
		}
	}
	return ""
}

// langRun is the part of a run that reads the other languages.
type langRun struct {
	t      *tree
	warn   func(string)
	o      Options
	rt     *treesitter.Runtime
	closer func()
	// skipped by kind (generated, parse failure): counted, the first named.
	mu      sync.Mutex
	skipped map[string][]string
}

// langFiles reads the sources that changed since prev (all without a
// state) and returns every source's facts: unchanged ones from prev.
// read counts the files parsed, kept those reused.
func (lr *langRun) langFiles(ctx context.Context, src *sources, prev *State, since string) (files map[string]*langs.File, read, kept int, err error) {
	files = map[string]*langs.File{}
	var old map[string]*langs.File
	if prev != nil && prev.LangVersion == langs.Version {
		old = prev.Files
	}
	var gitSet map[string]bool
	if since != "" && old != nil {
		changed, err := gitChanged(ctx, lr.t.root, since)
		if err != nil {
			return nil, 0, 0, err
		}
		gitSet = map[string]bool{}
		for _, c := range changed {
			gitSet[c] = true
		}
	}
	type job struct {
		s   langSource
		src []byte
	}
	var jobs []job
	for _, s := range src.files {
		if err := ctx.Err(); err != nil {
			return nil, 0, 0, err
		}
		f := old[s.rel]
		if gitSet != nil && f != nil && !gitSet[s.rel] {
			files[s.rel] = f
			kept++
			continue
		}
		b, err := lr.t.readFile(filepath.Join(lr.t.root, filepath.FromSlash(s.rel)))
		if err != nil {
			var fi fs.FileInfo
			if errors.Is(err, ErrTooLarge) {
				fi, _ = os.Stat(filepath.Join(lr.t.root, filepath.FromSlash(s.rel)))
			}
			lr.t.skipped(filepath.Join(lr.t.root, filepath.FromSlash(s.rel)), fi, err)
			continue
		}
		if f != nil && f.Hash == langs.HashOf(b) {
			files[s.rel] = f
			kept++
			continue
		}
		if why := generated(b); why != "" {
			lr.skip(why, s.rel)
			continue
		}
		jobs = append(jobs, job{s: s, src: b})
	}
	if len(jobs) == 0 {
		return files, 0, kept, nil
	}
	if err := lr.runtime(ctx); err != nil {
		return nil, 0, 0, err
	}
	out := make([]*langs.File, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = langs.Extract(ctx, lr.rt, jobs[i].s.rel, jobs[i].src)
			}
		}()
	}
	for i := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, 0, 0, err
	}
	for i, f := range out {
		if errs[i] != nil {
			lr.skip(fmt.Sprintf("not parsed (%v)", errs[i]), jobs[i].s.rel)
			continue
		}
		if f.Errors > 0 {
			lr.skip("parsed with syntax errors (what they cover is left out)", f.Path)
		}
		if lr.o.NoTests {
			if f.Test {
				continue
			}
			f.Syms = slices.DeleteFunc(f.Syms, func(s langs.Sym) bool { return s.Test })
		}
		files[f.Path] = f
		read++
	}
	return files, read, kept, nil
}

func (lr *langRun) skip(why, rel string) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if lr.skipped == nil {
		lr.skipped = map[string][]string{}
	}
	lr.skipped[why] = append(lr.skipped[why], rel)
}

// report says what was skipped, by reason.
func (lr *langRun) report() {
	for _, why := range sortedKeys(lr.skipped) {
		fs := lr.skipped[why]
		if len(fs) == 1 {
			lr.warn(fmt.Sprintf("%s: %s", fs[0], why))
		} else {
			lr.warn(fmt.Sprintf("%d files %s (the first: %s)", len(fs), why, fs[0]))
		}
	}
}

// runtime starts the parsers (once), unless the options give them.
func (lr *langRun) runtime(ctx context.Context) error {
	if lr.rt != nil {
		return nil
	}
	if lr.o.Parsers != nil {
		lr.rt = lr.o.Parsers
		return nil
	}
	rt, err := treesitter.New(ctx, &treesitter.Options{CacheDir: lr.o.ParserCache})
	if err != nil {
		return err
	}
	lr.rt = rt
	lr.closer = func() { rt.Close(context.Background()) }
	return nil
}

func (lr *langRun) close() {
	if lr.closer != nil {
		lr.closer()
	}
}

// langNames names the modules of the other languages: each takes the
// first of its candidate names (langs.Space.Names) that no Go package,
// external package or other module takes, rounds of candidates in turn,
// so "core" stays "core" until a second module would be "core" too, and
// then both are named by their paths ("app/core", "lib/core").
func langNames(g *langs.Graph, taken map[string]bool) map[string]string {
	names := map[string]string{}
	used := map[string]bool{}
	for n := range taken {
		used[n] = true
	}
	for _, n := range g.External {
		used[n] = true
	}
	pending := sortedKeys(g.Spaces)
	for level := 0; len(pending) > 0; level++ {
		cand := func(id string) string {
			ns := g.Spaces[id].Names
			if level < len(ns) {
				return ns[level]
			}
			return id // every candidate taken: the id is unique
		}
		count := map[string]int{}
		for _, id := range pending {
			count[cand(id)]++
		}
		var next []string
		for _, id := range pending {
			n := cand(id)
			if count[n] == 1 && !used[n] || level > len(g.Spaces[id].Names) {
				names[id], used[n] = n, true
				continue
			}
			next = append(next, id)
		}
		pending = next
	}
	return names
}

// langTriplets renders the other languages' graph with names; taken are
// the names the Go graph uses for packages.
func (s *State) langTriplets(taken map[string]bool) (out []triplet, marker string) {
	if len(s.Files) == 0 {
		return nil, ""
	}
	g := langs.Resolve(langs.Input{Files: s.Files, Crates: s.Crates})
	names := langNames(g, taken)
	type nodeInfo struct {
		name, kind, desc, sig string
		loc                   *engine.Location
	}
	info := func(id string) (nodeInfo, bool) {
		switch {
		case strings.HasPrefix(id, "file:"):
			p := id[len("file:"):]
			f := s.Files[p]
			if f == nil {
				return nodeInfo{}, false
			}
			return nodeInfo{name: p, kind: KindFile, desc: g.FileDesc[p], loc: &engine.Location{File: p, Line: 1, EndLine: max(1, f.Lines)}}, true
		case strings.HasPrefix(id, "ext:"):
			n, ok := g.External[id]
			return nodeInfo{name: n, kind: KindPackage}, ok
		}
		if sp, ok := g.Spaces[id]; ok {
			return nodeInfo{name: names[id], kind: KindPackage, desc: sp.Doc}, true
		}
		at, ok := g.Syms[id]
		if !ok {
			return nodeInfo{}, false
		}
		f := s.Files[at.File]
		sym := f.Syms[at.Index]
		sp := id[:strings.IndexByte(id, '#')]
		return nodeInfo{name: names[sp] + "." + sym.Base, kind: sym.Kind, desc: sym.Desc, sig: sym.Sig,
			loc: &engine.Location{File: f.Path, Line: sym.Line, EndLine: max(sym.Line, sym.End)}}, true
	}
	for _, e := range g.Edges {
		sn, ok1 := info(e[0])
		dn, ok2 := info(e[2])
		if !ok1 || !ok2 || sn.name == dn.name {
			continue
		}
		t := engine.TripletInput{Source: sn.name, Relationship: e[1], Target: dn.name,
			SourceType: sn.kind, TargetType: dn.kind, SourceDescription: sn.desc, TargetDescription: dn.desc,
			SourceExact: true, TargetExact: true, SourceLocation: sn.loc, TargetLocation: dn.loc,
			SourceSignature: sn.sig, TargetSignature: dn.sig}
		out = append(out, triplet{TripletInput: t, pkg: e[0]})
	}
	if ids := sortedKeys(g.Spaces); len(ids) > 0 {
		marker = names[ids[0]]
	}
	return out, marker
}
