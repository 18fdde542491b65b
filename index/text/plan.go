package text

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"weak"

	"github.com/blevesearch/bleve/v2/index/scorch"
)

// DefaultMaxPostings is the posting budget of a search when
// Options.MaxPostings is zero: the summed document frequencies of the
// (field, term) pairs a search scores. See the package documentation
// ("Bounded query cost") for how it was chosen.
const DefaultMaxPostings = 4_000

// rarestCapFactor: the rarest term of a query is searched even when it
// alone exceeds the budget, as long as it has at most rarestCapFactor
// times the budget postings (see selectTerms).
const rarestCapFactor = 3

// maxShingleWords is the longest run of consecutive query words whose
// concatenation is looked up in the name fields ("payments gateway
// service" -> "paymentsgatewayservice", the concatenated-name term of
// PaymentsGatewayService).
const maxShingleWords = 4

// Stats describes how one search used the index.
type Stats struct {
	// TermsKept is the number of distinct (field, term) pairs searched.
	TermsKept int
	// TermsDropped is the number of (field, term) pairs that occur in the
	// index but were not searched: too common for the posting budget.
	TermsDropped int
	// Postings is the number of postings of the searched terms (the sum of
	// their document frequencies over the whole index): what the search
	// decodes and scores at most. Re-ranking with dropped terms reads their
	// postings bitmaps, not their postings, and is not counted.
	Postings uint64
}

// qterm is one distinct analysed term of the query in one field.
type qterm struct {
	field uint8   // index into textFields
	term  string  // analysed term
	mult  float64 // occurrences among the field's base tokens (1 for identifier terms)
	df    uint64  // document frequency in the field, whole index
}

// textFields are the searched fields and their boosts (see boostName).
var textFields = [...]struct {
	name  string
	boost float64
}{
	{fieldName, boostName},
	{fieldAliases, boostAliases},
	{fieldType, boostType},
	{fieldDesc, boostDesc},
}

// numTextFields is len(textFields).
const numTextFields = len(textFields)

// queryTerms is the analysed query: every distinct term of every text field.
type queryTerms struct {
	terms []qterm
	// base is, per field, the number of tokens the field's analyzer makes
	// of the query (repeats included): the denominator of the field's
	// coord factor, as if each token were one clause of a match query.
	base [numTextFields]int
}

// analyseQuery analyses q for every text field. Name fields (name,
// aliases) get the name analyzer's tokens of the whole text (its parts and
// the concatenation of all of them) plus identifier terms (see
// identifierTerms); type gets the name analyzer's tokens; description the
// text analyzer's.
func (ix *Index) analyseQuery(qt *queryTerms, q string) {
	qt.terms = qt.terms[:0]
	qt.base = [numTextFields]int{}
	// Analyzers may rewrite their input: each gets its own copy.
	nameToks := ix.nameAn.Analyze([]byte(q))
	textToks := ix.textAn.Analyze([]byte(q))
	var ident []identTerm
	if len(nameToks) > 0 {
		ident = identifierTerms(q)
	}
	for f := range textFields {
		start := len(qt.terms)
		add := func(term []byte) {
			for i := start; i < len(qt.terms); i++ {
				if qt.terms[i].term == string(term) {
					qt.terms[i].mult++
					return
				}
			}
			qt.terms = append(qt.terms, qterm{field: uint8(f), term: string(term), mult: 1})
		}
		switch textFields[f].name {
		case fieldDesc:
			for _, t := range textToks {
				add(t.Term)
			}
			qt.base[f] = len(textToks)
		default:
			for _, t := range nameToks {
				add(t.Term)
			}
			qt.base[f] = len(nameToks)
			if textFields[f].name == fieldType {
				continue
			}
		ident:
			for _, t := range ident {
				for i := start; i < len(qt.terms); i++ {
					if qt.terms[i].term == t.term {
						continue ident
					}
				}
				mult := 1.0
				if t.verbatim {
					mult = verbatimBoost
				}
				qt.terms = append(qt.terms, qterm{field: uint8(f), term: t.term, mult: mult})
			}
		}
	}
}

// identifierTerms returns the concatenated-name terms a query may contain
// beyond the name analyzer's: the name analyzer treats the whole query as
// one name, so for "why is DecodePriceLinks slow" it yields the parts and
// "whyisdecodepricelinksslow", never "decodepricelinks", the term only
// the node DecodePriceLinks has. identifierTerms returns, lowercase, the
// concatenated parts of every whitespace-separated word that has several
// parts ("decodepricelinks", "pkgpaymentsretry" for pkg/payments/retry),
// and of every run of 2 to maxShingleWords consecutive words without a
// stop word ("payments gateway service" -> "paymentsgatewayservice").
// Possessives are trimmed as in prose. Terms longer than maxTermBytes are
// left out; duplicates are not removed.
func identifierTerms(q string) []identTerm {
	type word struct {
		start, end, parts int // bytes of buf, number of parts
		stop              bool
	}
	var wordsStack [32]word
	var partsStack [16]span
	words := wordsStack[:0]
	buf := make([]byte, 0, len(q)+8)
	for i, j := nextField(q, 0); i < len(q); i, j = nextField(q, j) {
		w := trimPossessive(q[i:j])
		parts := appendParts(partsStack[:0], w)
		if len(parts) > 0 {
			start := len(buf)
			for _, p := range parts {
				buf = appendLower(buf, w[p.start:p.end])
			}
			words = append(words, word{start, len(buf), len(parts), len(parts) == 1 && functionWords[string(buf[start:])]})
		}
	}
	var out []identTerm
	for i, w := range words {
		if w.parts > 1 && w.end-w.start <= maxTermBytes {
			out = append(out, identTerm{string(buf[w.start:w.end]), true})
		}
		for n := 2; n <= maxShingleWords && i+n <= len(words); n++ {
			if words[i+n-1].stop || w.stop {
				break // (a run with a stop word inside is skipped below)
			}
			if slices.ContainsFunc(words[i+1:i+n-1], func(w word) bool { return w.stop }) {
				break
			}
			// Words are contiguous in buf.
			start, end := w.start, words[i+n-1].end
			if end-start > maxTermBytes {
				break
			}
			out = append(out, identTerm{string(buf[start:end]), false})
		}
	}
	return out
}

