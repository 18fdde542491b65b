package compose

import (
	"unicode"
	"unicode/utf8"
)

// MaxNameRunes caps an entity name in a block; longer names end in "…".
const MaxNameRunes = 120

// Sanitize makes untrusted text (entity names, relationships, observation
// text) safe to place inside one line of a markdown block: control and
// format characters (including bidi overrides and zero-width characters)
// are dropped, every run of whitespace, newlines and line or paragraph
// separators becomes one space, the ends are trimmed, and the result is cut
// to maxRunes code points (the last being "…"). With no line breaks left,
// no input can start a new line. Renderers do not call it: they write
// untrusted text through lineBuf.text (render.go), which sanitises with
// AppendSanitized and also escapes a leading markdown block marker where
// the text starts a block. Sanitize itself serves names that are not
// rendered (the self-learning graph's node names).
func Sanitize(s string, maxRunes int) string {
	if isClean(s, maxRunes) {
		return s
	}
	return string(appendRunes(make([]byte, 0, len(s)), s, maxRunes))
}

// isClean is the fast path: printable ASCII without double spaces, trimmed
// and short enough is returned as is, without allocating.
func isClean(s string, maxRunes int) bool {
	if len(s) == 0 || len(s) > maxRunes || s[0] == ' ' || s[len(s)-1] == ' ' {
		return len(s) == 0
	}
	prevSpace := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f {
			return false
		}
		sp := c == ' '
		if sp && prevSpace {
			return false
		}
		prevSpace = sp
	}
	return true
}

// AppendSanitized appends Sanitize(s, maxRunes) to dst.
func AppendSanitized(dst []byte, s string, maxRunes int) []byte {
	if isClean(s, maxRunes) { // most names: printable ASCII, single spaces
		return append(dst, s...)
	}
	return appendRunes(dst, s, maxRunes)
}

// appendRunes is AppendSanitized rune by rune (what isClean spares a
// clean string).
func appendRunes(dst []byte, s string, maxRunes int) []byte {
	start := len(dst)
	runes := 0
	pendingSpace := false
	cut := -1 // byte offset where the ellipsis goes if we overflow
	for _, r := range s {
		if c := runeClass(r); c == classSpace {
			pendingSpace = len(dst) > start
			continue
		} else if c == classDrop {
			continue
		}
		need := 1
		if pendingSpace {
			need = 2
		}
		if runes+need > maxRunes-1 && cut < 0 {
			cut = len(dst)
		}
		if runes+need > maxRunes {
			dst = append(dst[:cut], "…"...)
			return dst
		}
		if pendingSpace {
			dst = append(dst, ' ')
			runes++
			pendingSpace = false
		}
		dst = utf8.AppendRune(dst, r)
		runes++
	}
	return dst
}

// runeClass says what Sanitize does with r (unicodeClass); ASCII from a
// table made of it (most names' runes, without the unicode tables'
// searches).
func runeClass(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	return unicodeClass(r)
}

// asciiClass is unicodeClass of each ASCII rune.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = unicodeClass(r)
	}
	return t
}()

// A rune's class: kept, a space (white space, line and paragraph
// separators), or dropped (invalid, control, format, private use,
// surrogate).
const (
	classKeep uint8 = iota
	classSpace
	classDrop
)

// unicodeClass classifies r by the unicode package's classes.
func unicodeClass(r rune) uint8 {
	switch {
	case r == utf8.RuneError:
		return classDrop
	case unicode.IsSpace(r) || r == '\u2028' || r == '\u2029' || r == '\u0085':
		return classSpace
	case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r) || unicode.Is(unicode.Cs, r):
		return classDrop
	}
	return classKeep
}

// SanitizedLen is the number of code points of Sanitize(s, maxRunes),
// computed without building it when s is already clean (the common case).
func SanitizedLen(s string, maxRunes int) int {
	if isClean(s, maxRunes) {
		return len(s)
	}
	var buf [256]byte
	return utf8.RuneCount(appendRunes(buf[:0], s, maxRunes))
}

// Tokens estimates tokens as ceil(code points / 4), the references'
// heuristic (no tokenizer dependency).
func Tokens(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }
