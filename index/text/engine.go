package text

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bsearch "github.com/blevesearch/bleve/v2/search"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// The search engine: bleve's index (scorch snapshots of zap segments) and
// bleve's BM25, but our own query evaluation. bleve's searchers cost about
// 0.3 µs per posting for a typical multi-field, multi-term query (nested
// disjunction searchers, a DocumentMatch per posting per level, byte-slice
// doc ids compared at every step); this reads the same postings with the
// segments' own iterators, document at a time, in about a quarter of that.
//
// A search has up to three phases per segment:
//
//  1. match: walk the postings of the kept terms (selectTerms) together,
//     skip documents outside the tenant, and score each match;
//  2. re-rank (only when terms were dropped): add to every match of phase
//     1 the contribution of the dropped terms it contains, found by
//     intersecting the matches with the dropped terms' postings bitmaps
//     (no postings are decoded);
//  3. offer every match to the collector.
//
// Without dropped terms the score is exactly the one bleve's searchers
// give the query (TestEngineMatchesBleve compares them): the sum over
// fields f of (sum of the matching term scores) * matched/D_f, times
// fields matched / fields searched.

// kterm is one searched (phase 1) or re-ranking (phase 2) term.
type kterm struct {
	field int
	term  []byte
	qw    float64 // query weight: field boost * multiplicity * idf * queryNorm
	idf   float64
}

// fieldStats are a field's BM25 statistics and coord denominator.
type fieldStats struct {
	avgLen float64 // bleve's avgDocLength: ceil(field cardinality / doc count)
	base   float64 // D_f: the field's coord denominator (queryTerms.base)
}

// cursor is the position of one kept term's postings in one segment.
type cursor struct {
	it   segment.PostingsIterator
	t    *kterm
	doc  uint64
	freq uint64
	// lenBits is the field length as zap stores it (the norm's bits), or
	// noLenBits when the posting does not expose it; norm is then set.
	lenBits uint64
	norm    float64
}

const (
	docDone   = math.MaxUint64
	noLenBits = math.MaxUint64
)

// normBitser is implemented by zap's postings: the stored norm bits,
// which are the field length, without the float conversions of Norm.
type normBitser interface{ NormUint64() uint64 }

func (c *cursor) next() error {
	p, err := c.it.Next()
	if err != nil {
		return err
	}
	if p == nil {
		c.doc = docDone
		return nil
	}
	c.doc, c.freq = p.Number(), p.Frequency()
	if nb, ok := p.(normBitser); ok {
		c.lenBits = nb.NormUint64()
	} else {
		c.lenBits, c.norm = noLenBits, p.Norm()
	}
	return nil
}

// match is a phase-1 match awaiting re-ranking.
type match struct {
	doc uint32
	cnt [numTextFields]uint16 // matching terms per field
	// lenBits+1 of the field, when a kept term matched in it (0: unknown);
	// used to length-normalise the dropped terms.
	lenp1 [numTextFields]uint32
	sum   [numTextFields]float64 // term scores per field
}

// forceTenantFilter makes tests check the tenant of every match even in
// segments entirely inside the tenant.
var forceTenantFilter = false

// maxRerankTerms and maxRerankDF bound phase 2: the rarest
// maxRerankTerms dropped terms re-rank, and only terms in at most
// maxRerankDF of the documents (a term in more has an idf below 0.7 and
// nearly every match has it, so it hardly reorders them).
const (
	maxRerankTerms = 8
	maxRerankDF    = 0.5
)

// rerankDropped enables phase 2 (tests turn it off to compare phase 1
// with bleve).
var rerankDropped = true

