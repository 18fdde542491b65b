package relevance

import (
	"math"
	"slices"
	"strings"
)

// A code block may hold, besides its triplet lines, a code map: a section
// of file lines ("path:") each followed by the signature lines of symbols
// in that file ("  120│ func (c *Conn) Close() error"). kgctx renders it
// under codeMapHeader, the repo map baseline under RepoMapHeader.
// The code scores read both the triplet lines and the map.

// RepoMapHeader starts the repo map baseline's block; codeMapHeader is
// kgctx's (compose.CodeMapHeader).
const (
	RepoMapHeader = "## Repository Map"
	codeMapHeader = "## Code Map"
)

// mapLine is one line of a code map: a file line (Sig "") or a symbol's
// line in File's section.
type mapLine struct {
	File string
	Sig  string
}

// parseMap returns the code map lines of a block's text: the lines of its
// codeMapHeader or RepoMapHeader sections. A line that starts
// without a blank is a file ("path:", or "path" for a file listed without
// symbols); an indented line holding "│" is a symbol of the file above.
func parseMap(text string) []mapLine {
	var out []mapLine
	in, file := false, ""
	for l := range strings.SplitSeq(text, "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			in, file = l == codeMapHeader || l == RepoMapHeader, ""
		case !in || strings.TrimSpace(l) == "":
		case l[0] != ' ' && l[0] != '\t':
			file = strings.TrimSuffix(l, ":")
			out = append(out, mapLine{File: file})
		case strings.Contains(l, "│"):
			_, sig, _ := strings.Cut(l, "│")
			out = append(out, mapLine{File: file, Sig: strings.TrimSpace(sig)})
		}
	}
	return out
}

// codeBlockScores scores a code block (names compared exactly, codeName's
// suffix aside: code names are case-sensitive, Conn.close is not
// Conn.Close): function recall (the share of gold
// functions the block names), file recall (the share of gold files it
// reaches) and precision (the share of its lines, triplet and map lines,
// that name a gold function or a gold file; NaN for an empty block).
//
// A triplet line names what its endpoints are; a gold file is reached
// when it or a node it defines or contains is an endpoint (codeScores). In
// a code map, a file line names and reaches its file, and a symbol line
// names a gold function when the function's bare name (Func, Method)
// stands in it as a word and the line is in the section of the function's
// file, or when its qualified name (pkg.Func, Type.Method) stands in it
// anywhere: a map names a symbol the way Aider's repo map does, by its
// declaration in its file.
func codeBlockScores(q *question, b *blockOut) (fn, file, precision float64) {
	ends := make(map[string]bool, 2*len(b.Lines))
	for _, l := range b.Lines {
		ends[codeName(l.Src)], ends[codeName(l.Dst)] = true, true
	}
	funcs := make([]string, len(q.Funcs))
	isFunc := map[string]bool{}
	for i, f := range q.Funcs {
		funcs[i] = codeName(f)
		isFunc[funcs[i]] = true
	}
	isFile := map[string]bool{}
	for _, f := range q.Files {
		isFile[f.Key] = true
	}
	mapped := map[string]bool{} // gold functions a map line names
	mappedFiles := map[string]bool{}
	hits, lines := 0, len(b.Lines)+len(b.Map)
	for _, l := range b.Lines {
		if s, d := codeName(l.Src), codeName(l.Dst); isFunc[s] || isFunc[d] || isFile[l.Src] || isFile[l.Dst] {
			hits++
		}
	}
	for _, m := range b.Map {
		if m.Sig == "" {
			mappedFiles[m.File] = true
			if isFile[m.File] {
				hits++
			}
			continue
		}
		named := false
		for i, f := range funcs {
			if sigNames(m, f, fileOf(q, i)) {
				mapped[f] = true
				named = true
			}
		}
		if named {
			hits++
		}
	}
	fn = fraction(funcs, func(k string) bool { return ends[k] || mapped[k] })
	file = math.NaN()
	if len(q.Files) > 0 {
		reached := 0
		for _, f := range q.Files {
			if mappedFiles[f.Key] || ends[f.Key] || slices.ContainsFunc(f.Members, func(m string) bool { return ends[codeName(m)] }) {
				reached++
			}
		}
		file = float64(reached) / float64(len(q.Files))
	}
	precision = math.NaN()
	if lines > 0 {
		precision = float64(hits) / float64(lines)
	}
	return fn, file, precision
}

func fileOf(q *question, i int) string {
	if i < len(q.FuncFiles) {
		return q.FuncFiles[i]
	}
	return ""
}

// codeName is a code symbol's name without the "#2" an older extractor
// (and codeloc's gold) appends to the second of two names that fold to one
// identity: "cobra.Command.execute#2" is cobra.Command.execute.
func codeName(s string) string {
	i := strings.LastIndexByte(s, '#')
	if i <= 0 || i == len(s)-1 {
		return s
	}
	for _, c := range s[i+1:] {
		if c < '0' || c > '9' {
			return s
		}
	}
	return s[:i]
}

// sigNames says whether map line m names function f (qualified as
// pkg.Func or pkg.Type.Method) defined in file: its last two parts
// anywhere, or its bare name in file's section.
func sigNames(m mapLine, f, file string) bool {
	parts := strings.Split(f, ".")
	if len(parts) >= 2 && hasWord(m.Sig, strings.Join(parts[len(parts)-2:], ".")) {
		return true
	}
	return file != "" && m.File == file && hasWord(m.Sig, parts[len(parts)-1])
}

// hasWord reports whether w stands in s with no identifier character
// (letter, digit, underscore) right before or after it.
func hasWord(s, w string) bool {
	if w == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !identByte(s[j-1])) && (end == len(s) || !identByte(s[end])) {
			return true
		}
		i = j + 1
	}
}

func identByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
