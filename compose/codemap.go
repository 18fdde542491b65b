package compose

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/traverse"
)

// The code map. A block whose nodes carry locations (a code indexer's
// symbols) can show, beside its triplet lines, where its symbols live:
//
//	## Code Map
//	nats.go:
//	  1320│ func (nc *Conn) doReconnect(err error, forceReconnect bool)
//	  2290│ func (nc *Conn) processOpErr(err error)
//
// a file's path, then a line per symbol: its first line number and its
// signature (Aider's repo-map shape). The map renders the block's
// containment candidates: an edge from a container to what it holds (a
// file defines a symbol, a type has a method, a package contains a file;
// mapRels) says where the held node lives, which its map entry says with
// its signature, so such a candidate becomes the held node's entry instead
// of a triplet line. Every other candidate stays a triplet line. Both take
// candidates in the one importance order and share one budget: a map
// entry costs its line, plus its file's line when it is the file's first,
// plus the section's header and blank line when it is the map's first.
// Files come in the order of their first entry, symbols in line order
// within a file. A file can be listed alone, its path without symbols:
// where a hit past the seeds lives (fileEntries), or a file node the walk
// reached, unless it is one of several files its package contains (that
// says only that the package has files; render's addMap). Paths and
// signatures are untrusted text: they go through the line builder
// (sanitised, folded to one line, a file line's leading block or list
// marker escaped), so the map adds no heading or list item.

// CodeMapHeader starts a block's code map.
const CodeMapHeader = "## Code Map"

// selfRel is the relationship of a seed's own map entry: a pseudo
// candidate from the seed to itself (seedEntries).
const selfRel = math.MaxUint32

// seedEntryImportance is a seed's own map entry's importance relative to
// its score: that of a first-hop line that explains the whole query at
// the default weights (1/1.44), so a seed's signature comes before its
// lines, and a weak seed's after a strong seed's best lines.
const seedEntryImportance = 1 / 1.44

// seedEntries appends to cands a pseudo candidate per seed that carries a
// location: the seed's own map entry. Its edge id counts down from the
// largest (no edge has it), its hop is 0.
func seedEntries(v *engine.View, seeds []traverse.Seed, cands []traverse.Candidate) []traverse.Candidate {
	for i, s := range seeds {
		if _, ok := v.NodeLocation(s.Node); !ok || !(s.Score > 0) {
			continue
		}
		σ := min(s.Score, 1)
		cands = append(cands, traverse.Candidate{Edge: math.MaxUint32 - uint32(i), Src: s.Node, Dst: s.Node, Rel: selfRel,
			Importance: σ * seedEntryImportance, Seed: s.Node, SeedScore: float32(σ), Match: 1, WeightF: float32(seedEntryImportance),
			HubF: 1, EdgeF: 1})
	}
	return cands
}

// fileEntries appends to cands a pseudo candidate for the file of each
// runner-up that carries a location (a hit past the seeds whose name
// matches a query word): the file's own map entry, its path alone, at the
// importance the runner-up's seed entry would have had. A work item
// often touches a file its seeds do not live in (the same change in each
// shell's completion file), and a path line says where more of what the
// query names lives for a few code points, where the runner-up's
// signature would cost a line. The file is the node of the runner-up's
// tenant named by its location's path (a code indexer's file node); its
// edge id counts down from below the seed entries'.
func fileEntries(v *engine.View, runners []seedScore, cands []traverse.Candidate) []traverse.Candidate {
	for i, s := range runners {
		if s.name <= 0 || !(s.score > 0) {
			continue
		}
		loc, ok := v.NodeLocation(s.node)
		if !ok || v.NodeName(s.node) == loc.File {
			continue
		}
		file, ok := v.Lookup(v.NodeTenant(s.node), loc.File)
		if !ok || !fileNode(v, file) {
			continue
		}
		σ := min(s.score, 1)
		cands = append(cands, traverse.Candidate{Edge: math.MaxUint32 - MaxTopK - uint32(i), Src: file, Dst: file, Rel: selfRel,
			Importance: σ * seedEntryImportance, Seed: s.node, SeedScore: float32(σ), Match: 1, WeightF: float32(seedEntryImportance),
			HubF: 1, EdgeF: 1})
	}
	return cands
}

// fileNode reports whether n is a file's node: named by its location's
// path.
func fileNode(v *engine.View, n uint32) bool {
	loc, ok := v.NodeLocation(n)
	return ok && v.NodeName(n) == loc.File
}

// mapRels are the containment relationships whose candidates the code map
// shows as the held node's entry (see above).
var mapRels = []string{"defines", "has_method", "contains"}

