package text

import (
	"context"
	"math"
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// textSearcher builds, with bleve's searchers, the reference for the
// engine (engine.go): the scoring searcher of the kept terms:
//
//	OR over fields f of ( OR over kept terms t of f: f:t^(boost_f*mult_t*C_f/D_f) )
//
// where C_f is the number of kept terms of f and D_f the number of base
// tokens of f (queryTerms.base). bleve scores a disjunction as the sum of
// its matching children times coord = matching/children, so scaling the
// boosts by C_f/D_f makes a field's score sum(matching scores) *
// matching/D_f: exactly what a match query over all D_f tokens gives, with
// dropped and absent terms contributing nothing. The outer coord (fields
// matched / fields searched) has a denominator that is the same for every
// document, so leaving out fields without kept terms does not reorder
// hits. A disjunction of one child is replaced by the child (same score).
func textSearcher(ctx context.Context, r index.IndexReader, qt *queryTerms, kept []int, opts search.SearcherOptions) (search.Searcher, error) {
	if len(kept) == 0 {
		return searcher.NewMatchNoneSearcher(r)
	}
	var perField [numTextFields][]int
	for _, i := range kept {
		f := qt.terms[i].field
		perField[f] = append(perField[f], i)
	}
	var fields []search.Searcher
	closeAll := func(ss []search.Searcher) {
		for _, s := range ss {
			_ = s.Close()
		}
	}
	for f, idx := range perField {
		if len(idx) == 0 {
			continue
		}
		d := float64(max(qt.base[f], 1))
		scale := float64(len(idx)) / d
		children := make([]search.Searcher, 0, len(idx))
		for _, i := range idx {
			t := &qt.terms[i]
			s, err := searcher.NewTermSearcherBytes(ctx, r, []byte(t.term), textFields[f].name, textFields[f].boost*t.mult*scale, opts)
			if err != nil {
				closeAll(children)
				closeAll(fields)
				return nil, err
			}
			children = append(children, s)
		}
		if len(children) == 1 {
			fields = append(fields, children[0])
			continue
		}
		s, err := searcher.NewDisjunctionSearcher(ctx, r, children, 1, opts)
		if err != nil {
			closeAll(children)
			closeAll(fields)
			return nil, err
		}
		fields = append(fields, s)
	}
	var root search.Searcher
	if len(fields) == 1 {
		root = fields[0]
	} else {
		var err error
		if root, err = searcher.NewDisjunctionSearcher(ctx, r, fields, 0, opts); err != nil {
			closeAll(fields)
			return nil, err
		}
	}
	// Normalise like a disjunction root does, so that scores do not depend
	// on whether the root is a disjunction or a single term.
	if w := root.Weight(); w > 0 {
		root.SetQueryNorm(1 / math.Sqrt(w))
	}
	return root, nil
}

// TestEngineMatchesBleve checks the search engine against bleve's own
// searchers: for the same kept terms, the searcher tree of textSearcher
// (term searchers in nested disjunctions, scored by bleve) must match the
// same documents with the same scores.
func TestEngineMatchesBleve(t *testing.T) {
	const n = 3000
	docs := corpus(n)
	// Phase 2 (re-ranking with dropped terms) has no bleve equivalent.
	defer func(old bool) { rerankDropped = old }(rerankDropped)
	rerankDropped = false
	for _, budget := range []int{-1, 400} {
		ix := openMem(t, Options{MaxPostings: budget, BatchSize: 700}) // several segments
		mustUpsert(t, ix, docs...)
		// Some deletions, so that postings lists have exceptions.
		if err := ix.Delete([]uint32{3, 50, 51, 52, 999, 1500}); err != nil {
			t.Fatal(err)
		}
		adv, err := ix.bi.Advanced()
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.WithValue(context.Background(), search.GetScoringModelCallbackKey,
			search.GetScoringModelCallbackFn(func() string { return index.BM25Scoring }))
		compared, dropped := 0, 0
		for _, q := range append(corpusQueries(docs, 150), "PaymentsService", "auth service", "why is it slow") {
			got, st, err := ix.SearchStats(ctx, nil, q, MaxK, corpusFilter)
			if err != nil {
				t.Fatal(err)
			}
			dropped += st.TermsDropped

			// The reference: the same plan, scored by bleve.
			r, err := adv.Reader()
			if err != nil {
				t.Fatal(err)
			}
			snap := r.(*scorch.IndexSnapshot)
			e := evaluation{segs: snap.Segments(), sc: new(engineScratch)}
			e.sc.dicts = make([]segment.TermDictionary, len(e.segs)*numTextFields)
			var qt queryTerms
			ix.analyseQuery(&qt, q)
			var present [numTextFields]bool
			for f := range textFields {
				c, _ := snap.FieldCardinality(textFields[f].name)
				present[f] = c > 0
			}
			if err := ix.dfs.lookup(snap, qt.terms, &present, e.df); err != nil {
				t.Fatal(err)
			}
			kept, _ := selectTerms(qt.terms, ix.maxPostings, nil)
			ref, err := textSearcher(ctx, r, &qt, kept, search.SearcherOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := map[uint32]float64{}
			sc := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(ref.DocumentMatchPoolSize()+1, 0)}
			for {
				d, err := ref.Next(sc)
				if err != nil {
					t.Fatal(err)
				}
				if d == nil {
					break
				}
				ext, err := r.ExternalID(d.IndexInternalID)
				if err != nil {
					t.Fatal(err)
				}
				id, _ := parseDocID(ext)
				want[id] = d.Score
				sc.DocumentMatchPool.Put(d)
			}
			_ = ref.Close()
			_ = r.Close()

			if len(got) != len(want) {
				t.Fatalf("%q (budget %d): engine %d hits, bleve %d", q, budget, len(got), len(want))
			}
			for _, h := range got {
				w, ok := want[h.ID]
				if !ok {
					t.Fatalf("%q: engine hit %d not matched by bleve", q, h.ID)
				}
				if math.Abs(h.Score-w) > 1e-12*math.Abs(w) {
					t.Fatalf("%q: id %d: engine %.17g, bleve %.17g", q, h.ID, h.Score, w)
				}
			}
			compared += len(got)
		}
		if budget > 0 && dropped == 0 {
			t.Errorf("budget %d dropped no terms: the test does not exercise dropping", budget)
		}
		t.Logf("budget %d: %d hits compared, %d terms dropped", budget, compared, dropped)
	}
}
