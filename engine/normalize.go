package engine

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// NormalizeName returns the identity key of an entity name within a project:
// case-folded, with every run of '_', '-' and whitespace removed, so that
// "AuthService", "auth_service", "Auth-Service" and "auth service" are one
// node. Dots, slashes and other punctuation are kept: "pkg/auth" and
// "pkg.auth" stay distinct because paths and packages differ by them.
func NormalizeName(name string) string {
	return string(AppendNormalizedName(nil, name))
}

// AppendNormalizedName appends the normalised form of name to dst; it lets
// hot paths build lookup keys in a reused buffer.
func AppendNormalizedName(dst []byte, name string) []byte {
	for i := 0; i < len(name); {
		c := name[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '_' || c == '-' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
				continue
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			continue
		}
		r, size := utf8.DecodeRuneInString(name[i:])
		i += size
		if unicode.IsSpace(r) {
			continue
		}
		dst = utf8.AppendRune(dst, foldRune(r))
	}
	return dst
}

// foldRune maps r to a canonical case: the smallest rune of its simple
// case-folding orbit that is lower case, which makes e.g. 'K' (Kelvin sign),
// 'K' and 'k' equal.
func foldRune(r rune) rune {
	lower := unicode.ToLower(r)
	best := lower
	for f := unicode.SimpleFold(lower); f != lower; f = unicode.SimpleFold(f) {
		if f < best && unicode.IsLower(f) {
			best = f
		}
	}
	return best
}

// NormalizeRelationship turns free-text relationship names into snake_case:
// "dependsOn", "Depends On", "DEPENDS-ON" and "/depends/on" all become
// "depends_on". It returns "" when nothing usable remains.
func NormalizeRelationship(rel string) string {
	var b strings.Builder
	b.Grow(len(rel) + 4)
	pendingSep := false
	var prev rune = -1
	runes := []rune(rel)
	for i, r := range runes {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			pendingSep = b.Len() > 0
			prev = -1
			continue
		}
		if unicode.IsUpper(r) && prev >= 0 {
			// camelCase boundary (aB) or the end of an acronym (ABc).
			nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				pendingSep = true
			}
		}
		if pendingSep {
			b.WriteByte('_')
			pendingSep = false
		}
		b.WriteRune(unicode.ToLower(r))
		prev = r
	}
	return b.String()
}

// KnownRelationships is the vocabulary kgctx understands natively; stats
// always list these, with zero counts where absent.
var KnownRelationships = []string{
	"depends_on", "implements", "calls", "related_to", "caused_by", "resolved_by",
	"follows", "similar_to", "contains", "in_session", "reflects_on", "learned_from",
}
