package relevance

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"

	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/codeindex"
	"github.com/kgctx/kgctx/compose/codeindex/langs"
	"github.com/kgctx/kgctx/compose/codeindex/treesitter"
	"github.com/kgctx/kgctx/engine"
)

// The "codelangs" family is codeindex's question for other languages
// than Go: for each CodeSet (three Python and three TypeScript public
// repositories), the commits after a snapshot are work items (subject and
// first body line), and the functions and methods each commit changed,
// as they stood at the snapshot, are its gold; the snapshot is indexed by
// `kgctx index`'s extractor and asked like codeindex's repositories
// (kgctx's graph and session blocks, BM25 over the same triplets, the
// Aider-style repo map of the same source, its tags from each grammar's
// tags.scm). One set per language: codelangs-python,
// codelangs-typescript.
//
// The sets are built from the repositories' history (BuildCodeSet), never
// shipped with their code: a set file holds names, paths, commit ids and
// subjects. `go run ./bench/relevance/build_codesets.go` writes them to the
// shared datasets folder (codelangs/); a bench run reads them from there,
// or builds them into the user cache directory when they are missing.

// CodeSet is one repository of the codelangs family.
type CodeSet struct {
	Name string // project name, and the folder under Config.CodeSrc
	Repo string // owner/name on GitHub
	Lang string // python, typescript (TypeScript sets read JavaScript too) or go
	// Snapshot is the commit indexed; the work items are the first-parent
	// commits after it up to Until (each merge taken whole, against its
	// first parent), the first Commits of them that change a function or
	// method the snapshot declares.
	Snapshot, Until string
	Commits         int
}

// CodeSets are the codelangs repositories: none of them is among the
// held-out repositories kgctx is judged on.
var CodeSets = []CodeSet{
	{Name: "click", Repo: "pallets/click", Lang: "python", Snapshot: "72a18ae6bbe69a69ae8b71b5990e18cd5ae5539d", Until: "2c8cd3ac958a7eb316d67f2d316c27086c4c0369", Commits: 100},
	{Name: "starlette", Repo: "encode/starlette", Lang: "python", Snapshot: "d29d9938aa36764fdc13e7a841a76fec01db5d1c", Until: "cb8f84f5284dc301ca7a31eb732b9e140769dd48", Commits: 100},
	{Name: "rich", Repo: "Textualize/rich", Lang: "python", Snapshot: "b89d0362e8ebcb18902f0f0a206879f1829b5c0b", Until: "42899d8a0a96b121a514516f4be9db44ff7aeaf3", Commits: 100},
	{Name: "got", Repo: "sindresorhus/got", Lang: "typescript", Snapshot: "53513ce3ca09258b575496a3f9899c7d0f6ab6ea", Until: "d00d845a0b435365ec73ea5a1fca6e17ee677184", Commits: 100},
	{Name: "immer", Repo: "immerjs/immer", Lang: "typescript", Snapshot: "fa671e55ee9bd42ae08cc239102b665a23958237", Until: "061c2425e1c9dff89e4e4189d42af1b7839dfe0a", Commits: 100},
	{Name: "vue", Repo: "vuejs/core", Lang: "typescript", Snapshot: "ed28dd22449bb259cb064a27bb61ba26beec0b7b", Until: "e2bede96134f757aad5c5b33ac9be055022dbfc8", Commits: 100},
}

// GoSets are the codego family's repositories: Go modules whose work
// items are built from their history as the codelangs sets' are (the
// codeindex set's are codeloc's, built elsewhere). nats.go is the module
// of issue 21's report; it is not among the held-out repositories.
var GoSets = []CodeSet{
	{Name: "nats", Repo: "nats-io/nats.go", Lang: "go", Snapshot: "3d0a13a355de2dbba5fe2c516db14b8b5e7bc9c8", Until: "850f889cf3d63bfd1a549ab9af59f0145146fb41", Commits: 100},
}

// CodeLangsDir is the datasets folder of the built sets.
const CodeLangsDir = "codelangs"

// ErrNoCodeGoSrc: the codego family needs the repositories.
var ErrNoCodeGoSrc = errors.New("relevance: the codego set needs --code-src DIR with a git repository per GoSets repository (DIR/nats: nats-io/nats.go)")

