package codeindex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kgctx/kgctx/compose/codeindex/langs"
	"github.com/kgctx/kgctx/compose/codeindex/treesitter"
	"github.com/kgctx/kgctx/engine"
)

// Sink is where an index goes: the store offline, or a running server,
// scoped to one org and project. Deletes of what is already gone succeed.
type Sink interface {
	// Import upserts triplets (a nil weight keeps a learnt weight).
	Import(ctx context.Context, ts []engine.TripletInput) error
	// DeleteTriplet deletes one edge; its nodes stay.
	DeleteTriplet(ctx context.Context, source, relationship, target string) error
	// Node finds the project's node of that name (as the store looks a
	// name up: the exact name first, then the folded one): its id, type
	// and exactness; ok is false when there is none. Run deletes a node
	// only if it is of a kind the indexer writes, and trusts its state
	// only while the store holds the module's package node.
	Node(ctx context.Context, name string) (n NodeRef, ok bool, err error)
	// DeleteNode deletes the node of that id (as Node gave it) with its
	// edges and index entries.
	DeleteNode(ctx context.Context, id string) error
}

// NodeRef is what Sink.Node tells of a node.
type NodeRef struct {
	ID   string
	Type string
	// Exact: the node's name is exact (engine.Node.Exact), as every name
	// the indexer writes is.
	Exact bool
}

// kinds are the node types the indexer writes; relationships its edges.
var (
	kinds         = []string{KindPackage, KindFile, KindFunction, KindMethod, KindType, KindInterface}
	relationships = []string{RelContains, RelDefines, RelHasMethod, RelCalls, RelCallsIface, RelImplements, RelImplBy, RelEmbeds, RelUsesType, RelImports, RelTests, RelExtends}
)

// Relationships are the relationships the indexer writes, in every
// language (a copy).
func Relationships() []string { return slices.Clone(relationships) }

// Options of a run.
type Options struct {
	// Full ignores the previous state: every file is extracted again.
	Full bool
	// Since, when set, takes the changed files from git (`git diff
	// --name-only Since` and untracked files) instead of hashing.
	Since string
	// TypeCache, when set, is a file that keeps the imported packages'
	// declarations between runs (export data), so that a run after a
	// small change type-checks only what it reads. It is written 0600;
	// see PrepareStateDir for its directory.
	TypeCache string
	// NoTests leaves the _test.go files out: no test functions, no tests
	// edges. The state records it: changing it reads everything again.
	NoTests bool
	// ModulePath is the import path of a tree without go.mod (a
	// repository from before modules); go.mod's wins when there is one.
	ModulePath string
	// Binding is recorded in the state the run returns; a previous state
	// of another binding is not used.
	Binding Binding
	// Parsers, when set, parse the sources of other languages than Go
	// (the caller closes them); else the run starts its own when a source
	// needs parsing, with its compiled modules cached in ParserCache
	// ("" keeps them in memory): a directory no other user may write
	// (see PrepareStateDir), since it holds machine code the run executes.
	Parsers     *treesitter.Runtime
	ParserCache string
	// Warn, when set, hears what the run skips: each file over
	// MaxFileSize or not regular, once; the files and directories behind
	// symbolic links that leave the root, counted, once per run; the
	// nodes and edges a previous state named that the run keeps since
	// the indexer does not write their kinds.
	Warn func(msg string)
}

// Result sums up a run. After an error it counts what the run had
// written when it stopped.
type Result struct {
	Module          string
	Packages        int // packages in the module
	PackagesRead    int // packages extracted this run
	FilesRead       int
	FilesUnchanged  int
	Nodes, Triplets int // in the index after the run
	Imported        int // triplets sent
	DeletedTriplets int
	DeletedNodes    int
	Elapsed         time.Duration
	Full            bool // no usable previous state
	// WriteStarted: the run had begun writing when it stopped (through a
	// server, a request in flight may have been written).
	WriteStarted bool
	// Languages counts the files of each other language than Go in the
	// index (python, typescript, javascript, java, rust).
	Languages map[string]int
}

