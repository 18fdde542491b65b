package embed

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/kgctx/kgctx/index/words"
)

// lexicalVersion names the feature design. Bump it whenever tokenisation,
// hashing or weights change: stored indexes compare Name() and must refuse
// vectors from an older design.
const lexicalVersion = "lexical-v1"

// Lexical dimension bounds.
const (
	DefaultLexicalDim = 128
	MinLexicalDim     = 2
	MaxLexicalDim     = 1 << 16
)

// Feature weights. Chosen so that (a) the same words in another spelling
// (AuthService, auth_service, "auth service", authservice) land near cosine
// 0.8-1, (b) one shared word out of two gives a clear but partial match, and
// (c) a shared character trigram or two between unrelated words (the "ice"
// in "service" and "device") stays a small fraction of the total.
const (
	// wUnigram is a whole lowercase word: the strongest evidence.
	wUnigram = 1.0
	// wStopword replaces wUnigram for the core function words (package
	// words, see words.Core: "the", "in", "of"). They are kept (a text
	// made only of them must not be blank) but barely count, and they emit
	// no bigrams or trigrams.
	wStopword = 0.15
	// wCompound is an identifier made of several parts (AuthService,
	// auth_service, oauth2) hashed as one lowercase word, so it matches the
	// same identifier written as one lowercase word ("authservice").
	wCompound = 0.6
	// wBigram is two consecutive content words, capturing word order and
	// phrase identity ("auth service" vs "service auth" differ a little).
	wBigram = 0.5
	// wTrigramWord is the total L2 weight of one word's character trigrams;
	// each of a word's n trigrams gets wTrigramWord/sqrt(n), so long words
	// do not drown short ones. Trigrams give partial credit for shared stems
	// and misspellings ("token"/"tokens", "middleware"/"middlewares").
	wTrigramWord = 0.7
)

// Feature-kind salts keep a word, a bigram and a trigram with equal raw hash
// bits from landing in the same bucket with the same sign.
const (
	kindUnigram = 0x9e3779b97f4a7c15
	kindBigram  = 0xc2b2ae3d27d4eb4f
	kindTrigram = 0x165667b19e3779f9
)

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// stopwordHashes are the core function words (words.Core), hashed at init
// with the same function as words, so the hot path compares one uint64 per
// entry instead of strings.
var stopwordHashes = func() []uint64 {
	ws := words.Core()
	h := make([]uint64, len(ws))
	for i, w := range ws {
		s := uint64(fnvOffset64)
		for _, r := range w {
			s = fnvRune(s, r)
		}
		h[i] = s
	}
	return h
}()

// LexicalOptions configures NewLexical. The zero value is valid.
type LexicalOptions struct {
	// Dim is the vector length; 0 means DefaultLexicalDim (128). Larger
	// dimensions mean fewer hash collisions (less noise between unrelated
	// texts) at linear cost in index memory.
	Dim int
}

// Validate reports whether the options are usable.
func (o LexicalOptions) Validate() error {
	if o.Dim != 0 && (o.Dim < MinLexicalDim || o.Dim > MaxLexicalDim) {
		return fmt.Errorf("%w: lexical Dim %d outside [%d, %d]", ErrInvalidOptions, o.Dim, MinLexicalDim, MaxLexicalDim)
	}
	return nil
}

// Lexical is the built-in embedder: hashed lexical features, no model. See
// NewLexical for the feature design. Immutable; safe for concurrent use.
type Lexical struct {
	dim  int
	name string
}

var _ Embedder = (*Lexical)(nil)

// NewLexical returns a Lexical embedder.
//
// Text is split into words: maximal runs of letters, digits and combining
// marks, further split at case and digit boundaries (AuthService -> auth,
// service; HTTPServer -> http, server; oauth2 -> oauth, 2) and lowercased;
// each Han or kana character is a word of its own. Each word contributes
//
//   - its unigram (weight 1.0; 0.15 for the core function words (words.Core) such as
//     "the", "in", which contribute nothing else), with a plural "s"
//     stripped (tokens -> token),
//   - a bigram with the previous non-stopword word (0.5),
//   - its character trigrams with boundary markers, "<au", "aut", "uth",
//     "th>" (0.7 in total per word),
//
// and an identifier of several parts joined directly or by '_' or '-'
// contributes the concatenation of its parts as one more word (0.6). Every
// feature is hashed (FNV-1a, then a murmur3 finaliser) to a bucket in [0,
// Dim) and a sign (feature hashing: the signs make collisions cancel in
// expectation instead of piling up), summed, and the sum L2-normalised.
// Text with no letter or digit yields EmptyVector.
func NewLexical(opts LexicalOptions) (*Lexical, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	d := opts.Dim
	if d == 0 {
		d = DefaultLexicalDim
	}
	return &Lexical{dim: d, name: lexicalVersion + "/" + strconv.Itoa(d)}, nil
}

