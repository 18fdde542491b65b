package relevance

import (
	"cmp"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/compose/codeindex"
	"github.com/kgctx/kgctx/compose/codeindex/langs"
	"github.com/kgctx/kgctx/compose/codeindex/treesitter"
)

// BaseRepoMap is the Aider-style repository map baseline: what Aider
// (aider/repomap.py) gives a model about a repository, built the way Aider
// builds it, over the same source tree that `kgctx index` reads.
//
//   - Tags: Aider's tree-sitter query for Go (go-tags.scm), done with
//     go/parser: definitions are the package clause, functions, methods,
//     type specs and var and const specs (at any depth, as the query
//     matches them); references are the names called (an identifier, or
//     the selector's field, parenthesised or not) and every type name
//     used. Every .go file of the tree counts, tests included. Python,
//     TypeScript/JavaScript, Java and Rust files (newRepoMapLangs) are
//     tagged as Aider tags them: each grammar's tags.scm run by
//     tree-sitter (package treesitter, predicates applied), the @name of
//     a @definition.* match a definition, of a @reference.* a reference;
//     the directories `kgctx index` skips (node_modules, build output,
//     virtual environments) are skipped here too, so both read the same
//     source.
//   - Graph: files are nodes; for each identifier both defined and
//     referenced, an edge from each referencing file to each defining
//     file, weighted sqrt(references) × mul, mul being ×10 when the query
//     mentions the identifier, ×10 for a snake_case or camelCase name of 8
//     or more characters, ×0.1 for a leading underscore and ×0.1 when more
//     than 5 files define it; an identifier defined and never referenced
//     gives its definers a self-edge of weight 0.1. (Aider takes the
//     square root again for each further defining file, a quirk kept.)
//   - Ranking: PageRank (damping 0.85, tolerance 1e-6, at most 100
//     iterations, networkx's) personalised, with the same dangling
//     distribution, to the files the query mentions (a path, or a basename
//     unique in the tree, as a word of the query; or a file whose stem, of
//     5 or more letters, is a query word) and the files with a path
//     component that is a query word, each 100/files; without any, plain
//     PageRank. Each file's rank is shared among its out-edges by weight
//     and summed per (defining file, identifier); definitions are listed
//     in that order, then the graph's files without listed definitions by
//     rank, then the tree's other files; Aider's important files (go.mod,
//     README.md, Makefile, CI configuration ...) come first.
//   - Rendering: the first n entries, grouped by file (files in path
//     order), each file as "path:" and then its definitions' lines,
//     "  <line>│ <source line>", in line order (a file without
//     definitions as its bare path), lines cut to 100 characters; n is
//     found by Aider's binary search for the largest map within the
//     budget. Differences from Aider, none of which hurt the map: its
//     search also accepts a map up to 15 % over the budget (here a block
//     never exceeds it), it shows no line numbers but elision marks "⋮"
//     between distant lines (here line numbers, no marks), and it counts
//     tokens with the model's tokenizer (here ceil(code points / 4), as
//     every block).
const BaseRepoMap = "aider repo map"

// Aider's PageRank and rendering constants.
const (
	rmDamping   = 0.85
	rmTolerance = 1e-6
	rmMaxIter   = 100
	rmLineMax   = 100
)

// rmImportant are the file names of Aider's important files (special.py)
// that a Go repository may hold, matched as a path's basename or suffix;
// GitHub workflow files (.github/workflows/*.yml) count too.
var rmImportant = []string{".gitignore", ".gitattributes", "README.md", "CONTRIBUTING.md", "LICENSE",
	"CHANGELOG.md", "SECURITY.md", "CODEOWNERS", "go.mod", "go.sum", ".env", ".env.example", ".editorconfig",
	".dockerignore", ".gitpod.yml", "renovate.json", "dependabot.yml", ".pre-commit-config.yaml", ".yamllint",
	"Makefile", "CMakeLists.txt", ".travis.yml", ".gitlab-ci.yml", "Jenkinsfile", "azure-pipelines.yml",
	"bitbucket-pipelines.yml", "appveyor.yml", "circle.yml", ".circleci/config.yml", ".github/dependabot.yml",
	"codecov.yml", ".coveragerc", "Dockerfile", "docker-compose.yml", "docker-compose.override.yml",
	"swagger.yaml", "swagger.json", "openapi.yaml", "openapi.json", "Vagrantfile", ".codeclimate.yml",
	"mkdocs.yml", "_config.yml", ".gitkeep", "package.json", "tsconfig.json", "pyproject.toml", "setup.py",
	"setup.cfg", "requirements.txt", "Pipfile", "tox.ini", "Cargo.toml", "pom.xml", "build.gradle"}