func (r Result) String() string {
	mode := "incremental"
	if r.Full {
		mode = "full"
	}
	langs := ""
	for _, l := range sortedKeys(r.Languages) {
		langs += fmt.Sprintf(", %d %s", r.Languages[l], l)
	}
	read := fmt.Sprintf("%d of %d packages", r.PackagesRead, r.Packages)
	switch {
	case langs != "" && r.Packages == 0:
		read = "files of" + strings.TrimPrefix(langs, ",")
	case langs != "":
		read += " and files of" + strings.TrimPrefix(langs, ",")
	}
	return fmt.Sprintf("indexed %s (%s): %s read (%d files, %d unchanged); %d nodes, %d triplets; %d triplets written, %d triplets and %d nodes deleted; %s",
		r.Module, mode, read, r.FilesRead, r.FilesUnchanged, r.Nodes, r.Triplets, r.Imported,
		r.DeletedTriplets, r.DeletedNodes, r.Elapsed.Round(time.Millisecond))
}

// Run indexes the module in dir into sink, incrementally from prev (nil:
// everything), and returns the new state to save.
//
// Nothing is written before the module is loaded, checked and extracted
// in full: an import cycle between its packages (ErrImportCycle), an
// unreadable file or a cancelled ctx stops the run with nothing written.
// ctx is checked at every stage (listing, parsing, type checking,
// extraction, each write); once it is done Run returns within moments
// with its error (a type check in progress is given up, not waited for).
// A run stopped while writing returns no state: the caller keeps the
// previous one, so the next run computes the same difference again and
// finishes the work (imports merge; deletes of what is gone succeed).
func Run(ctx context.Context, dir string, prev *State, sink Sink, o Options) (*State, Result, error) {
	start := time.Now()
	warn := o.Warn
	if warn == nil {
		warn = func(string) {}
	}
	m, err := readModule(ctx, dir, o.ModulePath, warn)
	noGo := errors.Is(err, ErrNotModule)
	if noGo {
		// No Go module: the tree is read for its other languages.
		m, err = bareModule(dir, warn)
	}
	if err != nil {
		return nil, Result{}, err
	}
	defer m.tree.report()
	src, err := listSources(ctx, m.tree)
	if err != nil {
		return nil, Result{}, err
	}
	if noGo && len(src.files) == 0 {
		return nil, Result{}, fmt.Errorf("%w, nor a source of another language read (Python, TypeScript, JavaScript, Java, Rust): %s", ErrNotModule, dir)
	}
	if noGo && src.goFiles > 0 {
		warn(fmt.Sprintf("%d .go files not read: %s has no go.mod (give the module's import path to read them)", src.goFiles, dir))
	}
	lr := &langRun{t: m.tree, warn: warn, o: o}
	defer lr.close()
	defer lr.report()
	res := Result{Module: m.Path, Packages: len(m.Pkgs)}
	if noGo {
		res.Module = filepath.Base(m.Root)
	}
	if prev != nil && (o.Full || prev.Module != m.Path || prev.NoTests != o.NoTests || prev.Binding != o.Binding) {
		prev = nil
	}
	// A state of the version that folded names: its nodes are deleted
	// (those still there, of the indexer's kinds, with folded names) and
	// the module indexed afresh, so that no folded node stays beside its
	// exact namesake. The deletes all come before the first import, so a
	// run interrupted at any point leaves the legacy state to the next
	// run, which finds the same folded nodes.
	var legacy []string
	if prev != nil && prev.Version == legacyVersion {
		legacy, prev = prev.Written, nil
	}
	if prev != nil {
		marker := prev.Marker
		if len(prev.Pkgs) > 0 || marker == "" {
			marker = prev.rootName(m)
		}
		n, ok, err := sink.Node(ctx, marker)
		if err != nil {
			return nil, res, err
		}
		if !ok || n.Type != KindPackage || !n.Exact {
			prev = nil // the graph was cleared, or this is another store
		}
	}
	res.Full = prev == nil
	l := newLoader(ctx, m)
	l.noTests = o.NoTests
	if o.TypeCache != "" {
		l.cache = openTypeCache(o.TypeCache)
	}
	changed, err := changedPackages(ctx, m, prev, o.Since)
	if err != nil {
		return nil, res, err
	}
	next := &State{Version: stateVersion, Binding: o.Binding, Module: m.Path, NoTests: o.NoTests, Pkgs: map[string]*pkgFacts{}}
	if prev != nil {
		for p, f := range prev.Pkgs {
			if slices.Contains(m.Pkgs, m.relDir(p)) {
				next.Pkgs[p] = f
			}
		}
	}
	parsed, err := l.parsePackages(changed)
	if err != nil {
		return nil, res, err
	}
	for _, rel := range changed {
		delete(next.Pkgs, m.importPath(rel))
	}
	for _, p := range parsed {
		c, err := l.checkCtx(p)
		if err != nil {
			return nil, res, err
		}
		next.Pkgs[m.importPath(p.Rel)] = l.extract(c)
		res.FilesRead += len(p.Files) + len(p.XTest)
	}
	if err := l.failed(); err != nil {
		return nil, res, err
	}
	res.PackagesRead = len(parsed)
	files, read, kept, err := lr.langFiles(ctx, src, prev, o.Since)
	if err != nil {
		return nil, res, err
	}
	next.Files, next.Crates, next.LangVersion = files, src.crates, langs.Version
	res.FilesRead += read
	res.FilesUnchanged += kept
	for _, f := range files {
		if res.Languages == nil {
			res.Languages = map[string]int{}
		}
		res.Languages[f.Lang]++
	}
	// implements depends on every package's declarations: computed again
	// when any package was read, else kept.
	if prev != nil && len(changed) == 0 {
		next.Impl = prev.Impl
	} else {
		next.Impl = l.implements()
		if err := l.failed(); err != nil {
			return nil, res, err
		}
	}
	if err := l.cache.save(); err != nil {
		return nil, res, fmt.Errorf("type cache: %w", err)
	}
	for p, f := range next.Pkgs {
		if !slices.Contains(changed, m.relDir(p)) {
			res.FilesUnchanged += len(f.Files)
		}
	}
	ts := next.triplets(m)
	res.Triplets = len(ts)
	keys := make([]string, len(ts))
	written := make([]string, len(ts))
	live := map[string]bool{}
	nodes := map[string]bool{}
	for i, t := range ts {
		keys[i] = t.Source + "\x00" + t.Relationship + "\x00" + t.Target
		written[i] = keys[i] + "\x00" + t.fingerprint()
		live[keys[i]] = true
		nodes[t.Source] = true
		nodes[t.Target] = true
	}
	sort.Strings(written)
	next.Written = written
	res.Nodes = len(nodes)

	// What to send: the triplets new since the last run, and those whose
	// endpoints' types, descriptions or aliases changed. What stays keeps
	// its learnt weight: Weight is never set.
	var send []engine.TripletInput
	before := map[string]string{} // key -> fingerprint
	if prev != nil {
		for _, w := range prev.Written {
			k, fp := splitWritten(w)
			before[k] = fp
		}
	}
	for i, t := range ts {
		if fp, ok := before[keys[i]]; !ok || fp != t.fingerprint() {
			send = append(send, t.TripletInput)
		}
	}
	// Vanished: nodes no triplet names any more go with their edges;
	// vanished triplets between nodes that stay go alone. Only what the
	// indexer writes is deleted: a triplet of another relationship, or a
	// node of another type (one a person imported, which a state could
	// name), stays.
	var goneNodes []string
	var goneTriplets [][3]string
	var keptTriplets int
	var firstKept string
	seenGone := map[string]bool{}
	for _, w := range legacy {
		k, _ := splitWritten(w)
		parts := strings.SplitN(k, "\x00", 3)
		if len(parts) != 3 || !slices.Contains(relationships, parts[1]) {
			continue
		}
		for _, n := range []string{parts[0], parts[2]} {
			if !seenGone[n] {
				seenGone[n] = true
				goneNodes = append(goneNodes, n)
			}
		}
	}
	if prev != nil {
		for _, w := range prev.Written {
			k, _ := splitWritten(w)
			if live[k] {
				continue
			}
			parts := strings.SplitN(k, "\x00", 3)
			if len(parts) != 3 {
				continue
			}
			if !slices.Contains(relationships, parts[1]) {
				keptTriplets++
				if firstKept == "" {
					firstKept = parts[0] + " " + parts[1] + " " + parts[2]
				}
				continue
			}
			srcLive, dstLive := nodes[parts[0]], nodes[parts[2]]
			for i, alive := range []bool{srcLive, dstLive} {
				n := parts[2*i]
				if !alive && !seenGone[n] {
					seenGone[n] = true
					goneNodes = append(goneNodes, n)
				}
			}
			if srcLive && dstLive {
				goneTriplets = append(goneTriplets, [3]string{parts[0], parts[1], parts[2]})
			}
		}
	}
	// begin is called before each write: it stops a cancelled run.
	begin := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		res.WriteStarted = true
		return nil
	}
	for _, g := range goneTriplets {
		if err := begin(); err != nil {
			return nil, res, err
		}
		if err := sink.DeleteTriplet(ctx, g[0], g[1], g[2]); err != nil {
			return nil, res, fmt.Errorf("delete %s %s %s: %w", g[0], g[1], g[2], err)
		}
		res.DeletedTriplets++
	}
	var keptNodes int
	for _, name := range goneNodes {
		if err := ctx.Err(); err != nil {
			return nil, res, err
		}
		n, ok, err := sink.Node(ctx, name)
		if err != nil {
			return nil, res, fmt.Errorf("look up node %s: %w", name, err)
		}
		if !ok {
			continue
		}
		if legacy != nil && n.Exact {
			continue // this build's node: the legacy state's were folded
		}
		// Only a node of the indexer's kinds goes, and (but for a legacy
		// state's) only one of an exact name: the lookup falls back to a
		// folded name, which may be a person's node.
		if !slices.Contains(kinds, n.Type) || legacy == nil && !n.Exact {
			keptNodes++
			if firstKept == "" {
				firstKept = name
			}
			continue
		}
		if err := begin(); err != nil {
			return nil, res, err
		}
		if err := sink.DeleteNode(ctx, n.ID); err != nil {
			return nil, res, fmt.Errorf("delete node %s: %w", name, err)
		}
		res.DeletedNodes++
	}
	if keptNodes+keptTriplets > 0 {
		warn(fmt.Sprintf("kept %d nodes and %d triplets that the previous state named but that are not of the kinds the indexer writes (the first: %s)",
			keptNodes, keptTriplets, firstKept))
	}
	// A batch is what an interruption waits for (the store's import
	// takes no ctx): 5,000 triplets take a fraction of a second.
	const batch = 5_000
	for i := 0; i < len(send); i += batch {
		if err := begin(); err != nil {
			return nil, res, err
		}
		b := send[i:min(i+batch, len(send))]
		if err := sink.Import(ctx, b); err != nil {
			return nil, res, err
		}
		res.Imported += len(b)
	}
	res.Elapsed = time.Since(start)
	return next, res, nil
}