// ErrNoCodeLangsSrc: the codelangs family needs the repositories.
var ErrNoCodeLangsSrc = errors.New("relevance: the codelangs sets need --code-src DIR with a git repository per CodeSets repository (DIR/click, DIR/starlette, DIR/rich, DIR/got, DIR/immer, DIR/vue)")

// inFamily says whether a file is of a set's language.
func (cs CodeSet) inFamily(p string) bool {
	if cs.Lang == "go" {
		// Go's tests live in _test.go files: no gold, as codeloc's.
		return strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go")
	}
	l := langs.LanguageOf(p)
	if cs.Lang == "typescript" {
		return l == "typescript" || l == "javascript"
	}
	return l == cs.Lang
}

// git runs git on the repository at gitDir (a work tree or a bare
// repository) and returns its output.
func git(ctx context.Context, repo string, args ...string) (string, error) {
	gitDir := repo
	if fi, err := os.Stat(filepath.Join(repo, ".git")); err == nil && fi.IsDir() {
		gitDir = filepath.Join(repo, ".git")
	}
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir", gitDir}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// hunks reads `git diff -U0` output: each old file's changed line ranges
// [first, last]; a pure insertion after line a is [a, a] marked by last
// = -a (it changes what spans lines a and a+1).
func hunks(diff string) map[string][][2]int {
	out := map[string][][2]int{}
	file := ""
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "--- "):
			file = ""
			if p, ok := strings.CutPrefix(l, "--- a/"); ok {
				file = p
			}
		case strings.HasPrefix(l, "@@ -") && file != "":
			spec, _, _ := strings.Cut(strings.TrimPrefix(l, "@@ -"), " ")
			a, b, hasCount := strings.Cut(spec, ",")
			start, err := strconv.Atoi(a)
			if err != nil {
				continue
			}
			n := 1
			if hasCount {
				if n, err = strconv.Atoi(b); err != nil {
					continue
				}
			}
			if n == 0 {
				out[file] = append(out[file], [2]int{start, -start})
			} else {
				out[file] = append(out[file], [2]int{start, start + n - 1})
			}
		}
	}
	return out
}

// touches says whether a change range touches the span [line, end].
func touches(r [2]int, line, end int) bool {
	if r[1] < 0 { // insertion after line r[0]: inside the span if both neighbours are
		return line <= r[0] && r[0] < end
	}
	return r[0] <= end && r[1] >= line
}