func rmIsImportant(p string) bool {
	dir, base := path.Split(p)
	if path.Base(dir) == "workflows" && path.Base(path.Dir(path.Clean(dir))) == ".github" && strings.HasSuffix(base, ".yml") {
		return true
	}
	for _, n := range rmImportant {
		if base == n || strings.HasSuffix(p, "/"+n) || p == n {
			return true
		}
	}
	return false
}

// rmTag is a definition: its file, line (1-based), name and source line.
type rmTag struct {
	file int32
	line int
	name int32 // index into repoMap.idents
	text string
}

// rmEdge is one edge of the file graph, its weight without the query's
// mention factor.
type rmEdge struct {
	src, dst int32
	ident    int32
	w        float64
	// unreferenced marks the self-edge of an identifier nothing references
	// (no mention factor).
	unreferenced bool
}

// repoMap is one tree's tags and file graph; rank and render answer a
// query. One repoMap serves one goroutine (scratch).
type repoMap struct {
	files   []string // every listed file: the .go files and the important ones, sorted
	goFile  []bool
	byPath  map[string]int32
	idents  []string
	identID map[string]int32
	edges   []rmEdge
	defs    map[[2]int32][]rmTag // (file, ident) -> definitions in line order
	nodes   []int32              // the graph's nodes (files with an edge), ascending
	// scratch
	x, next, pers, outW []float64
}

// newRepoMap reads the tree at root: every .go file is parsed for tags
// (a file that does not parse contributes what go/parser recovered);
// important files are listed.
func newRepoMap(root string) (*repoMap, error) {
	return newRepoMapLangs(context.Background(), root, nil)
}