// engineScratch is the per-search memory, pooled.
type engineScratch struct {
	qt      queryTerms
	freqs   *TermFreqs // the search's Filter.Freqs
	kept    []int
	isKept  []bool // by index in qt.terms
	dropped []int
	kt      []kterm // kept terms, then dropped ones (kt[nKept:])
	cursors []cursor
	pls     []segment.PostingsList
	its     []segment.PostingsIterator
	// dicts are the segments' dictionaries, [segment*dictCols+field], the
	// last column the tenant field's (dictTenant). They outlive a search:
	// a row is kept while the next snapshot searched holds the segment it
	// was opened on (dictSegs), since opening one costs a vellum reader.
	// The snapshot searched holds its segments open, and a kept segment
	// is never a new one (the pointer is held), so a row of a segment
	// since closed is dropped, never read.
	dicts      []segment.TermDictionary
	dictSegs   []segment.Segment
	dictTenant string
	matches    []match
	docs       []uint32
	// post walks a dropped term's postings bitmap in rerank (reused: no
	// allocation per term).
	post roaring.IntIterator
	// tpl and tit are the tenant's postings and their iterator, reused
	// from segment to segment of a search.
	tpl segment.PostingsList
	tit segment.PostingsIterator
	den [numTextFields][denTableSize]float64 // see termScore
	sat [numTextFields][denTableSize]float64 // see sat1
}

var scratchPool = sync.Pool{New: func() any { return new(engineScratch) }}

// dictCols is the dictionaries kept a segment: the text fields' and the
// tenant field's.
const dictCols = numTextFields + 1

// release drops the scratch's references into the snapshot's segments,
// but for their dictionaries (see dicts), and returns it to the pool.
func (sc *engineScratch) release() {
	sc.freqs = nil
	clear(sc.pls[:cap(sc.pls)])
	clear(sc.its[:cap(sc.its)])
	clear(sc.cursors[:cap(sc.cursors)])
	for i := range sc.kt {
		sc.kt[i].term = nil
	}
	sc.post = roaring.IntIterator{}
	sc.tpl, sc.tit = nil, nil
	if cap(sc.matches) > 1<<16 {
		sc.matches = nil // do not pool a huge one
	}
	scratchPool.Put(sc)
}

// evaluation is one search on one snapshot.
type evaluation struct {
	ctx    context.Context
	segs   []*scorch.SegmentSnapshot
	sc     *engineScratch
	nKept  int // sc.kt[:nKept] are searched, sc.kt[nKept:] re-rank
	fields [numTextFields]fieldStats
	nField float64 // fields with a term in the index: outer coord denominator
	den    *[numTextFields][denTableSize]float64
	sat    *[numTextFields][denTableSize]float64
}

// dict returns segment i's dictionary of field f (numTextFields: the
// tenant field's), opened once for as long as the scratch searches
// snapshots holding the segment (keepDicts).
func (e *evaluation) dict(i, f int) (segment.TermDictionary, error) {
	slot := i*dictCols + f
	if d := e.sc.dicts[slot]; d != nil {
		return d, nil
	}
	name := e.sc.dictTenant
	if f < numTextFields {
		name = textFields[f].name
	}
	d, err := e.segs[i].Segment().Dictionary(name)
	if err != nil {
		return nil, err
	}
	e.sc.dicts[slot] = d
	return d, nil
}

// keepDictionaries lets a scratch keep its dictionaries between searches
// (tests turn it off for the reference: every search opens its own).
var keepDictionaries = true

// keepDicts lines sc's dictionaries up with segs: a row stays while its
// segment is segs' at the same place, the tenant column while the tenant
// field is the same; the rest is dropped.
func (sc *engineScratch) keepDicts(segs []*scorch.SegmentSnapshot, tenantField string) {
	if !keepDictionaries {
		clear(sc.dicts[:cap(sc.dicts)])
	}
	nd := len(segs) * dictCols
	if cap(sc.dicts) < nd {
		d := make([]segment.TermDictionary, nd)
		copy(d, sc.dicts[:cap(sc.dicts)])
		sc.dicts = d
		g := make([]segment.Segment, len(segs))
		copy(g, sc.dictSegs[:cap(sc.dictSegs)])
		sc.dictSegs = g
	}
	clear(sc.dicts[nd:cap(sc.dicts)])
	sc.dicts = sc.dicts[:nd]
	clear(sc.dictSegs[len(segs):cap(sc.dictSegs)])
	sc.dictSegs = sc.dictSegs[:len(segs)]
	for i, s := range segs {
		if seg := s.Segment(); sc.dictSegs[i] != seg {
			clear(sc.dicts[i*dictCols : (i+1)*dictCols])
			sc.dictSegs[i] = seg
		}
	}
	if sc.dictTenant != tenantField {
		for i := range segs {
			sc.dicts[i*dictCols+numTextFields] = nil
		}
		sc.dictTenant = tenantField
	}
}