// BuildCodeSet builds a codelangs repository's questions from its git
// repository: the snapshot indexed (into tmp) by `kgctx index`'s
// extractor with rt, then each commit's diff against its first parent,
// the changed files' old versions extracted alone to find the functions
// and methods (tests aside) whose lines the commit changed; those the
// snapshot declares, named as the snapshot's index names them, are the
// gold, with the changed files the snapshot holds.
func BuildCodeSet(ctx context.Context, cs CodeSet, repo, tmp string, rt *treesitter.Runtime) (*codeRepo, error) {
	src, err := snapshot(ctx, repo, cs.Snapshot, filepath.Join(tmp, cs.Name+"-build"))
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(src)
	ts, err := codeindex.Extract(ctx, src, codeindex.Options{Parsers: rt})
	if err != nil {
		return nil, fmt.Errorf("index %s at %s: %w", cs.Name, cs.Snapshot, err)
	}
	qual := map[string]string{} // file -> its module's name
	kind := map[string]string{} // symbol -> kind
	// A Go file's functions and methods by their name in the file
	// (Func, Type.Method), since a Go symbol's qualifier is its package's
	// name, which the file alone does not say.
	goNames := map[string]map[string]string{}
	for _, t := range ts {
		if t.Relationship == codeindex.RelContains && t.SourceType == codeindex.KindPackage && t.TargetType == codeindex.KindFile {
			qual[t.Target] = t.Source
		}
		if t.Relationship == codeindex.RelDefines && t.SourceType == codeindex.KindFile {
			kind[t.Target] = t.TargetType
			if k := t.TargetType; cs.Lang == "go" && (k == codeindex.KindFunction || k == codeindex.KindMethod) {
				if goNames[t.Source] == nil {
					goNames[t.Source] = map[string]string{}
				}
				_, inFile, _ := strings.Cut(t.Target, ".")
				goNames[t.Source][inFile] = t.Target
			}
		}
	}
	out, err := git(ctx, repo, "rev-list", "--first-parent", "--reverse", cs.Snapshot+".."+cs.Until)
	if err != nil {
		return nil, err
	}
	r := &codeRepo{Name: cs.Name, Repo: cs.Repo, Snapshot: cs.Snapshot, Version: langs.Version}
	index := map[string]int{}
	node := func(name, typ string) int {
		if i, ok := index[name]; ok {
			return i
		}
		index[name] = len(r.Nodes)
		r.Nodes = append(r.Nodes, codeNode{N: name, T: typ})
		return index[name]
	}
	for _, c := range strings.Fields(out) {
		if len(r.Queries) >= cs.Commits {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		msg, err := git(ctx, repo, "log", "-1", "--format=%s%x00%b", c)
		if err != nil {
			return nil, err
		}
		subject, body, _ := strings.Cut(strings.TrimSpace(msg), "\x00")
		body, _, _ = strings.Cut(strings.TrimSpace(body), "\n")
		diff, err := git(ctx, repo, "diff", "-U0", "--no-renames", "--no-color", c+"^1", c)
		if err != nil {
			return nil, err
		}
		q := codeQuery{Q: cs.Name + "-" + c[:10], C: c, S: subject, B: strings.TrimSpace(body)}
		changed := hunks(diff)
		for _, f := range sortedStrings(changed) {
			if !cs.inFamily(f) || qual[f] == "" {
				continue
			}
			fi := node(f, "file")
			q.GF = append(q.GF, fi)
			old, err := git(ctx, repo, "show", c+"^1:"+f)
			if err != nil || len(old) > codeindex.MaxFileSize {
				continue
			}
			var syms []funcSpan
			if cs.Lang == "go" {
				syms = goFuncs(f, old, goNames[f])
			} else if facts, err := langs.Extract(ctx, rt, f, []byte(old)); err == nil {
				for _, s := range facts.Syms {
					if !s.Test && (s.Kind == langs.KindFunction || s.Kind == langs.KindMethod) {
						syms = append(syms, funcSpan{name: qual[f] + "." + s.Base, line: s.Line, end: s.End})
					}
				}
			}
			for _, s := range syms {
				if k := kind[s.name]; k != codeindex.KindFunction && k != codeindex.KindMethod {
					continue
				}
				if !slices.ContainsFunc(changed[f], func(h [2]int) bool { return touches(h, s.line, s.end) }) {
					continue
				}
				gi := node(s.name, kind[s.name])
				if !slices.Contains(q.G, gi) {
					q.G = append(q.G, gi)
					r.Edges = append(r.Edges, codeEdge{Src: fi, Rel: codeindex.RelDefines, Dst: gi})
				}
			}
		}
		if len(q.G) > 0 {
			r.Queries = append(r.Queries, q)
		}
	}
	return r, nil
}

// funcSpan is a function or method of a file before a commit: its node
// name in the snapshot's graph and its line span.
type funcSpan struct {
	name      string
	line, end int
}

// goFuncs returns the functions and methods of Go file f's source src
// that the snapshot's graph names (names: by their name in the file,
// Func or Type.Method).
func goFuncs(f, src string, names map[string]string) []funcSpan {
	fset := token.NewFileSet()
	af, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var out []funcSpan
	for _, d := range af.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		inFile := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			recv := codeindex.ReceiverName(fd.Recv.List[0].Type)
			if recv == "" {
				continue
			}
			inFile = recv + "." + inFile
		}
		if name := names[inFile]; name != "" {
			out = append(out, funcSpan{name: name, line: fset.Position(fd.Pos()).Line, end: fset.Position(fd.End()).Line})
		}
	}
	return out
}