// maxSignatureRunes caps a signature in the map (a path is capped at
// MaxNameRunes).
const maxSignatureRunes = 160

// CodeSymbol is one entry of a block's code map: a symbol (a node with a
// location), or a file listed without symbols (Line 0).
type CodeSymbol struct {
	NodeID string `json:"nodeId"`
	Name   string `json:"name"`
	// File is the path the map shows it under; Line and EndLine its span
	// (0 for a file's own entry).
	File      string `json:"file"`
	Line      int    `json:"line,omitempty"`
	EndLine   int    `json:"endLine,omitempty"`
	Signature string `json:"signature,omitempty"`
	// RelevanceScore is 1 - importance of the candidate that brought it,
	// as a triplet's.
	RelevanceScore float64     `json:"relevanceScore"`
	Explain        *ScoreParts `json:"explain,omitempty"`

	node uint32
	cand entry
}

// CodeMapMode says whether a block has a code map.
type CodeMapMode uint8

const (
	// CodeMapAuto: a map when the block's best seeds carry locations.
	CodeMapAuto CodeMapMode = iota
	// CodeMapOn: a map of the block's nodes that carry locations.
	CodeMapOn
	// CodeMapOff: triplet lines only.
	CodeMapOff
)

// CodeMapModeOf is the mode of a request's optional codeMap flag (nil:
// auto).
func CodeMapModeOf(on *bool) CodeMapMode {
	switch {
	case on == nil:
		return CodeMapAuto
	case *on:
		return CodeMapOn
	}
	return CodeMapOff
}

// codeMapBuf is a block's code map being built.
type codeMapBuf struct {
	on    bool
	rels  []bool // by relationship id: a containment relationship
	files []mapFile
	runes int // the section's code points: its blank line and header, its lines
	ln    lineBuf
	lines map[string]bool // the map's lines, so none repeats
	nodes map[uint32]bool
}

type mapFile struct {
	path string // as the location names it; line is its rendered line
	line string
	self int // the file's own entry in the block's CodeMap, or -1
	syms []mapSym
}

type mapSym struct {
	line int
	text string // the rendered line
	sym  int    // index into the block's CodeMap
}

// reset empties the map for a block of view v; on says whether it takes
// entries.
func (m *codeMapBuf) reset(v *engine.View, on bool) {
	m.on, m.files, m.runes = on, m.files[:0], 0
	if m.lines == nil {
		m.lines, m.nodes = map[string]bool{}, map[uint32]bool{}
	}
	clear(m.lines)
	clear(m.nodes)
	m.rels = m.rels[:0]
	if !on {
		return
	}
	m.rels = append(m.rels, make([]bool, v.RelCount())...)
	for _, name := range mapRels {
		if r, ok := v.RelID(name); ok {
			m.rels[r] = true
		}
	}
}

// takes reports whether the map shows candidate c: a containment edge to a
// node with a location.
func (m *codeMapBuf) takes(v *engine.View, c *traverse.Candidate) bool {
	if !m.on || c.Rel != selfRel && (int(c.Rel) >= len(m.rels) || !m.rels[c.Rel]) {
		return false
	}
	_, ok := v.NodeLocation(c.Dst)
	return ok
}

// fileLine renders a map's file line into ln: the sanitised path and a
// colon, a leading block marker escaped (lineBuf.text) and a leading list
// marker too (the line is no list item).
func fileLine(ln *lineBuf, path string) {
	ln.reset()
	p := ln.text(path, MaxNameRunes)
	if i := listMarkerAt(ln.b[p.start:p.end]); i >= 0 {
		at := p.start + i
		ln.b = append(ln.b, 0)
		copy(ln.b[at+1:], ln.b[at:])
		ln.b[at] = '\\'
	}
	ln.lit(":")
}

// listMarkerAt returns where a backslash keeps t, at the start of a line,
// from opening a list item ("- ", "* ", "+ ", "1. ", "1) ", or the marker
// alone), or -1.
func listMarkerAt(t []byte) int {
	if len(t) > 0 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (len(t) == 1 || t[1] == ' ' || t[1] == '\t') {
		return 0
	}
	n := digitRun(t)
	if n > 0 && n < len(t) && (t[n] == '.' || t[n] == ')') && (n+1 == len(t) || t[n+1] == ' ' || t[n+1] == '\t') {
		return n
	}
	return -1
}

