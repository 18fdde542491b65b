package compose

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// The shape checkers: what each renderer intends its block to hold, line by
// line, written from the block formats (not from the renderers), so that
// no untrusted input can add a heading, a list item or any other markdown
// block to a block.

// escapeIndex is where s, sanitised text at a markdown block start, must
// take a backslash (-1: nowhere): before what CommonMark and GFM would
// read as a block that changes the block's lines, possibly completed by
// what follows s on its line: a heading (any leading '#'), a quote, a fence, a link
// definition, an HTML block, or (when nothing follows) a thematic break,
// setext underline or table delimiter row. List markers are looked
// through: a nested list item is still one line of the block, and its
// content starts a block in turn.
func escapeIndex(s string) int {
	i := 0
	for {
		r := s[i:]
		if r == "" {
			return -1
		}
		for _, re := range blockOpeners {
			if re.MatchString(r) {
				return i
			}
		}
		m := listMarker.FindString(r)
		if m == "" {
			return -1
		}
		i += len(m)
	}
}

var (
	blockOpeners = []*regexp.Regexp{
		regexp.MustCompile(`^#`),                                 // ATX heading (7 or more '#' too: it reads as one)
		regexp.MustCompile(`^>`),                                 // quote
		regexp.MustCompile("^(```|~~~)"),                         // fence
		regexp.MustCompile(`^\[`),                                // link reference definition
		regexp.MustCompile(`^<[A-Za-z/!?]`),                      // HTML block
		regexp.MustCompile(`^((\* *){3,}|(_ *){3,}|(- *){3,})$`), // thematic break
		regexp.MustCompile(`^[= ]*=[= ]*$`),                      // setext underline
		regexp.MustCompile(`^[-|: ]*-[-|: ]*$`),                  // delimiter row, setext '-' underline
	}
	listMarker = regexp.MustCompile(`^([-*+]|[0-9]{1,9}[.)]) `)
)