// deleted is segment s's deletion bitmap, nil when it has none: zap
// copies a postings bitmap minus the deletions into every iterator made
// with a non-nil one.
func deleted(s *scorch.SegmentSnapshot) *roaring.Bitmap {
	if d := s.Deleted(); d != nil && !d.IsEmpty() {
		return d
	}
	return nil
}

// df counts the live documents having term in field f.
func (e *evaluation) df(f int, term []byte) (uint64, error) {
	var n uint64
	for i, s := range e.segs {
		d, err := e.dict(i, f)
		if err != nil {
			return 0, err
		}
		pl, err := d.PostingsList(term, deleted(s), nil)
		if err != nil {
			return 0, err
		}
		n += pl.Count()
	}
	return n, nil
}

// run evaluates the query terms of sc.qt on snap and offers every match
// in the tenant (the documents having tenantTerm in tenantField) to col.
func (ix *Index) run(ctx context.Context, snap *scorch.IndexSnapshot, sc *engineScratch, tenantField string, tenantTerm []byte, col *collector) (Stats, error) {
	e := evaluation{ctx: ctx, segs: snap.Segments(), sc: sc, den: &sc.den, sat: &sc.sat}
	clear(sc.den[:])
	clear(sc.sat[:])
	sc.keepDicts(e.segs, tenantField)

	n, err := snap.DocCount()
	if err != nil || n == 0 {
		return Stats{}, err
	}
	var present [numTextFields]bool
	var card [numTextFields]int
	for f := range textFields {
		c, err := snap.FieldCardinality(textFields[f].name)
		if err != nil {
			return Stats{}, err
		}
		card[f], present[f] = c, c > 0
	}
	qt := &sc.qt
	if err := ix.dfs.lookup(snap, qt.terms, &present, e.df); err != nil {
		return Stats{}, err
	}
	if fr := sc.freqs; fr != nil {
		fr.Docs = n
		if fr.Name == nil {
			fr.Name = map[string]uint64{}
		}
		clear(fr.Name)
		for _, t := range qt.terms {
			if textFields[t.field].name == fieldName {
				fr.Name[t.term] = t.df
			}
		}
	}
	var st Stats
	sc.kept, st = selectTerms(qt.terms, ix.maxPostings, sc.kept)
	if len(sc.kept) == 0 {
		return st, nil
	}
	e.weigh(qt, n, &card)

	ids := ix.ids.forSnapshot(snap)
	for i, s := range e.segs {
		col.startSegment(s, ids[i])
		if err := e.segment(i, s, tenantField, tenantTerm, col); err != nil {
			return st, err
		}
		if err := col.endSegment(); err != nil {
			return st, err
		}
	}
	return st, nil
}

