package engine

import (
	"unicode"
	"unicode/utf8"

	"github.com/kgctx/kgctx/engine/model"
)

// NormalizeName returns the identity key of an entity name within a
// project. Separators fold to the canonical separator '_' instead of
// vanishing, so names that differ only by where a separator sits stay
// distinct:
//
//   - letters are case-folded (foldRune; ASCII by table);
//   - a run of separators ('_', '-', whitespace) becomes as many '_' as it
//     holds underscores, and one '_' when it holds none: "auth - service"
//     and "auth_service" are one key, "a__b" and "a_b" are two, because
//     '_' is a character of identifiers ("__init__", Freebase's "/m/060__7");
//   - a case boundary between two letters, lower to upper ("authService")
//     or the last capital of an acronym before a word of two or more
//     lower-case letters ("HTTPServer", but "userIDs" -> "user_ids"),
//     is one '_' unless a separator is already there;
//   - leading and trailing runs are dropped unless they hold an underscore
//     ("_private" and "private" differ, " x" and "x" do not);
//   - digits are never a boundary ("v12"; "MD5Hash" -> "md5hash"), and dots,
//     slashes and other punctuation are kept as they are.
//
// So "AuthService", "auth_service", "auth-service", "Auth Service",
// "AUTH_SERVICE" and "authService" are one node ("auth_service"), while
// "v1_2" and "v12", "kill_src_2_10" and "kill_src_21_0", "/m/015g7" and
// "/m/015g_7", "pkg/auth" and "pkg.auth" are not.
//
// Invariants (tested): the key is a fixed point (NormalizeName(key) ==
// key), and deleting its '_' gives the key of store versions up to 2
// (normalizeNameV2): names equal under this rule were equal under the old
// one, which is why upgrading a store never has to merge nodes (see
// migrate.go).
func NormalizeName(name string) string {
	return string(AppendNormalizedName(nil, name))
}

// Rune classes. A letter is upper when it is upper or title case and
// folding changes it, lower when it is lower case and has an upper case;
// anything else that is not a separator (digits, punctuation, caseless
// letters such as 'ß' or mathematical capitals that fold to themselves) is
// other and never makes a boundary. Folded output is never classUpper,
// which keeps the key a fixed point. Separators are the runes
// normalizeNameV2 deleted: ASCII '_', '-' and white space, Unicode white
// space.
const (
	classOther uint8 = iota
	classLower
	classUpper
	classSep
)

// asciiClass classifies ASCII by table: the loop's fast path.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = classLower
		t[c-'a'+'A'] = classUpper
	}
	for _, c := range "_- \t\n\r\v\f" {
		t[c] = classSep
	}
	return t
}()

// runeClass classifies any rune.
func runeClass(r rune) uint8 {
	switch {
	case r < utf8.RuneSelf:
		return asciiClass[r]
	case unicode.IsSpace(r):
		return classSep
	case unicode.IsLower(r):
		if unicode.ToUpper(r) != r {
			return classLower
		}
	case unicode.IsUpper(r) || unicode.IsTitle(r):
		if foldRune(r) != r {
			return classUpper
		}
	}
	return classOther
}

// classAt classifies the rune at name[i:] and returns its size.
func classAt(name string, i int) (uint8, int) {
	if c := name[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, size := utf8.DecodeRuneInString(name[i:])
	return runeClass(r), size
}

// AppendNormalizedName appends the normalised form of name to dst; it lets
// hot paths build lookup keys in a reused buffer without allocating. What
// dst already holds is kept and does not count as a preceding word.
func AppendNormalizedName(dst []byte, name string) []byte {
	start := len(dst)
	inRun := false   // separators seen since the last rune written
	underscores := 0 // '_' among them
	prev := classOther
	for i := 0; i < len(name); {
		var r rune
		var cls uint8
		if c := name[i]; c < utf8.RuneSelf {
			r, cls = rune(c), asciiClass[c]
			i++
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(name[i:])
			cls = runeClass(r)
			i += size
		}
		if cls == classSep {
			inRun = true
			if r == '_' {
				underscores++
			}
			continue
		}
		switch {
		case inRun:
			n := underscores
			if n == 0 && len(dst) > start {
				n = 1
			}
			dst = appendUnderscores(dst, n)
			inRun, underscores = false, 0
		case cls != classUpper:
		case prev == classLower: // "authService"
			dst = append(dst, '_')
		case prev == classUpper: // "HTTPServer": S starts a word if two lower-case letters follow
			if i < len(name) {
				c1, s1 := classAt(name, i)
				if c1 == classLower && i+s1 < len(name) {
					if c2, _ := classAt(name, i+s1); c2 == classLower {
						dst = append(dst, '_')
					}
				}
			}
		}
		if r < utf8.RuneSelf {
			if cls == classUpper {
				r += 'a' - 'A'
			}
			dst = append(dst, byte(r))
		} else {
			dst = utf8.AppendRune(dst, foldRune(r))
		}
		prev = cls
	}
	return appendUnderscores(dst, underscores) // a trailing run keeps only its underscores
}

func appendUnderscores(dst []byte, n int) []byte {
	for ; n > 0; n-- {
		dst = append(dst, '_')
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

// NormalizeRelationship turns free-text relationship names into snake_case
// (model.NormalizeRelationship).
func NormalizeRelationship(rel string) string { return model.NormalizeRelationship(rel) }

// KnownRelationships is the vocabulary kgctx understands natively; stats
// always list these, with zero counts where absent.
var KnownRelationships = []string{
	"depends_on", "implements", "calls", "related_to", "caused_by", "resolved_by",
	"follows", "similar_to", "contains", "in_session", "reflects_on", "learned_from",
}
