package model

import (
	"strings"
	"unicode"
)

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
