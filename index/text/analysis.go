package text

import (
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/token/stop"
	"github.com/blevesearch/bleve/v2/registry"

	"github.com/kgctx/kgctx/index/words"
)

// Analyzer names registered in bleve's global registry. The index mapping
// persisted inside an on-disk index refers to them by name, so they must
// never be renamed without bumping schemaVersion.
const (
	// NameAnalyzer analyses names, aliases and types: identifier splitting
	// (see SplitName), lowercase, plus the concatenation of all parts as one
	// extra term so that an exact-name query ("auth service" or
	// "AuthService") hits the "authservice" term that only that entity has.
	// No stop words and no stemming: identifiers are matched literally
	// ("router" must not match "route").
	NameAnalyzer = "kgctx_name"

	// TextAnalyzer analyses descriptions. It is bleve's "en" pipeline
	// (possessive stripping, lowercase, stop words, Porter stemming) except
	// that words are split with the identifier rules instead of Unicode
	// word segmentation, and that the stop words (the function words) and
	// the stemmer are kgctx's own (package words), those of every other
	// analyser.
	// Descriptions of code entities are prose sprinkled with identifiers
	// ("wraps auth_middleware.go for the HTTPServer"); UAX#29 would keep
	// "auth_middleware.go" as one token that no query matches, whereas
	// identifier splitting makes it reachable from "auth middleware", and
	// stemming lets "handles" in a description meet "handle" in a query.
	// On plain English (FB15k descriptions) it behaves like "en".
	TextAnalyzer = "kgctx_text"
)

func init() {
	// Registering twice panics in bleve's registry; init runs once per
	// process, and the names are prefixed to avoid clashing with others.
	if err := registry.RegisterAnalyzer(NameAnalyzer, newNameAnalyzer); err != nil {
		panic("text: " + err.Error())
	}
	if err := registry.RegisterAnalyzer(TextAnalyzer, newTextAnalyzer); err != nil {
		panic("text: " + err.Error())
	}
}

func newNameAnalyzer(map[string]interface{}, *registry.Cache) (analysis.Analyzer, error) {
	return &analysis.DefaultAnalyzer{Tokenizer: identTokenizer{prose: false}}, nil
}

func newTextAnalyzer(map[string]interface{}, *registry.Cache) (analysis.Analyzer, error) {
	return &analysis.DefaultAnalyzer{
		Tokenizer:    identTokenizer{prose: true},
		TokenFilters: []analysis.TokenFilter{stop.NewStopTokensFilter(functionWords), stemFilter{}},
	}, nil
}

// tokenMap is words as bleve's token map.
func tokenMap(ws []string) analysis.TokenMap {
	tm := analysis.NewTokenMap()
	for _, w := range ws {
		tm.AddToken(w)
	}
	return tm
}

// functionWords, the first tier of package words' stop words, are what
// the description analyzer drops, from documents and from queries alike
// (request wording, "find", "new", is what prose can be about, and a
// query's BM25 weighs it by its rarity anyway; the composer drops it from
// the words it matches names by). Runs of query words holding one are not
// looked up as names (identifierTerms): "in the payments service" yields
// only "paymentsservice", not "inthe", "thepayments" and the rest, which
// nearly always exist in no document but cost a lookup per segment.
var functionWords = tokenMap(words.Function())

// stemFilter replaces every term by its stem (words.Stem), the stem the
// composer matches query words by.
type stemFilter struct{}

func (stemFilter) Filter(input analysis.TokenStream) analysis.TokenStream {
	for _, t := range input {
		if t.KeyWord {
			continue
		}
		if st := words.Stem(string(t.Term)); st != string(t.Term) {
			// A stem is never longer than its word, so it is written in
			// place; no other token shares these bytes (emitWord caps
			// every term's capacity).
			t.Term = append(t.Term[:0], st...)
		}
	}
	return input
}

// AppendWords appends to dst the words of s as kgctx reads them
// everywhere: s split like a name (SplitName), stop words dropped, the rest
// stemmed (package words). The composer matches node names by them, and
// the benchmark baselines tokenise documents and questions with them. When
// dst is nil the result reuses SplitName's fresh slice; either way the
// caller owns it.
func AppendWords(dst []string, s string) []string {
	parts := SplitName(s)
	if dst == nil {
		dst = parts[:0] // writes never pass reads
	}
	for _, p := range parts {
		if words.IsStop(p) {
			continue
		}
		dst = append(dst, words.Stem(p))
	}
	return dst
}