// Dim returns the vector length.
func (l *Lexical) Dim() int { return l.dim }

// Name returns "lexical-v1/<dim>".
func (l *Lexical) Name() string { return l.name }

// Embed embeds each text. It never fails except on a cancelled context. All
// vectors share one backing array (capacity-capped per vector).
func (l *Lexical) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embed: lexical: %w", err)
	}
	out := make([][]float32, len(texts))
	slab := make([]float32, len(texts)*l.dim)
	for i, t := range texts {
		// Embedding is ~1µs per short text; checking the context every
		// 256 texts bounds cancellation latency without measurable cost.
		if i&255 == 255 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("embed: lexical: %w", err)
			}
		}
		lo, hi := i*l.dim, (i+1)*l.dim
		out[i] = l.EmbedInto(slab[lo:hi:hi], t)
	}
	return out, nil
}

// EmbedInto embeds text into dst and returns it resliced to Dim. When
// cap(dst) >= Dim it performs no allocation (the hot path for query
// embedding); otherwise it allocates a new vector. dst is overwritten.
func (l *Lexical) EmbedInto(dst []float32, text string) []float32 {
	if cap(dst) < l.dim {
		dst = make([]float32, l.dim)
	} else {
		dst = dst[:l.dim]
		clear(dst)
	}
	f := featurizer{v: dst, dim: uint64(l.dim), compound: fnvOffset64}

	start := -1 // byte offset of the current word part, -1 when none
	prev := classSep
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		c := classify(r)
		switch {
		case c == classSep || c == classJoiner || (c == classMark && start < 0):
			if start >= 0 {
				f.part(text[start:i])
				start = -1
			}
			if c != classJoiner {
				f.endCompound()
			}
			prev = classSep
		case c == classMark:
			// A combining mark extends the current part and does not
			// change the class used for boundary decisions.
		default:
			if start >= 0 && partBoundary(prev, c, text[i+size:]) {
				f.part(text[start:i])
				start = -1
			}
			if start < 0 {
				start = i
			}
			prev = c
		}
		i += size
	}
	if start >= 0 {
		f.part(text[start:])
	}
	f.endCompound()

	if !f.any || !Normalize(dst) {
		// No features, or (astronomically unlikely) features that cancel
		// exactly: both have no direction.
		EmptyVector(dst)
	}
	return dst
}

type runeClass uint8

const (
	classSep    runeClass = iota // whitespace, punctuation, symbols, invalid UTF-8
	classJoiner                  // '_' and '-': split words, continue an identifier
	classLower
	classUpper     // upper and title case
	classUncased   // letters without case (Arabic, Hangul, Thai, ...)
	classIdeograph // Han, Hiragana, Katakana: one rune per part
	classDigit
	classMark // combining marks: part of the preceding letter
)

func classify(r rune) runeClass {
	if r < utf8.RuneSelf {
		switch {
		case 'a' <= r && r <= 'z':
			return classLower
		case 'A' <= r && r <= 'Z':
			return classUpper
		case '0' <= r && r <= '9':
			return classDigit
		case r == '_' || r == '-':
			return classJoiner
		}
		return classSep
	}
	switch {
	case unicode.IsLower(r):
		return classLower
	case unicode.IsUpper(r) || unicode.IsTitle(r):
		return classUpper
	case unicode.IsLetter(r):
		// Chinese and Japanese write words without spaces; every
		// ideograph or kana is its own part, and the bigrams between
		// neighbours then act as the usual CJK character-bigram index.
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
			return classIdeograph
		}
		return classUncased
	case unicode.IsDigit(r):
		return classDigit
	case unicode.IsMark(r):
		return classMark
	}
	return classSep
}