// weigh fills sc.kt with the kept terms and, when re-ranking, the dropped
// ones, and computes their weights exactly as bleve's term and
// disjunction searchers would for the kept terms (see textSearcher in the
// tests): bleve's query norm is 1/sqrt(sum of (boost*idf)^2) over the
// kept terms, where a term's boost in the equivalent searcher tree is
// field boost * multiplicity * C_f/D_f (C_f: kept terms of the field).
func (e *evaluation) weigh(qt *queryTerms, n uint64, card *[numTextFields]int) {
	sc := e.sc
	var kept [numTextFields]int
	isKept := sc.isKept[:0]
	for range qt.terms {
		isKept = append(isKept, false)
	}
	sc.isKept = isKept
	for _, i := range sc.kept {
		kept[qt.terms[i].field]++
		isKept[i] = true
	}
	idf := func(df uint64) float64 {
		return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
	}
	sc.kt = sc.kt[:0]
	sumW := 0.0
	var inQuery [numTextFields]bool
	add := func(i int) {
		t := &qt.terms[i]
		f := int(t.field)
		inQuery[f] = true
		boost := textFields[f].boost * t.mult
		w := idf(t.df)
		if isKept[i] {
			bw := boost * float64(kept[f]) / float64(max(qt.base[f], 1)) * w
			sumW += bw * bw
		}
		sc.kt = append(sc.kt, kterm{field: f, term: []byte(t.term), qw: boost * w, idf: w})
	}
	for _, i := range sc.kept {
		add(i)
	}
	e.nKept = len(sc.kt)
	if rerankDropped {
		dropped := sc.dropped[:0]
		for i := range qt.terms {
			if df := qt.terms[i].df; df > 0 && !isKept[i] && float64(df) <= maxRerankDF*float64(n) {
				dropped = append(dropped, i)
			}
		}
		slices.SortFunc(dropped, func(a, b int) int { return cmp.Compare(qt.terms[a].df, qt.terms[b].df) })
		for _, i := range dropped[:min(len(dropped), maxRerankTerms)] {
			add(i)
		}
		sc.dropped = dropped
	}
	qnorm := 1 / math.Sqrt(sumW)
	for i := range sc.kt {
		sc.kt[i].qw *= qnorm
	}
	for f := range e.fields {
		if inQuery[f] {
			e.nField++
			e.fields[f].avgLen = math.Ceil(float64(card[f]) / float64(n))
			e.fields[f].base = float64(max(qt.base[f], 1))
		}
	}
}

// segment evaluates segment i (phases 1 to 3).
func (e *evaluation) segment(i int, s *scorch.SegmentSnapshot, tenantField string, tenantTerm []byte, col *collector) error {
	sc := e.sc
	del := deleted(s)

	// The tenant's postings in this segment, advanced in step with the
	// matches (roaring skips, no frequencies decoded); nil when every live
	// document of the segment is in the tenant.
	var tenant segment.PostingsIterator
	tenantDoc := uint64(0)
	td, err := e.dict(i, numTextFields)
	if err != nil {
		return err
	}
	tpl, err := td.PostingsList(tenantTerm, del, sc.tpl)
	if err != nil {
		return err
	}
	sc.tpl = tpl
	switch tc := tpl.Count(); {
	case tc == 0:
		return nil
	case tc == s.Count() && !forceTenantFilter:
	default:
		tenant = tpl.Iterator(false, false, false, sc.tit)
		sc.tit = tenant
		p, err := tenant.Next()
		if err != nil || p == nil {
			return err
		}
		tenantDoc = p.Number()
	}

	nk := e.nKept
	if cap(sc.pls) < len(sc.kt) {
		sc.pls = make([]segment.PostingsList, len(sc.kt))
		sc.its = make([]segment.PostingsIterator, len(sc.kt))
	}
	sc.pls, sc.its = sc.pls[:len(sc.kt)], sc.its[:len(sc.kt)]
	cur := sc.cursors[:0]
	for j := range sc.kt[:nk] {
		t := &sc.kt[j]
		d, err := e.dict(i, t.field)
		if err != nil {
			return err
		}
		pl, err := d.PostingsList(t.term, del, sc.pls[j])
		if err != nil {
			return err
		}
		sc.pls[j] = pl
		if pl.Count() == 0 {
			continue
		}
		it := pl.Iterator(true, true, false, sc.its[j])
		sc.its[j] = it
		c := cursor{it: it, t: t}
		if err := c.next(); err != nil {
			return err
		}
		if c.doc != docDone {
			cur = append(cur, c)
		}
	}
	sc.cursors = cur[:0]
	if len(cur) == 0 {
		return nil
	}
	rerank := len(sc.kt) > nk
	matches := sc.matches[:0]

	var m match
	for steps := 1; len(cur) > 0; steps++ {
		if steps&4095 == 0 {
			if err := e.ctx.Err(); err != nil {
				return err
			}
		}
		doc := cur[0].doc
		for j := 1; j < len(cur); j++ {
			doc = min(doc, cur[j].doc)
		}
		inTenant := true
		if tenant != nil {
			if tenantDoc < doc {
				p, err := tenant.Advance(doc)
				if err != nil {
					return err
				}
				if p == nil {
					tenantDoc = docDone
				} else {
					tenantDoc = p.Number()
				}
			}
			inTenant = tenantDoc == doc
		}
		for j := 0; j < len(cur); {
			c := &cur[j]
			if c.doc != doc {
				j++
				continue
			}
			if inTenant {
				f := c.t.field
				m.sum[f] += e.termScore(c)
				m.cnt[f]++
				if c.lenBits < math.MaxUint32 {
					m.lenp1[f] = uint32(c.lenBits) + 1
				}
			}
			if err := c.next(); err != nil {
				return err
			}
			if c.doc == docDone {
				// Removed in place, not swapped with the last: a
				// document's term scores are summed in the terms' order,
				// whatever other documents the segment holds, so its
				// score's last bits (and so ties) do not depend on how
				// the index happened to be cut into segments.
				cur = slices.Delete(cur, j, j+1)
				continue
			}
			j++
		}
		if !inTenant {
			if tenantDoc == docDone {
				break // no tenant document left in this segment
			}
			continue
		}
		if rerank {
			m.doc = uint32(doc)
			matches = append(matches, m)
		} else if err := col.offer(doc, e.score(&m)); err != nil {
			return err
		}
		m = match{}
	}
	sc.matches = matches
	if !rerank || len(matches) == 0 {
		return nil
	}
	if err := e.rerank(i, matches); err != nil {
		return err
	}
	for j := range matches {
		if err := col.offer(uint64(matches[j].doc), e.score(&matches[j])); err != nil {
			return err
		}
	}
	return nil
}

