package langs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kgctx/kgctx/compose/codeindex/treesitter"
)

// Languages are the languages Extract reads, as File.Lang names them.
var Languages = []string{"python", "javascript", "typescript", "java", "rust"}

// LanguageOf is the language of a file by its name ("" for none read):
// .py; .js, .mjs, .cjs, .jsx; .ts, .mts, .cts, .tsx; .java; .rs.
// Minified bundles (.min.js) are none.
func LanguageOf(p string) string {
	base := path.Base(p)
	if strings.HasSuffix(base, ".min.js") || strings.HasSuffix(base, ".bundle.js") {
		return ""
	}
	switch path.Ext(base) {
	case ".py":
		return "python"
	case ".js", ".mjs", ".cjs", ".jsx":
		return "javascript"
	case ".ts", ".mts", ".cts", ".tsx":
		return "typescript"
	case ".java":
		return "java"
	case ".rs":
		return "rust"
	}
	return ""
}

// Grammar is the grammar that parses the file at p ("" for none).
func Grammar(p string) treesitter.Language { return grammar(p, LanguageOf(p)) }

// grammar is the grammar that parses a file of lang.
func grammar(p, lang string) treesitter.Language {
	switch lang {
	case "python":
		return treesitter.Python
	case "javascript":
		return treesitter.JavaScript
	case "typescript":
		if strings.HasSuffix(p, ".tsx") {
			return treesitter.TSX
		}
		return treesitter.TypeScript
	case "java":
		return treesitter.Java
	case "rust":
		return treesitter.Rust
	}
	return ""
}

// Extract parses the source of the file at p (root-relative) and states
// what it declares and references. A source with syntax errors states
// what the parser could read (File.Errors counts the rest). An error is
// the parser's (treesitter.ErrParse: over its memory or time limit;
// treesitter.ErrTooLarge) or ctx's.
func Extract(ctx context.Context, rt *treesitter.Runtime, p string, src []byte) (*File, error) {
	lang := LanguageOf(p)
	if lang == "" {
		return nil, ErrUnknownLanguage
	}
	t, err := rt.Parse(ctx, grammar(p, lang), src)
	if err != nil {
		return nil, err
	}
	f := &File{Path: p, Lang: lang, Hash: HashOf(src), Lines: lineCount(src), Errors: t.Errors()}
	x := &extractor{f: f, src: src}
	switch lang {
	case "python":
		f.Test = isPythonTestFile(p)
		x.python(t.Root())
	case "javascript", "typescript":
		f.Test = isJSTestFile(p)
		x.js(t.Root())
	case "java":
		x.java(t.Root())
	case "rust":
		f.Test = isRustTestFile(p)
		x.rust(t.Root())
	}
	return f, nil
}

// HashOf is the content hash a File records.
func HashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

func lineCount(b []byte) int {
	n := strings.Count(string(b), "\n")
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return max(n, 1)
}

// extractor accumulates one file's facts.
type extractor struct {
	f   *File
	src []byte
	// seen bases, per module: the first declaration of a name wins (an
	// overload, a redefinition under if/else).
	seen map[[2]string]bool
}

func (x *extractor) sym(s Sym) bool {
	if s.Base == "" {
		return false
	}
	if x.seen == nil {
		x.seen = map[[2]string]bool{}
	}
	k := [2]string{string(rune('0' + s.Mod)), s.Base}
	if x.seen[k] {
		return false
	}
	x.seen[k] = true
	s.Sig = CapSig(s.Sig)
	x.f.Syms = append(x.f.Syms, s)
	return true
}

func (x *extractor) ref(r Ref) {
	if len(r.Path) == 0 || r.Path[0] == "" {
		return
	}
	x.f.Refs = append(x.f.Refs, r)
}

// sig is the declaration's text from its start (or from `from`, when not
// null) up to its body (not included), on one line.
func (x *extractor) sig(n, from, body treesitter.Node) string {
	s := n.StartByte()
	if !from.IsNull() {
		s = from.StartByte()
	}
	e := n.EndByte()
	if !body.IsNull() {
		e = body.StartByte()
	}
	if s > e || e > len(x.src) {
		return ""
	}
	return oneLine(string(x.src[s:e]))
}