func sortedStrings[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// WriteCodeSet writes a built repository as a codeloc-format JSON lines
// file, gzipped (loadCodeRepo reads it).
func WriteCodeSet(file string, r *codeRepo) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	zw := gzip.NewWriter(f)
	bw := bufio.NewWriter(zw)
	enc := json.NewEncoder(bw)
	recs := []any{map[string]any{"h": map[string]any{"repo": r.Repo, "snapshot": r.Snapshot, "v": r.Version}}}
	for _, n := range r.Nodes {
		recs = append(recs, map[string]any{"node": n})
	}
	for _, e := range r.Edges {
		recs = append(recs, map[string]any{"e": []any{e.Src, e.Rel, e.Dst}})
	}
	for _, q := range r.Queries {
		recs = append(recs, map[string]any{"query": q})
	}
	for _, rec := range recs {
		if err := enc.Encode(rec); err != nil {
			f.Close()
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), file)
}

// codeSetFile is the set file of cs: the datasets folder's when it holds
// one of this snapshot and extraction version, else the user cache directory's, built there
// from the repository when missing.
func codeSetFile(ctx context.Context, cfg *Config, dir string, cs CodeSet, tmp string, rt *treesitter.Runtime) (*codeRepo, error) {
	name := cs.Name + ".jsonl"
	fresh := func(r *codeRepo) bool { return r.Snapshot == cs.Snapshot && r.Version == langs.Version }
	if r, err := loadCodeRepo(filepath.Join(dir, CodeLangsDir), name); err == nil && fresh(r) {
		return r, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = tmp
	}
	cdir := filepath.Join(cache, "kgctx", "codelangs", fmt.Sprintf("v%d", langs.Version))
	if r, err := loadCodeRepo(cdir, name); err == nil && fresh(r) {
		return r, nil
	}
	cfg.say("codelangs: building %s's questions from its history (into %s)", cs.Name, cdir)
	r, err := BuildCodeSet(ctx, cs, filepath.Join(cfg.CodeSrc, cs.Name), tmp, rt)
	if err != nil {
		return nil, err
	}
	if err := WriteCodeSet(filepath.Join(cdir, name+".gz"), r); err != nil {
		return nil, err
	}
	return r, nil
}

func runCodeLangs(ctx context.Context, cfg *Config, dir string) ([]SetResult, error) {
	if cfg.CodeSrc == "" {
		return nil, ErrNoCodeLangsSrc
	}
	return runCodeSets(ctx, cfg, dir, "codelangs", CodeSets, []string{"python", "typescript"})
}

func runCodeGo(ctx context.Context, cfg *Config, dir string) ([]SetResult, error) {
	if cfg.CodeSrc == "" {
		return nil, ErrNoCodeGoSrc
	}
	return runCodeSets(ctx, cfg, dir, "codego", GoSets, []string{"go"})
}

