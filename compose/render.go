package compose

import (
	"bytes"
	"hash/maphash"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Every block (the graph block, the observations block, the session block,
// Graph RAG, the in-session injector's block, and any block added later) is
// written through two helpers, so one sanitiser serves every renderer and no
// renderer concatenates untrusted text itself:
//
//   - lineBuf builds one entry of a block (one line, or a few) from trusted
//     literal parts (lit: headers, "- ", " → ", "(weight: 0.50)") and
//     untrusted parts (text: names, relationships, ids, observation text).
//     text sanitises (Sanitize: control and format characters dropped,
//     whitespace runs, newlines included, folded to one space, capped with
//     an ellipsis), so an untrusted part never breaks a line; and when the
//     part is the first thing of a markdown block, it escapes with a
//     backslash what would change the block's lines (see markerEscapeAt):
//     a heading, a quote, a fence, a thematic break, a setext underline, a
//     table's delimiter row, an HTML block, a link definition. A block
//     starts at the start of a line and, in CommonMark, right after a list
//     item's or a quote's marker: "- # x" is a list item holding a
//     heading, so the text after the graph block's "- " counts as a block
//     start too. Everything else stays verbatim, so that a name copied from
//     a block finds its node: "_models.Response", "1. FC Köln", "*ptr".
//   - blockBuf accumulates a block's entries, section headers and blank
//     separators, counts its code points, and records every line so a block
//     never repeats one.

// lineBuf is one entry being built. Its content always starts a line.
type lineBuf struct{ b []byte }

// part locates an untrusted part in a lineBuf: b[start:end], with the
// escaping backslash at b[esc] (esc < 0: none).
type part struct{ start, end, esc int }

func (l *lineBuf) reset() { l.b = l.b[:0] }

// lit appends trusted markup.
func (l *lineBuf) lit(s string) { l.b = append(l.b, s...) }

// num appends a trusted number with two decimals.
func (l *lineBuf) num(f float64) { l.b = strconv.AppendFloat(l.b, f, 'f', 2, 64) }

// text appends untrusted s, sanitised and cut to maxRunes code points, its
// leading block marker escaped when it starts a block (the backslash comes
// on top of maxRunes).
func (l *lineBuf) text(s string, maxRunes int) part {
	p := part{start: len(l.b), esc: -1}
	blockStart := atBlockStart(l.b)
	l.b = AppendSanitized(l.b, s, maxRunes)
	if blockStart {
		if i := markerEscapeAt(l.b[p.start:]); i >= 0 {
			p.esc = p.start + i
			l.b = append(l.b, 0)
			copy(l.b[p.esc+1:], l.b[p.esc:])
			l.b[p.esc] = '\\'
		}
	}
	p.end = len(l.b)
	return p
}

// plain is part p's sanitised text without the markdown escape (what the
// JSON fields beside a block carry: JSON is not markdown), cut from line,
// its lineBuf's text as one string (string(l.b)): an entry's parts cost
// one string, not one each.
func (p part) plain(line string) string {
	if p.esc < 0 {
		return line[p.start:p.end]
	}
	return line[p.start:p.esc] + line[p.esc+1:p.end]
}

// runes is the entry's length in code points.
func (l *lineBuf) runes() int { return utf8.RuneCount(l.b) }

// atBlockStart reports whether text appended to b would start a markdown
// block: b's last line holds only blanks and list or quote markers ("- ",
// "* ", "+ ", "1. ", "1) ", ">"). Only trusted literals can be markers
// there: an untrusted part that looks like one was escaped.
func atBlockStart(b []byte) bool {
	p := b[bytes.LastIndexByte(b, '\n')+1:]
	for {
		p = bytes.TrimLeft(p, " \t")
		switch {
		case len(p) == 0:
			return true
		case len(p) >= 2 && (p[0] == '-' || p[0] == '*' || p[0] == '+') && p[1] == ' ':
			p = p[2:]
		case p[0] == '>':
			p = p[1:]
		default:
			n := digitRun(p)
			if n == 0 || n+1 >= len(p) || (p[n] != '.' && p[n] != ')') || p[n+1] != ' ' {
				return false
			}
			p = p[n+2:]
		}
	}
}

// markerEscapeAt returns where a backslash makes sanitised text t safe at a
// block start, or -1 when t needs none. It escapes what would change the
// block's lines: a heading (any leading '#': "#######" is no heading to
// CommonMark but reads as one, and "#" may be followed by " → rel"), a
// quote ('>'), a fence
// ("```", "~~~"), a link reference definition ('['; what follows on the
// line may complete it), an HTML block ('<' then a letter, '/', '!' or
// '?'), and a text that is a whole line rule when nothing follows it: a
// thematic break ("***", "- - -", "___"), a setext underline ("===", "--",
// which would make the line above a heading) or a table's delimiter row
// ("|---|:-:"). A list marker ("- ", "* ", "+ ", "1. ", "2) ") leaves the
// line one line of the block (a nested list item), so it is kept, and
// what follows it is judged as a block start in turn: "1. # x" becomes
// "1. \# x". Leading blanks (indented code) cannot occur: the sanitiser
// trims and folds runs of blanks.
func markerEscapeAt[T string | []byte](t T) int {
	for i := 0; i < len(t); {
		r := t[i:]
		if lineRule(r) {
			return i
		}
		switch c := r[0]; c {
		case '#', '>', '[':
			return i
		case '`', '~':
			if len(r) >= 3 && r[1] == c && r[2] == c {
				return i
			}
			return -1
		case '<':
			if len(r) > 1 && ('a' <= r[1]|0x20 && r[1]|0x20 <= 'z' || r[1] == '/' || r[1] == '!' || r[1] == '?') {
				return i
			}
			return -1
		case '-', '*', '+':
			if len(r) >= 2 && r[1] == ' ' {
				i += 2 // a bullet: its content starts a block
				continue
			}
			return -1
		}
		n := digitRun(r)
		if n >= 1 && n <= 9 && n+1 < len(r) && (r[n] == '.' || r[n] == ')') && r[n+1] == ' ' {
			i += n + 2 // an ordered item's marker
			continue
		}
		return -1
	}
	return -1
}

// lineRule reports whether r, taken as the rest of its line, is a
// thematic break (three or more of one of '-', '*', '_', blanks between),
// a setext underline ('=' or '-' only) or a table's delimiter row ('|',
// ':', '-' and blanks, a '-' among them).
func lineRule[T string | []byte](r T) bool {
	var dash, star, under, eq, pipe int
	for k := 0; k < len(r); k++ {
		switch r[k] {
		case '-':
			dash++
		case '*':
			star++
		case '_':
			under++
		case '=':
			eq++
		case '|', ':':
			pipe++
		case ' ':
		default:
			return false
		}
	}
	switch {
	case eq > 0:
		return dash+star+under+pipe == 0
	case star > 0:
		return star >= 3 && dash+under+pipe == 0
	case under > 0:
		return under >= 3 && dash+pipe == 0
	}
	return dash > 0
}

func digitRun[T string | []byte](t T) int {
	n := 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	return n
}

// textLen is the code points text(s, maxRunes) appends in the middle of a
// line, and whether it adds a backslash at a block start. It allocates
// only for a long name that is not clean.
func textLen(s string, maxRunes int) (runes int, escape bool) {
	if isClean(s, maxRunes) {
		return len(s), markerEscapeAt(s) >= 0
	}
	var buf [256]byte
	t := AppendSanitized(buf[:0], s, maxRunes)
	return utf8.RuneCount(t), markerEscapeAt(t) >= 0
}

// blockBuf is a block being built: its text, its length in code points,
// and the lines it holds (blank separators aside), so that no line goes in
// twice. A repeat would say nothing new; it happens when two entries render
// alike: the same triplet in two projects of an org-wide block, two names
// that differ only in what the sanitiser drops, two observations with the
// same text.
type blockBuf struct {
	b     []byte
	runes int
	// seen maps the hash of each line to the offset of its first copy in b;
	// a hash hit is confirmed by comparing the bytes.
	seen map[uint64]int32
	seed maphash.Seed
}

// reset empties the block, keeping its memory.
func (bb *blockBuf) reset() {
	bb.b, bb.runes = bb.b[:0], 0
	if bb.seen == nil {
		bb.seen, bb.seed = map[uint64]int32{}, maphash.MakeSeed()
		return
	}
	clear(bb.seen)
}

// empty reports whether nothing was written yet.
func (bb *blockBuf) empty() bool { return len(bb.b) == 0 }

// sectionCost is the code points section(header) adds.
func (bb *blockBuf) sectionCost(header string) int {
	n := utf8.RuneCountInString(header)
	if len(bb.b) > 0 {
		n += 2
	}
	return n
}

// section appends a trusted header (one or more lines), after a blank line
// unless the block is empty.
func (bb *blockBuf) section(header string) {
	if len(bb.b) > 0 {
		bb.b = append(bb.b, "\n\n"...)
		bb.runes += 2
	}
	bb.appendHeader(header)
	bb.runes += utf8.RuneCountInString(header)
}

// fresh reports whether no line of entry is in the block yet, nor twice in
// entry.
func (bb *blockBuf) fresh(entry []byte) bool {
	rest := entry
	for len(rest) > 0 {
		line, tail, _ := bytes.Cut(rest, []byte{'\n'})
		if len(line) > 0 && (bb.holds(line) || holdsLine(entry[:len(entry)-len(rest)], line)) {
			return false
		}
		rest = tail
	}
	return true
}

// add appends entry as the block's next line(s); runes is its length in
// code points (the newline before it is counted here).
func (bb *blockBuf) add(entry []byte, runes int) {
	if len(bb.b) > 0 {
		bb.b = append(bb.b, '\n')
		bb.runes++
	}
	bb.appendLines(entry)
	bb.runes += runes
}

// appendLines appends s and records its non-blank lines.
func (bb *blockBuf) appendLines(s []byte) {
	for {
		line, tail, more := bytes.Cut(s, []byte{'\n'})
		if len(line) > 0 {
			bb.record(maphash.Bytes(bb.seed, line))
		}
		bb.b = append(bb.b, line...)
		if !more {
			return
		}
		bb.b = append(bb.b, '\n')
		s = tail
	}
}

// appendHeader appends trusted s and records its non-blank lines.
func (bb *blockBuf) appendHeader(s string) {
	for {
		line, tail, more := strings.Cut(s, "\n")
		if len(line) > 0 {
			bb.record(maphash.String(bb.seed, line))
		}
		bb.b = append(bb.b, line...)
		if !more {
			return
		}
		bb.b = append(bb.b, '\n')
		s = tail
	}
}

// record notes that the line about to be appended has hash h.
func (bb *blockBuf) record(h uint64) {
	if _, ok := bb.seen[h]; !ok {
		bb.seen[h] = int32(len(bb.b))
	}
}

// holds reports whether line (no newline) is one of the block's lines.
func (bb *blockBuf) holds(line []byte) bool {
	off, ok := bb.seen[maphash.Bytes(bb.seed, line)]
	if !ok {
		return false
	}
	first := bb.b[off:]
	if i := bytes.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	if bytes.Equal(first, line) {
		return true
	}
	return holdsLine(bb.b, line) // two lines share a hash: look the slow way
}

// holdsLine reports whether text has line as one of its lines.
func holdsLine(text, line []byte) bool {
	for len(text) > 0 {
		l, tail, _ := bytes.Cut(text, []byte{'\n'})
		if bytes.Equal(l, line) {
			return true
		}
		text = tail
	}
	return false
}