// identTokenizer is a bleve tokenizer producing lowercase identifier parts.
//
// Name mode (prose=false) treats the whole input as one name: its parts,
// then the concatenation of the parts when there are at least two.
//
// Prose mode (prose=true) first cuts the input at whitespace into words,
// strips an English possessive ('s) from each word, and emits each word
// like a name (parts, then their concatenation when there are several).
//
// Terms longer than maxTermBytes are dropped. Tokens are lowercased here,
// so no lowercase filter is needed.
type identTokenizer struct{ prose bool }

func (t identTokenizer) Tokenize(input []byte) analysis.TokenStream {
	if len(input) == 0 {
		return nil
	}
	// Read-only view of input for the string-based scanner; nothing here
	// writes to input and nothing retains s after Tokenize returns (terms
	// are copied into buf).
	s := unsafe.String(unsafe.SliceData(input), len(input))

	var stack [32]span
	var parts []span
	if !t.prose {
		parts = appendParts(stack[:0], s)
		if len(parts) == 0 {
			return nil
		}
		buf := make([]byte, 0, len(s)+len(s)+8)
		toks := make([]analysis.Token, 0, len(parts)+1)
		_, toks = emitWord(buf, toks, s, 0, parts)
		return stream(toks)
	}

	buf := make([]byte, 0, len(s)+len(s)/2+8)
	toks := make([]analysis.Token, 0, len(s)/5+4)
	for i, j := nextField(s, 0); i < len(s); i, j = nextField(s, j) {
		word := trimPossessive(s[i:j])
		parts = appendParts(stack[:0], word)
		buf, toks = emitWord(buf, toks, word, i, parts)
	}
	return stream(toks)
}

// nextField returns the bounds [i, j) of the first whitespace-separated
// field of s at or after from; i == len(s) when there is none.
func nextField(s string, from int) (i, j int) {
	i = from
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += size
	}
	for j = i; j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		if unicode.IsSpace(r) {
			break
		}
		j += size
	}
	return i, j
}

// emitWord appends the tokens of one word (parts of word, offsets shifted by
// base) and, when there are several parts, their concatenation.
func emitWord(buf []byte, toks []analysis.Token, word string, base int, parts []span) ([]byte, []analysis.Token) {
	wholeStart := len(buf)
	dropped := false
	for _, p := range parts {
		start := len(buf)
		buf = appendLower(buf, word[p.start:p.end])
		if len(buf)-start > maxTermBytes {
			buf, dropped = buf[:start], true
			continue
		}
		toks = append(toks, analysis.Token{
			Start:    base + p.start,
			End:      base + p.end,
			Term:     buf[start:len(buf):len(buf)],
			Position: len(toks) + 1,
			Type:     tokenType(word[p.start]),
		})
	}
	if len(parts) > 1 && !dropped {
		// The concatenation: a fresh copy, because later filters may rewrite
		// terms in place and must not see aliasing between tokens.
		whole := len(buf) - wholeStart
		if whole <= maxTermBytes {
			start := len(buf)
			buf = append(buf, buf[wholeStart:start]...)
			toks = append(toks, analysis.Token{
				Start:    base + parts[0].start,
				End:      base + parts[len(parts)-1].end,
				Term:     buf[start:len(buf):len(buf)],
				Position: len(toks) + 1,
				Type:     analysis.AlphaNumeric,
			})
		}
	}
	return buf, toks
}

func tokenType(first byte) analysis.TokenType {
	if '0' <= first && first <= '9' {
		return analysis.Numeric
	}
	return analysis.AlphaNumeric
}

// stream converts the token values into bleve's []*Token with one
// allocation for the pointer slice (the tokens themselves live in toks).
func stream(toks []analysis.Token) analysis.TokenStream {
	if len(toks) == 0 {
		return nil
	}
	ts := make(analysis.TokenStream, len(toks))
	for i := range toks {
		ts[i] = &toks[i]
	}
	return ts
}

// trimPossessive strips a trailing 's / ’s / ＇s (any case of s), like
// bleve's possessive_en filter does on whole tokens.
func trimPossessive(w string) string {
	n := len(w)
	if n < 2 || (w[n-1] != 's' && w[n-1] != 'S') {
		return w
	}
	rest := w[:n-1]
	for _, apo := range [...]string{"'", "\u2019", "\uFF07"} {
		if len(rest) > len(apo) && rest[len(rest)-len(apo):] == apo {
			return rest[:len(rest)-len(apo)]
		}
	}
	return w
}