// rootName is the name of the module's root package node (the marker
// that the store still holds this index).
func (s *State) rootName(m *module) string {
	nm := s.namer()
	if _, ok := s.Pkgs[m.Path]; ok {
		return nm.pkgName(m.Path)
	}
	for _, p := range sortedKeys(s.Pkgs) {
		return nm.pkgName(p)
	}
	return m.Path
}

// changedPackages lists the module's package directories to read: all
// without a previous state; else those with a file added, changed or
// removed (by content hash, or by git with since).
func changedPackages(ctx context.Context, m *module, prev *State, since string) ([]string, error) {
	if prev == nil {
		return m.Pkgs, nil
	}
	var out []string
	if since != "" {
		files, err := gitChanged(ctx, m.Root, since)
		if err != nil {
			return nil, err
		}
		dirs := map[string]bool{}
		for _, f := range files {
			if strings.HasSuffix(f, ".go") {
				dirs[path.Dir(f)] = true
			}
		}
		for _, rel := range m.Pkgs {
			if dirs[rel] || prev.Pkgs[m.importPath(rel)] == nil {
				out = append(out, rel)
			}
		}
		return out, nil
	}
	for _, rel := range m.Pkgs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pf := prev.Pkgs[m.importPath(rel)]
		h, err := dirHash(m.tree, filepath.Join(m.Root, filepath.FromSlash(rel)))
		if pf == nil || err != nil || h != pf.DirHash {
			out = append(out, rel)
		}
	}
	return out, nil
}