// identTerm is one identifier term of a query; verbatim when it is the
// concatenation of one written word (ParseInvoiceLine, pkg/payments/api)
// rather than of a run of words.
type identTerm struct {
	term     string
	verbatim bool
}

// verbatimBoost multiplies the weight of verbatim identifier terms: a
// name written as one word ("ParseInvoiceLine") names its node more surely
// than the words of the query around it, which may name others ("fix
// timeout in ParseInvoiceLine in the payments service" must rank the
// function above PaymentsService). Measured on synthetic code-graph
// queries about one node each: with 1 the named function ranks first for
// 7% of such queries, with 3 for 94%.
const verbatimBoost = 3.0

// dfCache caches document frequencies for one index snapshot. A scorch
// snapshot is immutable, so a (field, term) count read from it stays
// exact for as long as searches use that snapshot; the first search on a
// new snapshot (after any write or merge) starts a fresh cache. Common
// query words ("fix", "service", "in") recur in most queries and are
// looked up once per snapshot instead of once per search.
//
// The snapshot is held weakly: the cache must not keep a replaced
// snapshot (and, in memory, its segments) reachable.
type dfCache struct {
	mu   sync.Mutex
	snap weak.Pointer[scorch.IndexSnapshot]
	m    map[dfKey]uint64
}

type dfKey struct {
	field uint8
	term  string
}

// dfCacheMax bounds the entries of one snapshot's cache; when full it is
// emptied (queries are short, so this only happens with very diverse
// query streams on a long-lived snapshot).
const dfCacheMax = 1 << 16

// lookup fills in the df of every term whose field is present, from the
// cache or, for the terms it does not hold, by calling count.
func (c *dfCache) lookup(snap *scorch.IndexSnapshot, terms []qterm, present *[numTextFields]bool, count func(f int, term []byte) (uint64, error)) error {
	wp := weak.Make(snap)
	missing := 0
	c.mu.Lock()
	if c.snap != wp {
		c.snap, c.m = wp, nil
	}
	for i := range terms {
		t := &terms[i]
		if !present[t.field] {
			t.df = 0
			continue
		}
		df, ok := c.m[dfKey{t.field, t.term}]
		if !ok {
			df = math.MaxUint64
			missing++
		}
		t.df = df
	}
	c.mu.Unlock()
	if missing == 0 {
		return nil
	}
	var buf []byte
	for i := range terms {
		t := &terms[i]
		if t.df != math.MaxUint64 {
			continue
		}
		buf = append(buf[:0], t.term...)
		df, err := count(int(t.field), buf)
		if err != nil {
			return err
		}
		t.df = df
	}
	c.mu.Lock()
	if c.snap == wp {
		if c.m == nil || len(c.m)+missing > dfCacheMax {
			c.m = make(map[dfKey]uint64, 256)
		}
		for i := range terms {
			if present[terms[i].field] {
				c.m[dfKey{terms[i].field, terms[i].term}] = terms[i].df
			}
		}
	}
	c.mu.Unlock()
	return nil
}

// selectTerms decides which terms a search scores, given their document
// frequencies (terms with df 0 match nothing and are never kept). It
// returns the indexes of the kept terms, rarest first, and the stats.
//
// The rule: take the terms in increasing df (decreasing IDF) order and
// keep each while the kept dfs sum to at most budget; stop at the first
// that does not fit (every later term is at least as common). If even
// the rarest term exceeds the budget it is kept alone provided its df is
// at most rarestCapFactor*budget; otherwise nothing is kept and the text
// search returns no hits. budget < 0 keeps every term.
func selectTerms(terms []qterm, budget int, kept []int) ([]int, Stats) {
	var st Stats
	kept = kept[:0]
	for i := range terms {
		if terms[i].df > 0 {
			kept = append(kept, i)
		}
	}
	slices.SortFunc(kept, func(a, b int) int {
		ta, tb := &terms[a], &terms[b]
		if c := cmp.Compare(ta.df, tb.df); c != 0 {
			return c
		}
		if c := cmp.Compare(ta.field, tb.field); c != 0 {
			return c
		}
		return cmp.Compare(ta.term, tb.term)
	})
	n := len(kept)
	if budget >= 0 {
		b := uint64(budget)
		var sum uint64
		i := 0
		for ; i < n; i++ {
			df := terms[kept[i]].df
			if sum+df > b {
				break
			}
			sum += df
		}
		if i == 0 && n > 0 && terms[kept[0]].df <= b*rarestCapFactor {
			i = 1
		}
		kept = kept[:i]
	}
	st.TermsKept = len(kept)
	st.TermsDropped = n - len(kept)
	for _, i := range kept {
		st.Postings += terms[i].df
	}
	return kept, st
}