// runCodeSets evaluates family's sets of each language (a set per
// language: family-lang, or family alone for one language).
func runCodeSets(ctx context.Context, cfg *Config, dir, family string, all []CodeSet, languages []string) ([]SetResult, error) {
	rt, err := treesitter.New(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer rt.Close(context.Background())
	tmp, err := os.MkdirTemp("", "kgctx-"+family+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	var out []SetResult
	for _, lang := range languages {
		e, err := openEnv(ctx, cfg)
		if err != nil {
			return nil, err
		}
		var repos []*codeRepo
		var sets []CodeSet
		for _, cs := range all {
			if cs.Lang != lang {
				continue
			}
			r, err := codeSetFile(ctx, cfg, dir, cs, tmp, rt)
			if err != nil {
				e.close()
				return nil, fmt.Errorf("%s: %w", cs.Name, err)
			}
			repos, sets = append(repos, r), append(sets, cs)
		}
		name := family
		if len(languages) > 1 {
			name += "-" + lang
		}
		res, err := evalCodeRepos(ctx, cfg, e, name, family, repos, func(i int, r *codeRepo) (string, error) {
			return snapshot(ctx, filepath.Join(cfg.CodeSrc, sets[i].Name), r.Snapshot, filepath.Join(tmp, r.Name))
		}, codeindex.Options{Parsers: rt}, rt)
		e.close()
		if err != nil {
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

var dataOf = map[string]string{
	"codeindex": "codeloc's questions over `kgctx index` of each snapshot",
	"codelangs": "commits of the CodeSets repositories over `kgctx index` of each snapshot",
	"codego":    "commits of the GoSets repositories over `kgctx index` of each snapshot",
}

// evalCodeRepos indexes each repository's snapshot (src gives its tree)
// with o, loads it into e, builds the repo map of the same tree (its
// other languages tagged by rt, nil for Go only), and asks every system
// the repositories' questions.
func evalCodeRepos(ctx context.Context, cfg *Config, e *env, name, family string, repos []*codeRepo,
	src func(int, *codeRepo) (string, error), o codeindex.Options, rt *treesitter.Runtime) (SetResult, error) {
	var all []question
	var desc []string
	maps := map[engine.Tenant]*repoMap{}
	for i, r := range repos {
		dir, err := src(i, r)
		if err != nil {
			return SetResult{}, fmt.Errorf("%s: %w", r.Name, err)
		}
		t0 := time.Now()
		opts := o
		if r.Module != "" || family == "codeindex" {
			opts.ModulePath = r.Module
			if opts.ModulePath == "" {
				opts.ModulePath = "github.com/" + r.Repo // a repository from before modules
			}
		}
		ts, err := codeindex.Extract(ctx, dir, opts)
		if err != nil {
			return SetResult{}, fmt.Errorf("index %s at %s: %w", r.Name, r.Snapshot, err)
		}
		t, err := e.load(ctx, r.Name+"-index", ts)
		if err != nil {
			return SetResult{}, err
		}
		if maps[t], err = newRepoMapLangs(ctx, dir, rt); err != nil {
			return SetResult{}, fmt.Errorf("repo map of %s: %w", r.Name, err)
		}
		cfg.say("%s: %s indexed (%d triplets) in %.1f s", name, r.Name, len(ts), time.Since(t0).Seconds())
		desc = append(desc, fmt.Sprintf("%s %d triplets, %d files", r.Name, len(ts), len(maps[t].files)))
		members, funcFiles := membersOf(ts), r.funcFiles()
		for _, cq := range r.Queries {
			q := question{ID: cq.Q, Text: strings.TrimSpace(cq.S + " " + cq.B), Scope: t}
			for _, g := range cq.G {
				q.Funcs = append(q.Funcs, r.Nodes[g].N)
				q.FuncFiles = append(q.FuncFiles, funcFiles[g])
			}
			for _, g := range cq.GF {
				key := r.Nodes[g].N
				q.Files = append(q.Files, goldFile{Key: key, Members: members[key]})
			}
			all = append(all, q)
		}
	}
	idx := pick(len(all), cfg.Questions, cfg.Seed, 300)
	s := &set{name: name, family: family, metrics: []string{"function recall", "file recall", "precision"},
		data: fmt.Sprintf("%s: %d of %d commits; %s", dataOf[family], len(idx), len(all), strings.Join(desc, ", ")),
		score: func(q *question, b *blockOut) []float64 {
			fn, file, prec := codeBlockScores(q, b)
			return []float64{fn, file, prec}
		}}
	for _, i := range idx {
		s.qs = append(s.qs, all[i])
	}
	repoMapSys := system{name: BaseRepoMap, kind: "graph", budgets: CodeIndexBudgets, run: func(_ context.Context, q *question) ([]blockOut, []time.Duration, error) {
		m := maps[q.Scope]
		t := time.Now()
		ranked := m.rank(q.Text)
		rank := time.Since(t)
		outs, lats := make([]blockOut, len(CodeIndexBudgets)), make([]time.Duration, len(CodeIndexBudgets))
		for i, b := range CodeIndexBudgets {
			t := time.Now()
			outs[i] = m.fit(ranked, b)
			lats[i] = rank + time.Since(t)
		}
		return outs, lats, nil
	}}
	systems := []system{e.kgctxGraph(compose.DefaultDepth, CodeIndexBudgets), e.kgctxSession(CodeIndexBudgets),
		e.graphBaseline(BaseBM25Triplets, CodeIndexBudgets), repoMapSys}
	return evaluate(ctx, cfg, s, systems)
}

// Describe sums up a built repository: its questions and gold.
func Describe(r *codeRepo) string {
	g, f := 0, 0
	for _, q := range r.Queries {
		g += len(q.G)
		f += len(q.GF)
	}
	return fmt.Sprintf("%s at %.10s: %d questions, %d gold functions, %d gold files", r.Repo, r.Snapshot, len(r.Queries), g, f)
}