// gitChanged lists the module-relative files changed since rev: committed
// since, in the work tree, and untracked.
func gitChanged(ctx context.Context, root, rev string) ([]string, error) {
	run := func(args ...string) ([]string, error) {
		// The repository is untrusted: its config must not make git run a
		// program of its choosing (core.fsmonitor is run by status-like
		// commands, diff among them).
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root, "-c", "core.fsmonitor=false"}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				// git's first line says what is wrong; the rest is usage.
				msg, _, _ := strings.Cut(strings.TrimSpace(string(ee.Stderr)), "\n")
				return nil, fmt.Errorf("--since %s: git %s: %s", rev, args[0], strings.TrimSpace(msg))
			}
			return nil, fmt.Errorf("--since needs git: %w", err)
		}
		return strings.Fields(string(out)), nil
	}
	if in, err := run("rev-parse", "--is-inside-work-tree"); err != nil || len(in) != 1 || in[0] != "true" {
		return nil, fmt.Errorf("--since %s: %s is not in a git work tree (--since takes the changed files from git; without it every file is hashed)", rev, root)
	}
	a, err := run("diff", "--name-only", "--relative", rev, "--")
	if err != nil {
		return nil, err
	}
	b, err := run("ls-files", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	return append(a, b...), nil
}

// splitWritten splits a State.Written entry into its triplet key and its
// fingerprint.
func splitWritten(w string) (key, fp string) {
	i := strings.LastIndexByte(w, 0)
	return w[:i], w[i+1:]
}

