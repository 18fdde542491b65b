package text

import (
	"unicode"
	"unicode/utf8"
)

// maxTermBytes bounds the size of one indexed term. Identifiers longer than
// this are almost always generated junk (hashes, minified code, base64) and
// a single huge term only bloats the term dictionary; such terms are dropped
// by the analyzers (SplitName itself returns every part, whatever its size).
const maxTermBytes = 256

// runeClass is the lexical class of one rune for identifier splitting.
type runeClass uint8

const (
	clsSep   runeClass = iota // anything that is not part of a word
	clsLower                  // lowercase letter, or a cased letter that is neither upper nor title
	clsUpper                  // uppercase or titlecase letter
	clsDigit                  // any Unicode number (Nd, Nl, No)
	clsOther                  // caseless letter (Lo: CJK, Arabic, Hebrew, kana ...)
	clsMark                   // combining mark or modifier letter: glued to whatever precedes it
)

// asciiClass is the class of every ASCII byte, so the common case never
// touches the unicode tables.
var asciiClass = func() (t [utf8.RuneSelf]runeClass) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = clsLower
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = clsUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = clsDigit
	}
	return t
}()

func classify(r rune) runeClass {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case unicode.IsUpper(r) || unicode.IsTitle(r):
		return clsUpper
	case unicode.IsLower(r):
		return clsLower
	case unicode.Is(unicode.Lm, r) || unicode.IsMark(r):
		// Modifier letters (the katakana prolonged sound mark, ʰ, ...) and
		// combining marks belong to the letter before them; splitting there
		// would cut words in half.
		return clsMark
	case unicode.IsLetter(r):
		return clsOther
	case unicode.IsNumber(r):
		return clsDigit
	}
	return clsSep
}

// span is a half-open byte range of one part inside the analysed string.
type span struct{ start, end int }

// appendParts appends to dst the byte ranges of the parts of identifier s:
//
//   - runs of separators (anything that is not a letter, number or mark:
//     '_', '-', '.', '/', ':', whitespace, other punctuation, invalid UTF-8)
//     delimit words and are dropped;
//   - inside a word, a new part starts at a lower->upper transition
//     (authService -> auth|Service), before the last capital of a capital run
//     followed by lowercase (HTTPServer -> HTTP|Server), and at every
//     transition between letters, digits and caseless scripts
//     (parseJSON2Go -> parse|JSON|2|Go, 東京Tower -> 東京|Tower);
//   - exception: a capital run followed by a single lowercase letter that
//     ends the lowercase run stays whole, because that letter is almost
//     always a plural or version marker, not the start of a word
//     (URLs -> URLs, IDs -> IDs, IPv6 -> IPv|6).
//
// Parts never contain separators and never start with a combining mark.
func appendParts(dst []span, s string) []span {
	wordStart := -1     // start of the current part, -1 when between words
	prev := clsSep      // class of the previous letter/digit in this word
	lastUpperStart := 0 // byte offset of the most recent uppercase rune
	upperRun := 0       // length in runes of the current run of uppercase runes
	for i := 0; i < len(s); {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		c := classify(r)
		if c == clsMark {
			if wordStart < 0 {
				c = clsSep // a mark cannot start a word
			} else {
				i += size
				continue
			}
		}
		if c == clsSep {
			if wordStart >= 0 {
				dst = append(dst, span{wordStart, i})
				wordStart = -1
			}
			prev, upperRun = clsSep, 0
			i += size
			continue
		}
		if wordStart < 0 {
			wordStart = i
		} else if c != prev {
			switch {
			case prev == clsUpper && c == clsLower:
				// HTTPServer: the part boundary is before the 'S', unless the
				// lowercase run is a single trailing letter (URLs, IPv6).
				if upperRun >= 2 && !singleLower(s, i+size) {
					dst = append(dst, span{wordStart, lastUpperStart})
					wordStart = lastUpperStart
				}
			default:
				// lower->upper, letter<->digit, cased<->caseless.
				dst = append(dst, span{wordStart, i})
				wordStart = i
			}
		}
		if c == clsUpper {
			lastUpperStart = i
			upperRun++
		} else {
			upperRun = 0
		}
		prev = c
		i += size
	}
	if wordStart >= 0 {
		dst = append(dst, span{wordStart, len(s)})
	}
	return dst
}

// singleLower reports whether the rune starting at s[i:] (the one after a
// lowercase letter) ends the lowercase run, skipping combining marks.
func singleLower(s string, i int) bool {
	for i < len(s) {
		r, size := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		switch classify(r) {
		case clsMark:
			i += size
			continue
		case clsLower:
			return false
		}
		return true
	}
	return true
}

// appendLower appends the lowercase form of s to dst. ASCII is handled
// byte-wise; everything else goes through unicode.ToLower rune by rune,
// which is exactly what strings.ToLower does, so the result is a fixed
// point of strings.ToLower.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
		i += size
	}
	return dst
}

// SplitName splits an identifier or name into its lowercase parts, in order:
//
//	AuthService         -> auth service
//	HTTPServer          -> http server
//	parseJSON2Go        -> parse json 2 go
//	auth_middleware.go  -> auth middleware go
//	pkg/http/router     -> pkg http router
//	Barack Obama        -> barack obama
//
// The rules are those of the kgctx_name analyzer (see appendParts); the
// analyzer additionally indexes the concatenation of the parts
// ("authservice") when there is more than one, which SplitName does not
// return. Every returned token is non-empty and equal to its own
// strings.ToLower. An empty or separator-only name yields nil. The result
// is freshly allocated and owned by the caller.
func SplitName(name string) []string {
	var stack [16]span
	parts := appendParts(stack[:0], name)
	if len(parts) == 0 {
		return nil
	}
	n := 0
	for _, p := range parts {
		n += p.end - p.start
	}
	// One backing string for all tokens (two allocations in total besides
	// the slice): lowercase rarely changes the byte length, and when it does
	// append simply grows the buffer.
	buf := make([]byte, 0, n)
	for i, p := range parts {
		buf = appendLower(buf, name[p.start:p.end])
		parts[i].end = len(buf) // reuse the span as the end offset in buf
	}
	all := string(buf)
	out := make([]string, len(parts))
	start := 0
	for i, p := range parts {
		out[i] = all[start:p.end]
		start = p.end
	}
	return out
}