// oneLine folds white space to single spaces, none just inside brackets
// or before a comma, and trims a trailing '{' or ':' and spaces.
func oneLine(s string) string {
	s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
	for _, r := range [...][2]string{{"( ", "("}, {" )", ")"}, {"[ ", "["}, {" ]", "]"}, {" ,", ","}, {",)", ")"}, {",]", "]"}} {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	s = strings.TrimRight(s, " {:=;")
	return strings.TrimSpace(s)
}

// MaxSig bounds a signature (engine.MaxSignatureBytes).
const MaxSig = 256

// CapSig cuts s to MaxSig bytes, on a rune boundary, with an ellipsis.
func CapSig(s string) string {
	if len(s) <= MaxSig {
		return s
	}
	cut := MaxSig - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Synopsis is the first sentence of a doc comment, at most 300 bytes:
// the description every indexer of the module (Go's too) gives a symbol.
func Synopsis(text string) string {
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

// commentText strips comment markers (/** */, leading *, ///, //!, //, #)
// and drops JSDoc/Javadoc tag lines (@param ...).
func commentText(s string) string {
	s = strings.TrimPrefix(s, "/**")
	s = strings.TrimPrefix(s, "/*")
	s = strings.TrimSuffix(s, "*/")
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		for _, p := range []string{"///", "//!", "//", "*", "#"} {
			if strings.HasPrefix(l, p) {
				l = strings.TrimSpace(l[len(p):])
				break
			}
		}
		if strings.HasPrefix(l, "@") {
			break
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// docBefore is the doc comment just before n (skipping the kinds in
// skip, such as attributes), for the doc comment kinds given: the
// comment must start with one of prefixes. Consecutive line comments
// are joined.
func (x *extractor) docBefore(n treesitter.Node, prefixes []string, skip ...string) string {
	var lines []string
	for p := n.PrevSibling(); !p.IsNull(); p = p.PrevSibling() {
		k := p.Kind()
		if contains(skip, k) {
			continue
		}
		if !strings.Contains(k, "comment") {
			break
		}
		t := p.Text()
		ok := false
		for _, pre := range prefixes {
			if strings.HasPrefix(t, pre) {
				ok = true
			}
		}
		if !ok {
			break
		}
		lines = append([]string{t}, lines...)
		if strings.HasPrefix(t, "/*") {
			break // a block comment is the whole doc
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return Synopsis(commentText(strings.Join(lines, "\n")))
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Test file conventions.

// isPythonTestFile: test_*.py, *_test.py, or a file under a tests or
// test directory (pytest's and unittest's discovery).
func isPythonTestFile(p string) bool {
	base := path.Base(p)
	if strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py" {
		return true
	}
	return inDir(p, "tests", "test")
}

// isJSTestFile: *.test.*, *.spec.*, or under __tests__, test or tests.
func isJSTestFile(p string) bool {
	base := path.Base(p)
	stem := strings.TrimSuffix(base, path.Ext(base))
	if strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") || strings.HasSuffix(stem, ".e2e") {
		return true
	}
	return inDir(p, "__tests__", "test", "tests")
}

// isRustTestFile: an integration test (under a crate's tests directory).
func isRustTestFile(p string) bool { return inDir(p, "tests") }

// isJavaTestFile: under src/test, or a class named *Test, *Tests, *IT,
// Test*.
func isJavaTestFile(p string) bool {
	if strings.Contains("/"+p, "/src/test/") {
		return true
	}
	stem := strings.TrimSuffix(path.Base(p), ".java")
	return strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests") || strings.HasSuffix(stem, "IT") ||
		strings.HasPrefix(stem, "Test") && len(stem) > 4 && unicode.IsUpper(rune(stem[4]))
}

func inDir(p string, dirs ...string) bool {
	for _, d := range strings.Split(path.Dir(p), "/") {
		if contains(dirs, d) {
			return true
		}
	}
	return false
}