// escaped is s as a renderer must write it at a block start.
func escaped(s string) string {
	if i := escapeIndex(s); i >= 0 {
		return s[:i] + `\` + s[i:]
	}
	return s
}

// startsBlock reports whether s, at the start of a line or of a list
// item's content, would open a markdown block: indented code (four blanks),
// or, after up to three spaces, a heading, a quote, a list item, a thematic
// break, a setext underline, a table row, a fence, a link definition, an
// HTML block.
func startsBlock(s string) bool {
	t := s
	for i := 0; i < 3 && strings.HasPrefix(t, " "); i++ {
		t = t[1:]
	}
	return strings.HasPrefix(t, " ") || strings.HasPrefix(t, "\t") || escapeIndex(t) >= 0
}

// checkHashLines: no line starts with '#' unless it is one of the known
// headers or a Graph RAG entry line.
func checkHashLines(t testing.TB, block string) {
	t.Helper()
	for _, l := range strings.Split(block, "\n") {
		switch {
		case !strings.HasPrefix(l, "#"):
		case l == GraphHeader, l == ObservationsHeader, l == RAGSemanticHeader, l == RAGExpandedHeader, l == CodeMapHeader:
		case strings.HasPrefix(l, RAGEntryPrefix+"observation] "), strings.HasPrefix(l, RAGEntryPrefix+"node] "):
		default:
			t.Fatalf("line %q starts with # and is no header:\n%s", l, block)
		}
	}
}

// checkGraphPart: the header, then one "- src → rel → dst" line per
// triplet, the item's content opening no block.
func checkGraphPart(t testing.TB, part string, triplets []GraphTriplet) {
	t.Helper()
	lines := strings.Split(part, "\n")
	if lines[0] != GraphHeader || len(lines)-1 != len(triplets) {
		t.Fatalf("graph part has %d lines for %d triplets:\n%s", len(lines), len(triplets), part)
	}
	for i, l := range lines[1:] {
		item, ok := strings.CutPrefix(l, "- ")
		if !ok || startsBlock(item) {
			t.Fatalf("graph line %q is not one list item of plain text", l)
		}
		// The source is escaped as if nothing followed it (the renderer
		// cannot know); startsBlock above judges the whole item.
		if tr := triplets[i]; item != escaped(tr.SourceEntity)+" → "+tr.Relationship+" → "+tr.TargetEntity {
			t.Fatalf("graph line %q is not triplet %+v", l, tr)
		}
	}
	checkHashLines(t, part)
}

// splitCodeMap splits a graph part into its triplet lines and its code
// map (each "" when absent).
func splitCodeMap(part string) (graph, cmap string) {
	if strings.HasPrefix(part, CodeMapHeader+"\n") {
		return "", part
	}
	if i := strings.Index(part, "\n\n"+CodeMapHeader+"\n"); i >= 0 {
		return part[:i], part[i+2:]
	}
	return part, ""
}

// symLinePattern is a code map's symbol line: two blanks, the line number,
// "│ ", the signature.
var symLinePattern = regexp.MustCompile(`^  ([0-9]+)│ (.*)$`)

// checkCodeMapPart: the header, then per file a line "path:" (no block,
// no list item) followed by its symbols' lines "  <line>│ <signature>",
// in line order; symbols are reported in the order shown, a file's own
// entry (no symbol line) at its file line.
func checkCodeMapPart(t testing.TB, part string, syms []CodeSymbol) {
	t.Helper()
	lines := strings.Split(part, "\n")
	if lines[0] != CodeMapHeader || len(lines) < 2 {
		t.Fatalf("code map part:\n%s", part)
	}
	si, prev, files := 0, 0, 0
	for _, l := range lines[1:] {
		if m := symLinePattern.FindStringSubmatch(l); m != nil {
			for si < len(syms) && syms[si].Line == 0 {
				si++ // a file's own entry
			}
			if si >= len(syms) || m[1] != fmt.Sprint(syms[si].Line) || syms[si].Line < prev {
				t.Fatalf("symbol line %q is not symbol %d of %+v", l, si, syms)
			}
			if strings.Contains(m[2], "\n") || m[2] != Sanitize(m[2], 1<<20) {
				t.Fatalf("signature %q not sanitised", m[2])
			}
			prev = syms[si].Line
			si++
			continue
		}
		files++
		prev = 0
		if !strings.HasSuffix(l, ":") || startsBlock(l) || listMarker.MatchString(l) || strings.HasPrefix(l, " ") {
			t.Fatalf("file line %q opens a block or a list item, or is no file line:\n%s", l, part)
		}
	}
	for si < len(syms) && syms[si].Line == 0 {
		si++
	}
	if si != len(syms) {
		t.Fatalf("%d symbols reported, %d shown:\n%s", len(syms), si, part)
	}
	checkHashLines(t, part)
}

// checkObsPart: the header, then one "- [id] excerpt (weight: w)" line per
// observation, in order.
func checkObsPart(t testing.TB, part string, ids []string) {
	t.Helper()
	lines := strings.Split(part, "\n")
	if lines[0] != ObservationsHeader || len(lines)-1 != len(ids) {
		t.Fatalf("observations part has %d lines for %d ids:\n%s", len(lines), len(ids), part)
	}
	for i, l := range lines[1:] {
		if !strings.HasPrefix(l, "- ["+ids[i]+"] ") || !strings.Contains(l, " (weight: ") || !strings.HasSuffix(l, ")") {
			t.Fatalf("observation line %q (id %s)", l, ids[i])
		}
	}
	checkHashLines(t, part)
}

// checkTwoParts checks a block made of an observations part and a graph
// part, in that order, one blank line between (session and in-session
// blocks); graphLines is the number of triplets the block reports.
func checkTwoParts(t testing.TB, block string, ids []string, triplets []GraphTriplet, graphLines int) {
	t.Helper()
	obs, graph := sessionParts(t, block)
	if obs == "" {
		if len(ids) != 0 {
			t.Fatalf("%d observation ids, no observations part:\n%s", len(ids), block)
		}
	} else {
		checkObsPart(t, obs, ids)
	}
	if graph == "" {
		if graphLines != 0 {
			t.Fatalf("%d triplets, no graph part:\n%s", graphLines, block)
		}
		return
	}
	if triplets != nil {
		checkGraphPart(t, graph, triplets)
	} else if n := strings.Count(graph, "\n"); n != graphLines {
		t.Fatalf("graph part has %d lines for %d triplets:\n%s", n, graphLines, graph)
	}
	for _, l := range strings.Split(graph, "\n")[1:] {
		if item, ok := strings.CutPrefix(l, "- "); !ok || startsBlock(item) {
			t.Fatalf("graph line %q is not one list item of plain text", l)
		}
	}
}

// checkRAGShape: the semantic section ("### [kind] id" and a content line
// per entry), a blank line, the expanded section (header, preface, one
// "- **node** (via predicate from origin)" line per entry); either section
// may be absent; content lines open no block.
func checkRAGShape(t testing.TB, b *RAGBlock) {
	t.Helper()
	if b.Block == "" {
		if len(b.Semantic)+len(b.Expanded) != 0 || b.ActualTokens != 0 {
			t.Fatalf("empty block with entries: %+v", b)
		}
		return
	}
	fail := func(why string) {
		t.Helper()
		t.Fatalf("%s:\n%s", why, b.Block)
	}
	lines := strings.Split(b.Block, "\n")
	i, sem := 0, 0
	if lines[0] == RAGSemanticHeader {
		i++
		for i < len(lines) && strings.HasPrefix(lines[i], RAGEntryPrefix) {
			if sem >= len(b.Semantic) || i+1 >= len(lines) {
				fail("more semantic entries than reported")
			}
			s := b.Semantic[sem]
			if lines[i] != RAGEntryPrefix+s.Kind+"] "+Sanitize(s.ID, MaxNameRunes) {
				fail("entry line " + lines[i])
			}
			c := lines[i+1]
			if c == "" || startsBlock(c) || c != escaped(Sanitize(s.Content, MaxExcerptRunes)) {
				fail("content line " + c)
			}
			sem++
			i += 2
		}
		if sem == 0 {
			fail("semantic header without entries")
		}
	}
	if sem != len(b.Semantic) {
		fail("semantic entries reported but not shown")
	}
	exp := 0
	if i < len(lines) {
		if i > 0 {
			if lines[i] != "" {
				fail("no blank line between the sections")
			}
			i++
		}
		if i+1 >= len(lines) || lines[i] != RAGExpandedHeader || lines[i+1] != RAGPreface {
			fail("expanded section header")
		}
		for i += 2; i < len(lines); i++ {
			if exp >= len(b.Expanded) {
				fail("more expanded lines than entries")
			}
			e := b.Expanded[exp]
			if lines[i] != "- **"+e.Node+"** (via "+e.Predicate+" from "+e.Origin+")" {
				fail("expanded line " + lines[i])
			}
			exp++
		}
	}
	if exp != len(b.Expanded) {
		fail("expanded entries reported but not shown")
	}
	if b.ActualTokens != Tokens(b.Block) {
		fail("token count")
	}
	checkHashLines(t, b.Block)
}

// sessionParts splits a session block into its observations part and its
// graph part (either may be "").
func sessionParts(t testing.TB, block string) (obs, graph string) {
	t.Helper()
	if block == "" {
		return "", ""
	}
	for _, p := range strings.Split(block, "\n\n") {
		switch {
		case strings.HasPrefix(p, ObservationsHeader+"\n") && obs == "" && graph == "":
			obs = p
		case strings.HasPrefix(p, GraphHeader+"\n") && graph == "":
			graph = p
		default:
			t.Fatalf("session block part %q is neither part, or out of order:\n%s", p, block)
		}
	}
	return obs, graph
}
