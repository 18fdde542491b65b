package relevance

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// stopWords is a small English function-word list. Only grammar words are
// in it: nothing here is a word of a dataset's vocabulary, so dropping them
// cannot favour one set.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the of in on at for and or to by from with as is are was were be been
		being what which who whom whose when where why how did does do done that this these those it its i me my
		you your he him his she her they them their we our us there than then has have had not no can could
		would should will shall about into also so if but any all some`) {
		stopWords[w] = true
	}
}

// tokenize appends s's terms to dst: lower-cased runs of letters and
// digits, split at camelCase boundaries ("getURLQuery" gives get, url,
// query) and at every other character (so snake_case and dotted paths
// split too), stop words dropped, each term stemmed. Both the documents
// and the queries of every baseline go through it.
func tokenize(dst []string, s string) []string {
	var word []rune
	flush := func() {
		if len(word) == 0 {
			return
		}
		w := strings.ToLower(string(word))
		word = word[:0]
		if stopWords[w] {
			return
		}
		dst = append(dst, stem(w))
	}
	prev := rune(-1)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			prev = -1
			continue
		}
		if unicode.IsUpper(r) && prev >= 0 {
			next, _ := utf8.DecodeRuneInString(s[i:])
			// aB starts a word; so does the last capital of ABc (URLQuery).
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next)) {
				flush()
			}
		}
		word = append(word, r)
		prev = r
	}
	flush()
	return dst
}

// stem is a minimal plural stemmer, applied to queries and documents alike
// ("languages" and "language" meet; "genres" and "genre"): -ies becomes -y,
// a final -s goes unless the word ends in -ss, -us or -is or is short.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && w[len(w)-1] == 's' && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// BM25 parameters (Okapi defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

type posting struct {
	doc uint32
	tf  uint32
}

// bm25 is an Okapi BM25 index over documents given as term lists.
// Documents are numbered in the order they were added; scores are
// deterministic (a query's terms are scored in first-occurrence order).
type bm25 struct {
	postings map[string][]posting
	docLen   []uint32
	totalLen float64
	// scratch for search
	acc     []float64
	touched []uint32
}

func newBM25() *bm25 { return &bm25{postings: map[string][]posting{}} }

// add appends a document with terms; it returns the document's number.
func (x *bm25) add(terms []string) uint32 {
	d := uint32(len(x.docLen))
	x.docLen = append(x.docLen, uint32(len(terms)))
	x.totalLen += float64(len(terms))
	for i, t := range terms {
		dup := false
		for _, u := range terms[:i] {
			if u == t {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		tf := uint32(0)
		for _, u := range terms[i:] {
			if u == t {
				tf++
			}
		}
		x.postings[t] = append(x.postings[t], posting{d, tf})
	}
	return d
}

// search scores every document sharing a term with query (duplicate query
// terms count once) and calls fn for each with a positive score, in no
// particular order.
func (x *bm25) search(query []string, fn func(doc uint32, score float64)) {
	n := len(x.docLen)
	if n == 0 {
		return
	}
	if len(x.acc) < n {
		x.acc = make([]float64, n)
	}
	avg := x.totalLen / float64(n)
	for i, t := range query {
		dup := false
		for _, u := range query[:i] {
			if u == t {
				dup = true
				break
			}
		}
		ps := x.postings[t]
		if dup || len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := bm25K1 * (1 - bm25B + bm25B*float64(x.docLen[p.doc])/avg)
			if x.acc[p.doc] == 0 {
				x.touched = append(x.touched, p.doc)
			}
			x.acc[p.doc] += idf * tf * (bm25K1 + 1) / (tf + norm)
		}
	}
	for _, d := range x.touched {
		if s := x.acc[d]; s > 0 {
			fn(d, s)
		}
		x.acc[d] = 0
	}
	x.touched = x.touched[:0]
}