// symLine renders a symbol's map line into ln: "  <line>│ <signature>".
func symLine(ln *lineBuf, line int, sig string) {
	ln.reset()
	ln.lit("  ")
	ln.b = strconv.AppendInt(ln.b, int64(line), 10)
	ln.lit("│ ")
	ln.text(sig, maxSignatureRunes)
}

// entry is what the map would add for node n: its file's path, and its
// symbol line ("" for a file's own entry: a node named by its location's
// path).
func (m *codeMapBuf) entry(v *engine.View, n uint32) (loc engine.Location, fileText, symText string) {
	loc, _ = v.NodeLocation(n)
	fileLine(&m.ln, loc.File)
	fileText = string(m.ln.b)
	if loc.Line > 0 && v.NodeName(n) != loc.File {
		sig := v.NodeSignature(n)
		if sig == "" {
			sig = v.NodeName(n)
		}
		symLine(&m.ln, loc.Line, sig)
		symText = string(m.ln.b)
	}
	return loc, fileText, symText
}

// minCost is the least code points the map's entry for c's target can
// cost: its symbol line and newline (its file line may be there already).
// The cost only falls as the map grows, never below this.
func (m *codeMapBuf) minCost(v *engine.View, c *traverse.Candidate) int {
	loc, _ := v.NodeLocation(c.Dst)
	if loc.Line == 0 || v.NodeName(c.Dst) == loc.File {
		return 1
	}
	n, _ := textLen(v.NodeSignature(c.Dst), maxSignatureRunes)
	if v.NodeSignature(c.Dst) == "" {
		n, _ = textLen(v.NodeName(c.Dst), maxSignatureRunes)
	}
	return 1 + 2 + len(strconv.Itoa(loc.Line)) + 2 + n
}

// add puts node n in the map when its entry fits room code points; it
// returns the code points added (0: not added, or already there) and the
// symbol's index in syms, which it appends to.
func (m *codeMapBuf) add(v *engine.View, n uint32, room int, syms *[]CodeSymbol, c *entry) int {
	if m.nodes[n] {
		return 0
	}
	loc, fileText, symText := m.entry(v, n)
	fi := slices.IndexFunc(m.files, func(f mapFile) bool { return f.path == loc.File })
	cost := 0
	if len(m.files) == 0 {
		cost += 2 + utf8.RuneCountInString(CodeMapHeader)
	}
	if fi < 0 {
		if m.lines[fileText] {
			return 0 // two paths that sanitise alike
		}
		cost += 1 + utf8.RuneCountInString(fileText)
	}
	if symText != "" {
		if m.lines[symText] {
			return 0
		}
		cost += 1 + utf8.RuneCountInString(symText)
	} else if fi >= 0 {
		return 0 // the file is listed already
	}
	if cost > room {
		return 0
	}
	if fi < 0 {
		m.files = append(m.files, mapFile{path: loc.File, line: fileText, self: -1})
		m.lines[fileText] = true
		fi = len(m.files) - 1
	}
	m.nodes[n] = true
	if symText == "" {
		loc.Line, loc.EndLine = 0, 0 // a file's own entry (CodeSymbol)
	}
	*syms = append(*syms, CodeSymbol{NodeID: v.NodeID(n), Name: v.NodeName(n), File: loc.File, Line: loc.Line, EndLine: loc.EndLine,
		Signature: v.NodeSignature(n), RelevanceScore: 1 - c.imp, node: n, cand: *c})
	if symText != "" {
		m.lines[symText] = true
		m.files[fi].syms = append(m.files[fi].syms, mapSym{line: loc.Line, text: symText, sym: len(*syms) - 1})
	} else {
		m.files[fi].self = len(*syms) - 1
	}
	m.runes += cost
	return cost
}

// text renders the map section (header and lines, no leading blank line);
// symbols within a file in line order. It reorders syms to the order the
// map shows them.
func (m *codeMapBuf) text(syms []CodeSymbol) (string, []CodeSymbol) {
	if len(m.files) == 0 {
		return "", syms
	}
	b := make([]byte, 0, 4*m.runes)
	b = append(b, CodeMapHeader...)
	shown := make([]CodeSymbol, 0, len(syms))
	for _, f := range m.files {
		b = append(b, '\n')
		b = append(b, f.line...)
		if f.self >= 0 {
			shown = append(shown, syms[f.self])
		}
		slices.SortStableFunc(f.syms, func(a, b mapSym) int { return cmp.Compare(a.line, b.line) })
		for _, s := range f.syms {
			b = append(b, '\n')
			b = append(b, s.text...)
			shown = append(shown, syms[s.sym])
		}
	}
	return string(b), shown
}