// score combines a match's per-field term scores like bleve's nested
// disjunctions: sum over fields of sum*matched/D_f, times the outer coord.
func (e *evaluation) score(m *match) float64 {
	score, matched := 0.0, 0
	for f := range m.sum {
		if m.cnt[f] == 0 {
			continue
		}
		score += m.sum[f] * float64(m.cnt[f]) / e.fields[f].base
		matched++
	}
	if e.nField > 1 {
		score *= float64(matched) / e.nField
	}
	return score
}

// rerank is phase 2 for segment i: every dropped term adds to the matches
// containing it its BM25 score for a term frequency of 1 and the field
// length known from phase 1 (the average length when no kept term matched
// that field). The matches containing a term are the intersection of
// their list with the term's postings bitmap, the postings skipped to each
// match in turn (no bitmap is built), so the cost is a search per match and
// dropped term, whatever the term's document frequency.
func (e *evaluation) rerank(i int, matches []match) error {
	sc := e.sc
	docs := sc.docs[:0]
	for j := range matches {
		docs = append(docs, matches[j].doc)
	}
	sc.docs = docs // ascending
	for j := e.nKept; j < len(sc.kt); j++ {
		t := &sc.kt[j]
		d, err := e.dict(i, t.field)
		if err != nil {
			return err
		}
		// No deletion bitmap: the matches are live documents, and without
		// one the iterator exposes the postings bitmap itself (no copy).
		pl, err := d.PostingsList(t.term, nil, sc.pls[j])
		if err != nil {
			return err
		}
		sc.pls[j] = pl
		if pl.Count() == 0 {
			continue
		}
		it := pl.Iterator(false, false, false, sc.its[j])
		sc.its[j] = it
		w := t.qw * t.idf
		add := func(k int) {
			m := &matches[k]
			f := t.field
			m.sum[f] += w * e.sat1(f, m.lenp1[f])
			m.cnt[f]++
		}
		oi, ok := it.(segment.OptimizablePostingsIterator)
		if !ok {
			// Not zap: walk the postings (never happens with scorch).
			k := 0
			for p, err := it.Next(); p != nil || err != nil; p, err = it.Next() {
				if err != nil {
					return err
				}
				for k < len(docs) && uint64(docs[k]) < p.Number() {
					k++
				}
				if k < len(docs) && uint64(docs[k]) == p.Number() {
					add(k)
				}
			}
			continue
		}
		if doc, ok := oi.DocNum1Hit(); ok {
			if k, found := slices.BinarySearch(docs, uint32(doc)); found {
				add(k)
			}
			continue
		}
		bm := oi.ActualBitmap()
		if bm == nil {
			continue
		}
		eachCommon(&sc.post, bm, docs, add)
	}
	return nil
}