// partBoundary reports whether a new word part starts at a rune of class cur
// that follows one of class prev; rest is the text after the current rune,
// needed for the acronym rule.
func partBoundary(prev, cur runeClass, rest string) bool {
	switch {
	case cur == classIdeograph || prev == classIdeograph:
		return true
	case prev == cur:
		if cur != classUpper {
			return false
		}
		// "HTTPServer": the last capital of an acronym starts the next
		// word when a lowercase letter follows it.
		if rest == "" {
			return false
		}
		r := rune(rest[0])
		if r >= utf8.RuneSelf {
			r, _ = utf8.DecodeRuneInString(rest)
		}
		return classify(r) == classLower
	case prev == classUpper && cur == classLower:
		return false // "Auth": capital then lowercase is one word
	default:
		// lower->Upper (authService), letter<->digit (oauth2, v2), cased
		// <-> uncased script changes.
		return true
	}
}

// featurizer accumulates the hashed features of one text. It lives on the
// stack of EmbedInto; nothing in it allocates.
type featurizer struct {
	v   []float32
	dim uint64
	any bool

	prevWord    uint64 // raw unigram hash of the previous content word
	hasPrevWord bool

	compound      uint64 // running FNV state over the current identifier's parts
	compoundParts int
}

// part adds the features of one word part (original case; lowercased here).
func (f *featurizer) part(s string) {
	h := uint64(fnvOffset64)
	c := f.compound
	for _, r := range pluralStem(s) {
		r = unicode.ToLower(r)
		h = fnvRune(h, r)
		c = fnvRune(c, r)
	}
	n := utf8.RuneCountInString(s)
	f.compound = c
	f.compoundParts++
	f.any = true

	for _, sw := range stopwordHashes {
		if h == sw {
			f.add(h^kindUnigram, wStopword)
			return
		}
	}
	f.add(h^kindUnigram, wUnigram)
	if f.hasPrevWord {
		f.add((f.prevWord*kindUnigram+h)^kindBigram, wBigram)
	}
	f.prevWord, f.hasPrevWord = h, true

	// Trigrams over "<" + word + ">": a word of n runes has n of them. Three
	// runes (21 bits each) pack losslessly into one uint64 key.
	w := float32(wTrigramWord / math.Sqrt(float64(n)))
	x, y := rune(-1), rune('<') // the two symbols before the current rune
	for _, r := range s {
		r = unicode.ToLower(r)
		if x >= 0 {
			f.add(trigramKey(x, y, r), w)
		}
		x, y = y, r
	}
	f.add(trigramKey(x, y, '>'), w)
}

// pluralStem strips an English plural "s" so that "tokens" and "token"
// share their unigram ("services"/"service", "LoginTokens"/"login_token").
// It is deliberately crude: the same rule applies to both sides of every
// comparison, so an odd stem ("kubernete") costs nothing, and words ending
// in "ss", "us" or "is" (class, status, redis) or shorter than four bytes
// keep their s. Trigrams still see the full word.
func pluralStem(s string) string {
	n := len(s)
	if n < 4 || (s[n-1] != 's' && s[n-1] != 'S') {
		return s
	}
	switch s[n-2] | 0x20 { // ASCII lowercase; non-ASCII bytes stay >= 0x80
	case 's', 'u', 'i':
		return s
	}
	return s[:n-1]
}

// endCompound closes the current identifier; if it had several parts, the
// concatenation of its parts is added as one more word.
func (f *featurizer) endCompound() {
	if f.compoundParts > 1 {
		f.add(f.compound^kindUnigram, wCompound)
	}
	f.compound = fnvOffset64
	f.compoundParts = 0
}

// add hashes key to a bucket and a sign and adds w there.
func (f *featurizer) add(key uint64, w float32) {
	h := fmix64(key)
	// Lemire's multiply-shift maps the high 32 bits onto [0, dim) without
	// a division; the low bit, independent of them, is the sign.
	b := (h >> 32) * f.dim >> 32
	if h&1 != 0 {
		w = -w
	}
	f.v[b] += w
}

func trigramKey(a, b, c rune) uint64 {
	return (uint64(a) | uint64(b)<<21 | uint64(c)<<42) ^ kindTrigram
}

// fnvRune feeds one rune to an FNV-1a state: ASCII as its byte, other runes
// as three bytes whose first has the high bit set, so the byte streams of
// ASCII and non-ASCII runes never coincide.
func fnvRune(h uint64, r rune) uint64 {
	if r < utf8.RuneSelf {
		return (h ^ uint64(r)) * fnvPrime64
	}
	h = (h ^ uint64(0x80|r&0x7f)) * fnvPrime64
	h = (h ^ uint64(byte(r>>7))) * fnvPrime64
	return (h ^ uint64(byte(r>>15))) * fnvPrime64
}

// fmix64 is the murmur3 finaliser: FNV-1a alone mixes poorly into the high
// bits for short inputs, and the bucket comes from the high bits.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
