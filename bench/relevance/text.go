package relevance

import (
	"math"

	"github.com/kgctx/kgctx/index/text"
)

// tokenize appends s's terms to dst: the words kgctx's own analysis reads
// (text.AppendWords: lower-cased identifier parts, so camelCase, snake_case
// and dotted paths split; the stop words of package words dropped; Porter
// stems). Both the documents and the queries of every baseline go through
// it, so a baseline and kgctx differ in how they rank, never in what they
// count as a word.
func tokenize(dst []string, s string) []string { return text.AppendWords(dst, s) }

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