// newRepoMapLangs is newRepoMap with the files of the other languages
// tagged too, by rt (nil: Go only).
func newRepoMapLangs(ctx context.Context, root string, rt *treesitter.Runtime) (*repoMap, error) {
	m := &repoMap{byPath: map[string]int32{}, identID: map[string]int32{}, defs: map[[2]int32][]rmTag{}}
	tagged := func(rel string) bool {
		return strings.HasSuffix(rel, ".go") || rt != nil && langs.LanguageOf(rel) != ""
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == ".git" || rt != nil && codeindex.SkippedDir(d.Name())) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if tagged(rel) || rmIsImportant(rel) {
			m.files = append(m.files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(m.files)
	m.goFile = make([]bool, len(m.files))
	for i, f := range m.files {
		m.byPath[f] = int32(i)
		m.goFile[i] = tagged(f)
	}
	queries := map[treesitter.Language]*treesitter.Query{}
	defines := map[int32]map[int32]bool{} // ident -> defining files
	refs := map[int32]map[int32]int{}     // ident -> referencing file -> count
	fset := token.NewFileSet()
	for i, f := range m.files {
		if !m.goFile[i] {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		lines := strings.Split(string(src), "\n")
		fi := int32(i)
		defAt := func(name string, line int) {
			if name == "" || name == "_" {
				return
			}
			n := m.ident(name)
			text := ""
			if line >= 1 && line <= len(lines) {
				text = strings.TrimSpace(lines[line-1])
			}
			if defines[n] == nil {
				defines[n] = map[int32]bool{}
			}
			defines[n][fi] = true
			k := [2]int32{fi, n}
			m.defs[k] = append(m.defs[k], rmTag{file: fi, line: line, name: n, text: text})
		}
		ref := func(name string) {
			n := m.ident(name)
			if refs[n] == nil {
				refs[n] = map[int32]int{}
			}
			refs[n][fi]++
		}
		if !strings.HasSuffix(f, ".go") {
			if err := rmLangTags(ctx, rt, queries, f, src, defAt, ref); err != nil {
				return nil, err
			}
			continue
		}
		af, _ := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if af == nil {
			continue
		}
		def := func(id *ast.Ident) {
			if id != nil {
				defAt(id.Name, fset.Position(id.Pos()).Line)
			}
		}
		rmTags(af, def, ref)
	}
	// The file graph (get_ranked_tags), in a deterministic order: idents
	// by id, files ascending.
	inGraph := make([]bool, len(m.files))
	for n := range int32(len(m.idents)) {
		definers := sortedKeys(defines[n])
		if len(definers) == 0 {
			continue
		}
		if len(refs[n]) == 0 {
			for _, d := range definers {
				m.edges = append(m.edges, rmEdge{src: d, dst: d, ident: n, w: 0.1, unreferenced: true})
				inGraph[d] = true
			}
			continue
		}
		id := m.idents[n]
		mul := 1.0
		if (rmSnake(id) || rmCamel(id)) && utf8.RuneCountInString(id) >= 8 {
			mul *= 10
		}
		if strings.HasPrefix(id, "_") {
			mul *= 0.1
		}
		if len(definers) > 5 {
			mul *= 0.1
		}
		for _, r := range sortedKeys(refs[n]) {
			num := float64(refs[n][r])
			for _, d := range definers {
				num = math.Sqrt(num) // again for each definer, as Aider does
				m.edges = append(m.edges, rmEdge{src: r, dst: d, ident: n, w: mul * num})
				inGraph[r], inGraph[d] = true, true
			}
		}
	}
	for i, ok := range inGraph {
		if ok {
			m.nodes = append(m.nodes, int32(i))
		}
	}
	for k := range m.defs {
		slices.SortFunc(m.defs[k], func(a, b rmTag) int { return cmp.Compare(a.line, b.line) })
	}
	return m, nil
}

func (m *repoMap) ident(name string) int32 {
	if n, ok := m.identID[name]; ok {
		return n
	}
	n := int32(len(m.idents))
	m.identID[name] = n
	m.idents = append(m.idents, name)
	return n
}

func sortedKeys[V any](mp map[int32]V) []int32 {
	out := make([]int32, 0, len(mp))
	for k := range mp {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func rmSnake(s string) bool {
	return strings.Contains(s, "_") && strings.IndexFunc(s, unicode.IsLetter) >= 0
}

func rmCamel(s string) bool {
	return strings.IndexFunc(s, unicode.IsUpper) >= 0 && strings.IndexFunc(s, unicode.IsLower) >= 0
}

// rmLangTags tags a file of another language with its grammar's tags
// query: def for the @name of each @definition.* match (its text and
// line), ref for the @name of each @reference.* match. A file the parser gives up on (over its
// limits) contributes no tags, as a file Aider cannot parse.
func rmLangTags(ctx context.Context, rt *treesitter.Runtime, queries map[treesitter.Language]*treesitter.Query, rel string, src []byte,
	def func(name string, line int), ref func(string)) error {
	lang := langs.Grammar(rel)
	q := queries[lang]
	if q == nil {
		text, err := treesitter.TagsQuery(lang)
		if err != nil {
			return err
		}
		if q, err = rt.NewQuery(ctx, lang, text); err != nil {
			return fmt.Errorf("tags query of %s: %w", lang, err)
		}
		queries[lang] = q
	}
	ms, err := rt.Match(ctx, q, src)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return nil
	}
	// A grammar's tags.scm captures the tag's node as @definition.KIND or
	// @reference.KIND and its name as @name in the same match (Aider's
	// own copies fold the two into @name.definition.KIND).
	for _, mt := range ms {
		kind := ""
		for _, c := range mt.Captures {
			if strings.HasPrefix(c.Name, "definition.") || strings.HasPrefix(c.Name, "reference.") {
				kind, _, _ = strings.Cut(c.Name, ".")
			}
		}
		for _, c := range mt.Captures {
			if c.Name != "name" {
				continue
			}
			switch kind {
			case "definition":
				def(c.Text(), c.StartLine)
			case "reference":
				ref(c.Text())
			}
		}
	}
	return nil
}

// rmTags calls def for every definition of go-tags.scm in f and ref for
// every reference.
func rmTags(f *ast.File, def func(*ast.Ident), ref func(string)) {
	def(f.Name)
	var typeRefs func(e ast.Expr)
	typeRefs = func(e ast.Expr) {
		switch t := e.(type) {
		case *ast.Ident:
			ref(t.Name)
		case *ast.SelectorExpr:
			ref(t.Sel.Name)
		case *ast.StarExpr:
			typeRefs(t.X)
		case *ast.ParenExpr:
			typeRefs(t.X)
		case *ast.ArrayType:
			typeRefs(t.Elt)
		case *ast.Ellipsis:
			if t.Elt != nil {
				typeRefs(t.Elt)
			}
		case *ast.MapType:
			typeRefs(t.Key)
			typeRefs(t.Value)
		case *ast.ChanType:
			typeRefs(t.Value)
		case *ast.IndexExpr:
			typeRefs(t.X)
			typeRefs(t.Index)
		case *ast.IndexListExpr:
			typeRefs(t.X)
			for _, x := range t.Indices {
				typeRefs(x)
			}
		}
		// Func, struct and interface types: their fields are visited by
		// ast.Inspect as *ast.Field.
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			def(n.Name)
		case *ast.TypeSpec:
			def(n.Name)
			ref(n.Name.Name) // a type_identifier: the query's reference.type matches it too
			typeRefs(n.Type)
		case *ast.GenDecl:
			if n.Tok == token.VAR || n.Tok == token.CONST {
				for _, sp := range n.Specs {
					if vs, ok := sp.(*ast.ValueSpec); ok {
						for _, id := range vs.Names {
							def(id)
						}
					}
				}
			}
		case *ast.ValueSpec:
			if n.Type != nil {
				typeRefs(n.Type)
			}
		case *ast.Field:
			typeRefs(n.Type)
		case *ast.CompositeLit:
			if n.Type != nil {
				typeRefs(n.Type)
			}
		case *ast.TypeAssertExpr:
			if n.Type != nil {
				typeRefs(n.Type)
			}
		case *ast.CaseClause:
			// A type switch's cases are types; an expression switch's are
			// values, whose identifiers tree-sitter does not tag either way
			// unless they are calls (visited below).
		case *ast.TypeSwitchStmt:
			for _, s := range n.Body.List {
				if cc, ok := s.(*ast.CaseClause); ok {
					for _, e := range cc.List {
						typeRefs(e)
					}
				}
			}
		case *ast.CallExpr:
			fun := n.Fun
			if p, ok := fun.(*ast.ParenExpr); ok {
				fun = p.X
			}
			switch f := fun.(type) {
			case *ast.Ident:
				ref(f.Name)
				if (f.Name == "new" || f.Name == "make") && len(n.Args) > 0 {
					typeRefs(n.Args[0])
				}
			case *ast.SelectorExpr:
				ref(f.Sel.Name)
			}
		}
		return true
	})
}

// rmEntry is one entry of the ranked list: a definition, or a file
// listed without definitions (bare).
type rmEntry struct {
	file int32
	tag  rmTag
	bare bool
}

// rank returns the ranked entries for query text (get_ranked_tags, with
// the important files first as get_ranked_tags_map_uncached puts them).
func (m *repoMap) rank(query string) []rmEntry {
	idents := map[string]bool{}
	for _, w := range strings.FieldsFunc(query, func(r rune) bool { return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') }) {
		idents[w] = true
	}
	mentioned := m.fileMentions(query)
	for w := range idents {
		if utf8.RuneCountInString(w) < 5 {
			continue
		}
		for i, f := range m.files {
			stem := strings.ToLower(strings.TrimSuffix(path.Base(f), path.Ext(f)))
			if utf8.RuneCountInString(stem) >= 5 && stem == strings.ToLower(w) {
				mentioned[int32(i)] = true
			}
		}
	}
	n := len(m.files)
	if n == 0 {
		return nil
	}
	personalize := 100 / float64(n)
	m.pers = slices.Grow(m.pers[:0], n)[:n]
	anyPers := false
	for i, f := range m.files {
		p := 0.0
		if mentioned[int32(i)] {
			p = personalize
		}
		base := path.Base(f)
		comps := append(strings.Split(path.Dir(f), "/"), base, strings.TrimSuffix(base, path.Ext(base)))
		if slices.ContainsFunc(comps, func(c string) bool { return idents[c] }) {
			p += personalize
		}
		m.pers[i] = p
	}
	// The edges' weights for this query.
	w := make([]float64, len(m.edges))
	m.outW = slices.Grow(m.outW[:0], n)[:n]
	clear(m.outW)
	for i, e := range m.edges {
		w[i] = e.w
		if !e.unreferenced && idents[m.idents[e.ident]] {
			w[i] *= 10
		}
		m.outW[e.src] += w[i]
	}
	for _, f := range m.nodes {
		if m.pers[f] > 0 {
			anyPers = true
			break
		}
	}
	ranked := m.pagerank(w, anyPers)
	// Share each file's rank among its out-edges.
	type defKey struct{ file, ident int32 }
	score := map[defKey]float64{}
	for i, e := range m.edges {
		if m.outW[e.src] > 0 {
			score[defKey{e.dst, e.ident}] += ranked[e.src] * w[i] / m.outW[e.src]
		}
	}
	keys := make([]defKey, 0, len(score))
	for k := range score {
		keys = append(keys, k)
	}
	// Python's sorted(..., key=(rank, (fname, ident)), reverse=True).
	slices.SortFunc(keys, func(a, b defKey) int {
		if c := cmp.Compare(score[b], score[a]); c != 0 {
			return c
		}
		if c := cmp.Compare(m.files[b.file], m.files[a.file]); c != 0 {
			return c
		}
		return cmp.Compare(m.idents[b.ident], m.idents[a.ident])
	})
	var out []rmEntry
	listed := make([]bool, n)
	for i := range m.files {
		if !m.goFile[i] {
			out = append(out, rmEntry{file: int32(i), bare: true})
			listed[i] = true
		}
	}
	tagged := make([]bool, n)
	var tags []rmEntry
	for _, k := range keys {
		for _, t := range m.defs[[2]int32{k.file, k.ident}] {
			tags = append(tags, rmEntry{file: k.file, tag: t})
			tagged[k.file] = true
		}
	}
	// Important files not among the ranked definitions' files come first.
	special := out[:0:0]
	for _, e := range out {
		if !tagged[e.file] {
			special = append(special, e)
		}
	}
	out = append(special, tags...)
	byRank := slices.Clone(m.nodes)
	slices.SortFunc(byRank, func(a, b int32) int {
		if c := cmp.Compare(ranked[b], ranked[a]); c != 0 {
			return c
		}
		return cmp.Compare(m.files[b], m.files[a])
	})
	for _, f := range byRank {
		if !tagged[f] && !listed[f] {
			out = append(out, rmEntry{file: f, bare: true})
			listed[f] = true
		}
	}
	for i := range m.files {
		if !tagged[i] && !listed[i] {
			out = append(out, rmEntry{file: int32(i), bare: true})
		}
	}
	return out
}

// fileMentions is Aider's get_file_mentions: the files whose path is a
// word of the query, or whose basename (holding '.', '_', '-' or '/') is
// one and unique in the tree. Words are split at blanks, trailing
// sentence punctuation and surrounding quotes removed.
func (m *repoMap) fileMentions(query string) map[int32]bool {
	words := map[string]bool{}
	for _, w := range strings.Fields(query) {
		w = strings.TrimRight(w, ",.!;:?")
		w = strings.Trim(w, "\"'`*_")
		words[w] = true
	}
	out := map[int32]bool{}
	byBase := map[string][]int32{}
	for i, f := range m.files {
		if words[f] {
			out[int32(i)] = true
		}
		base := path.Base(f)
		if strings.ContainsAny(base, "/\\._-") {
			byBase[base] = append(byBase[base], int32(i))
		}
	}
	for base, fs := range byBase {
		if len(fs) == 1 && words[base] {
			out[fs[0]] = true
		}
	}
	return out
}

// pagerank is networkx's pagerank (the scipy version: parallel edges'
// weights summed, rows normalised, personalisation and dangling
// distribution normalised over the graph's nodes) over m.nodes with edge
// weights w; it returns the ranks indexed by file.
func (m *repoMap) pagerank(w []float64, personalised bool) []float64 {
	n := len(m.files)
	m.x = slices.Grow(m.x[:0], n)[:n]
	m.next = slices.Grow(m.next[:0], n)[:n]
	clear(m.x)
	nodes := len(m.nodes)
	if nodes == 0 {
		return m.x
	}
	p := make([]float64, n)
	sum := 0.0
	for _, f := range m.nodes {
		if personalised {
			p[f] = m.pers[f]
		} else {
			p[f] = 1
		}
		sum += p[f]
	}
	for _, f := range m.nodes {
		p[f] /= sum
		m.x[f] = 1 / float64(nodes)
	}
	for range rmMaxIter {
		clear(m.next)
		dangling := 0.0
		for _, f := range m.nodes {
			if m.outW[f] == 0 {
				dangling += m.x[f]
			}
		}
		for i, e := range m.edges {
			m.next[e.dst] += m.x[e.src] * w[i] / m.outW[e.src]
		}
		err := 0.0
		for _, f := range m.nodes {
			v := rmDamping*(m.next[f]+dangling*p[f]) + (1-rmDamping)*p[f]
			err += math.Abs(v - m.x[f])
			m.next[f] = v
		}
		m.x, m.next = m.next, m.x
		if err < float64(nodes)*rmTolerance {
			break
		}
	}
	return m.x
}

// render is the map of the first k entries (to_tree), under the header.
func (m *repoMap) render(entries []rmEntry, k int) string {
	sel := slices.Clone(entries[:k])
	slices.SortStableFunc(sel, func(a, b rmEntry) int {
		if c := cmp.Compare(m.files[a.file], m.files[b.file]); c != 0 {
			return c
		}
		return cmp.Compare(a.tag.line, b.tag.line)
	})
	var b strings.Builder
	b.WriteString(RepoMapHeader)
	for i := 0; i < len(sel); {
		f := sel[i].file
		j := i
		hasTags := false
		for j < len(sel) && sel[j].file == f {
			hasTags = hasTags || !sel[j].bare
			j++
		}
		b.WriteByte('\n')
		if !hasTags {
			b.WriteString(cutRunes(m.files[f], rmLineMax))
			i = j
			continue
		}
		b.WriteString(cutRunes(m.files[f]+":", rmLineMax))
		last := -1
		for _, e := range sel[i:j] {
			if e.bare || e.tag.line == last {
				continue
			}
			last = e.tag.line
			b.WriteByte('\n')
			b.WriteString(cutRunes("  "+strconv.Itoa(e.tag.line)+"│ "+e.tag.text, rmLineMax))
		}
		i = j
	}
	return b.String()
}

func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}

// fit is Aider's binary search for the largest map within budget tokens
// (without its 15 % tolerance above the budget).
func (m *repoMap) fit(entries []rmEntry, budget int) blockOut {
	lo, hi := 0, len(entries)
	mid := min(budget/25, len(entries))
	best, bestTokens := "", 0
	for lo <= hi {
		text := ""
		if mid > 0 {
			text = m.render(entries, mid)
		}
		tokens := compose.Tokens(text)
		if tokens <= budget && tokens > bestTokens {
			best, bestTokens = text, tokens
		}
		if tokens < budget {
			lo = mid + 1
		} else {
			hi = mid - 1
		}
		mid = (lo + hi) / 2
	}
	return blockOut{Text: best, Tokens: bestTokens, Map: parseMap(best)}
}