// eachCommon calls fn(k), k ascending, for each docs[k] in bm; docs must
// be ascending. It skips it through bm's containers from match to match
// (it reuses it, allocating nothing), where building a bitmap of docs and
// intersecting it with bm allocated both.
func eachCommon(it *roaring.IntIterator, bm *roaring.Bitmap, docs []uint32, fn func(k int)) {
	it.Initialize(bm)
	for k, doc := range docs {
		it.AdvanceIfNeeded(doc)
		if !it.HasNext() {
			return
		}
		if it.PeekNext() == doc {
			fn(k)
		}
	}
}

// termScore is bleve's BM25 term score (scorer.TermQueryScorer) of the
// cursor's current posting, with the same operations in the same order,
// so scores are bit-identical to bleve's term scores.
func (e *evaluation) termScore(c *cursor) float64 {
	var tf float64
	if c.freq < uint64(len(sqrtCache)) {
		tf = sqrtCache[c.freq]
	} else {
		tf = math.Sqrt(float64(c.freq))
	}
	f := c.t.field
	var den float64
	if c.lenBits != noLenBits {
		den = e.den1(f, c.lenBits)
	} else {
		den = e.lengthNorm(f, c.norm)
	}
	score := c.t.idf * (tf * bsearch.BM25_k1) / (tf + den)
	if c.t.qw != 1 {
		score *= c.t.qw
	}
	return score
}

// sat1 is k1/(1+den), the BM25 saturation of a term frequency of 1, for
// a stored field length lenp1-1 of field f, or for the field's average
// length when lenp1 is 0 (unknown).
func (e *evaluation) sat1(f int, lenp1 uint32) float64 {
	if lenp1 >= denTableSize {
		return bsearch.BM25_k1 / (1 + e.den1(f, uint64(lenp1-1)))
	}
	v := e.sat[f][lenp1]
	if v == 0 {
		den := bsearch.BM25_k1 // k1*(1-b+b*avg/avg)
		if lenp1 != 0 {
			den = e.den1(f, uint64(lenp1-1))
		}
		v = bsearch.BM25_k1 / (1 + den)
		e.sat[f][lenp1] = v
	}
	return v
}

// denTableSize bounds the field lengths whose normalisation is tabled.
const denTableSize = 64

// den1 is the length normalisation of field f for a stored field length,
// from a per-search table for short fields (the common case).
func (e *evaluation) den1(f int, lenBits uint64) float64 {
	if lenBits >= denTableSize {
		return e.lengthNorm(f, normOfLength(lenBits))
	}
	den := e.den[f][lenBits]
	if den == 0 { // never a real value: k1*(1-b) > 0
		den = e.lengthNorm(f, normOfLength(lenBits))
		e.den[f][lenBits] = den
	}
	return den
}

// normOfLength is zap's Posting.Norm for a stored field length.
func normOfLength(lenBits uint64) float64 {
	return float64(float32(1.0 / math.Sqrt(float64(lenBits))))
}

// lengthNorm is k1*(1-b+b*fieldLength/avgLen), the denominator term of
// bleve's BM25 saturation, from the posting's norm.
func (e *evaluation) lengthNorm(f int, norm float64) float64 {
	fieldLength := 1 / (norm * norm)
	return bsearch.BM25_k1 * (1 - bsearch.BM25_b + (bsearch.BM25_b * fieldLength / e.fields[f].avgLen))
}

var sqrtCache = func() (t [64]float64) {
	for i := range t {
		t[i] = math.Sqrt(float64(i))
	}
	return t
}()