// fingerprint hashes what an import of t would change besides the edge.
func (t *triplet) fingerprint() string {
	h := sha256.New()
	for _, s := range []string{t.SourceType, t.TargetType, t.SourceDescription, t.TargetDescription, strings.Join(t.SourceAliases, "\x01"), strings.Join(t.TargetAliases, "\x01"),
		locString(t.SourceLocation), locString(t.TargetLocation), t.SourceSignature, t.TargetSignature} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

func locString(l *engine.Location) string {
	if l == nil {
		return ""
	}
	return l.File + ":" + strconv.Itoa(l.Line) + "-" + strconv.Itoa(l.EndLine)
}

// triplet is a triplet to write and the package that states it.
type triplet struct {
	engine.TripletInput
	pkg string
}

// triplets renders the state's edges with names, and adds implements.
func (s *State) triplets(m *module) []triplet {
	nm := s.namer()
	var out []triplet
	seen := map[[3]string]bool{}
	emit := func(pkg, src, rel, dst string) {
		k := [3]string{src, rel, dst}
		if seen[k] {
			return
		}
		seen[k] = true
		sn, dn := nm.node(src), nm.node(dst)
		t := engine.TripletInput{Source: nm.name(src), Relationship: rel, Target: nm.name(dst),
			SourceType: sn.Kind, TargetType: dn.Kind, SourceDescription: sn.Desc, TargetDescription: dn.Desc,
			SourceExact: true, TargetExact: true, SourceLocation: sn.location(), TargetLocation: dn.location(),
			SourceSignature: sn.Sig, TargetSignature: dn.Sig}
		if sn.Kind == KindPackage && sn.Pkg != "" {
			t.SourceAliases = []string{sn.Pkg}
		}
		if dn.Kind == KindPackage && dn.Pkg != "" {
			t.TargetAliases = []string{dn.Pkg}
		}
		out = append(out, triplet{TripletInput: t, pkg: pkg})
	}
	for _, p := range sortedKeys(s.Pkgs) {
		pf := s.Pkgs[p]
		for _, f := range sortedKeys(pf.Files) {
			for _, e := range pf.Files[f].Edges {
				if nm.known(e[0]) && nm.known(e[2]) {
					emit(p, e[0], e[1], e[2])
				}
			}
		}
	}
	for _, e := range s.Impl {
		if nm.known(e[0]) && nm.known(e[2]) {
			emit(e[3], e[0], e[1], e[2])
		}
	}
	// The other languages' modules are named apart from Go's packages.
	taken := map[string]bool{}
	for _, t := range out {
		if t.SourceType == KindPackage {
			taken[t.Source] = true
		}
		if t.TargetType == KindPackage {
			taken[t.Target] = true
		}
	}
	lt, marker := s.langTriplets(taken)
	out = append(out, lt...)
	if len(s.Pkgs) == 0 {
		s.Marker = marker
	}
	return out
}

// location is where the node is declared, if known.
func (n node) location() *engine.Location {
	if n.File == "" || n.Line < 1 {
		return nil
	}
	return &engine.Location{File: n.File, Line: n.Line, EndLine: max(n.End, n.Line)}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// namer gives every id its name. A package is named by its package name,
// or by its module-relative directory when two packages share a name (the
// root package by its name); a symbol by its package's name and its own
// (pkg.Func, pkg.Type.Method, pkg.init@file.go); a file by its
// module-relative path. Names are exact (engine.TripletInput.SourceExact):
// Execute and execute are two nodes, named as the source names them.
type namer struct {
	s     *State
	nodes map[string]node
	pkgs  map[string]string // import path -> package name
}

func (s *State) namer() *namer {
	nm := &namer{s: s, nodes: map[string]node{}, pkgs: map[string]string{}}
	byName := map[string][]string{}
	// In a fixed order, so that a symbol declared by several files (one
	// per platform) is described the same way by every run: by a file of
	// this platform, else by the first in path order.
	for _, p := range sortedKeys(s.Pkgs) {
		pf := s.Pkgs[p]
		byName[pf.Name] = append(byName[pf.Name], p)
		for _, fn := range sortedKeys(pf.Files) {
			for id, n := range pf.Files[fn].Nodes {
				old, ok := nm.nodes[id]
				if !ok || old.Other && !n.Other || old.Other == n.Other && old.Desc == "" && n.Desc != "" {
					nm.nodes[id] = n
				}
			}
		}
	}
	mod := s.Module
	for name, paths := range byName {
		for _, p := range paths {
			if len(paths) == 1 || p == mod {
				nm.pkgs[p] = name
			} else {
				nm.pkgs[p] = strings.TrimPrefix(p, mod+"/")
			}
		}
	}
	return nm
}

// known says whether an id names something the graph keeps: the module's
// symbols (declared by a file read), files, and packages.
func (nm *namer) known(id string) bool {
	if strings.HasPrefix(id, "pkg:") || strings.HasPrefix(id, "file:") {
		return true
	}
	_, ok := nm.nodes[id]
	return ok
}

func (nm *namer) node(id string) node {
	if n, ok := nm.nodes[id]; ok {
		return n
	}
	if p, ok := strings.CutPrefix(id, "pkg:"); ok {
		return node{Kind: KindPackage, Pkg: p}
	}
	return node{Kind: KindFile}
}

func (nm *namer) pkgName(path string) string {
	if n, ok := nm.pkgs[path]; ok {
		return n
	}
	return path // not the module's: its import path
}

func (nm *namer) base(id string) string {
	if p, ok := strings.CutPrefix(id, "pkg:"); ok {
		return nm.pkgName(p)
	}
	if f, ok := strings.CutPrefix(id, "file:"); ok {
		return f
	}
	n := nm.nodes[id]
	return nm.pkgName(n.Pkg) + "." + n.Base
}

func (nm *namer) name(id string) string { return nm.base(id) }

// Extract indexes the module in dir from scratch and returns its
// triplets, writing nothing.
func Extract(ctx context.Context, dir string, o Options) ([]engine.TripletInput, error) {
	var c collector
	_, _, err := Run(ctx, dir, nil, &c, o)
	return c.ts, err
}

// collector is the Sink of Extract.
type collector struct{ ts []engine.TripletInput }

func (c *collector) Import(_ context.Context, ts []engine.TripletInput) error {
	c.ts = append(c.ts, ts...)
	return nil
}
func (c *collector) DeleteTriplet(context.Context, string, string, string) error { return nil }
func (c *collector) DeleteNode(context.Context, string) error                    { return nil }
func (c *collector) Node(context.Context, string) (NodeRef, bool, error) {
	return NodeRef{}, false, nil
}
