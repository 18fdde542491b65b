package text

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// commonCorpus: n docs whose description has "common" (and "usual" in
// every other one), plus three docs with the rare term "zyzzyva".
func commonCorpus(t *testing.T, ix *Index, n int) {
	t.Helper()
	docs := make([]Doc, 0, n+3)
	for i := range n {
		d := "common filler words"
		if i%2 == 0 {
			d = "common usual filler"
		}
		docs = append(docs, Doc{ID: uint32(1000 + i), Org: "o", Project: "p", Name: fmt.Sprintf("Filler%d", i), Description: d})
	}
	docs = append(docs,
		Doc{ID: 1, Org: "o", Project: "p", Name: "Alpha", Description: "zyzzyva common usual"},
		Doc{ID: 2, Org: "o", Project: "p", Name: "Beta", Description: "zyzzyva"},
		Doc{ID: 3, Org: "o", Project: "p", Name: "Gamma", Description: "zyzzyva and more words here"},
	)
	mustUpsert(t, ix, docs...)
}

// A query with a very common and a rare term: the common one is dropped
// (its postings exceed the budget), the rare one is searched, the search
// visits a bounded number of postings, and the rare-term documents rank
// first, ordered with the help of the dropped terms (phase 2).
func TestBudgetKeepsRareTerm(t *testing.T) {
	const n = 5000
	ix := openMem(t, Options{MaxPostings: 1000})
	commonCorpus(t, ix, n)
	f := Filter{Org: "o", Project: "p"}

	hits, st, err := ix.SearchStats(context.Background(), nil, "common zyzzyva usual", 10, f)
	if err != nil {
		t.Fatal(err)
	}
	if st.TermsKept != 1 || st.TermsDropped != 2 || st.Postings != 3 {
		t.Errorf("stats %+v, want 1 kept (zyzzyva, 3 postings), 2 dropped", st)
	}
	if st.Postings > 1000 {
		t.Errorf("visited %d postings, budget 1000", st.Postings)
	}
	// Only the rare term's documents are found; doc 1 also has both
	// dropped terms, so it ranks first.
	if got := ids(hits); !slices.Equal(got, []uint32{1, 2, 3}) {
		t.Errorf("hits %v, want [1 2 3]", hits)
	}

	// Without a budget every term is searched: the rare-term documents
	// still rank first, but every common document is visited.
	full := openMem(t, Options{MaxPostings: -1})
	commonCorpus(t, full, n)
	all, fst, err := full.SearchStats(context.Background(), nil, "common zyzzyva usual", 10, f)
	if err != nil {
		t.Fatal(err)
	}
	if fst.TermsDropped != 0 || fst.Postings < n {
		t.Errorf("unbounded stats %+v", fst)
	}
	if len(all) < 3 || all[0].ID != 1 || !slices.Contains(ids(all[:3]), 2) {
		t.Errorf("unbounded: %v", all)
	}
}

// A query made only of terms more common than the hard cap returns no
// hits (documented: the vector side of the fusion ranks such queries)
// instead of scoring every document.
func TestBudgetUltraCommonQuery(t *testing.T) {
	ix := openMem(t, Options{MaxPostings: 1000})
	commonCorpus(t, ix, 5000)
	f := Filter{Org: "o", Project: "p"}
	hits, st, err := ix.SearchStats(context.Background(), nil, "common filler", 10, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 0 || st.TermsKept != 0 || st.Postings != 0 || st.TermsDropped == 0 {
		t.Errorf("hits %v stats %+v, want no hits, nothing searched", hits, st)
	}
	// "usual" (2,500 docs) is over the budget but within the cap
	// (rarestCapFactor times it): as the rarest term it is searched alone.
	hits, st, err = ix.SearchStats(context.Background(), nil, "common usual", 10, f)
	if err != nil {
		t.Fatal(err)
	}
	if st.TermsKept != 1 || st.Postings != 2501 || len(hits) != 10 {
		t.Errorf("usual: %d hits, stats %+v", len(hits), st)
	}
}

func TestSelectTerms(t *testing.T) {
	terms := []qterm{
		{field: 3, term: "a", df: 500},
		{field: 0, term: "b", df: 0},
		{field: 0, term: "c", df: 100},
		{field: 3, term: "d", df: 900},
		{field: 2, term: "e", df: 100},
	}
	for _, c := range []struct {
		budget int
		kept   []int
		st     Stats
	}{
		{-1, []int{2, 4, 0, 3}, Stats{TermsKept: 4, Postings: 1600}},
		{1600, []int{2, 4, 0, 3}, Stats{TermsKept: 4, Postings: 1600}},
		{1599, []int{2, 4, 0}, Stats{TermsKept: 3, TermsDropped: 1, Postings: 700}},
		{700, []int{2, 4, 0}, Stats{TermsKept: 3, TermsDropped: 1, Postings: 700}},
		{699, []int{2, 4}, Stats{TermsKept: 2, TermsDropped: 2, Postings: 200}},
		{150, []int{2}, Stats{TermsKept: 1, TermsDropped: 3, Postings: 100}},
		// The rarest term alone exceeds the budget but not the cap.
		{50, []int{2}, Stats{TermsKept: 1, TermsDropped: 3, Postings: 100}},
		{34, []int{2}, Stats{TermsKept: 1, TermsDropped: 3, Postings: 100}},
		{33, nil, Stats{TermsDropped: 4}},
	} {
		kept, st := selectTerms(terms, c.budget, nil)
		if !slices.Equal(kept, c.kept) || st != c.st {
			t.Errorf("budget %d: kept %v %+v, want %v %+v", c.budget, kept, st, c.kept, c.st)
		}
	}
}

// Identifier terms: a name embedded in a sentence matches the
// concatenated-name term only that node has.
func TestIdentifierInSentence(t *testing.T) {
	ix := openMem(t, Options{})
	mustUpsert(t, ix,
		Doc{ID: 1, Org: "o", Project: "p", Name: "DecodePriceLinks", Type: "function"},
		Doc{ID: 2, Org: "o", Project: "p", Name: "DecodePriceLinksCached", Type: "function"},
		Doc{ID: 3, Org: "o", Project: "p", Name: "DecodeLinks", Type: "function"},
		Doc{ID: 4, Org: "o", Project: "p", Name: "PriceLinks", Type: "function"},
		Doc{ID: 5, Org: "o", Project: "p", Name: "PaymentsGatewayService", Type: "service"},
		Doc{ID: 6, Org: "o", Project: "p", Name: "PaymentsService", Type: "service"},
		Doc{ID: 7, Org: "o", Project: "p", Name: "GatewayService", Type: "service"},
	)
	f := Filter{Org: "o", Project: "p"}
	for _, c := range []struct {
		q   string
		top uint32
	}{
		{"why is DecodePriceLinks slow", 1},
		{"why is DecodePriceLinksCached slow", 2},
		{"fix timeout in the payments gateway service", 5},
		{"fix timeout in payments service", 6},
	} {
		hits := srch(t, ix, c.q, 3, f)
		if len(hits) == 0 || hits[0].ID != c.top {
			t.Errorf("%q: %v, want %d first", c.q, hits, c.top)
		}
	}
	for q, want := range map[string][]string{
		// "why" and "is" are stop words: no run through them.
		"why is DecodePriceLinks slow":           {"decodepricelinks", "decodepricelinksslow"},
		"fix it in the payments gateway service": {"paymentsgateway", "paymentsgatewayservice", "gatewayservice"},
		"add tests for pkg/payments/retry":       {"addtests", "pkgpaymentsretry"},
		"Obama's speech":                         {"obamaspeech"},
	} {
		var got []string
		for _, t := range identifierTerms(q) {
			got = append(got, t.term)
		}
		if !slices.Equal(got, want) {
			t.Errorf("identifierTerms(%q) = %q, want %q", q, got, want)
		}
	}
}

// An id upserted several times in one call, in different batches, ends
// with its last version.
func TestDuplicateAcrossBatches(t *testing.T) {
	ix := openMem(t, Options{BatchSize: 4})
	var docs []Doc
	for i := range 40 {
		docs = append(docs, Doc{ID: uint32(i % 13), Org: "o", Project: "p", Name: fmt.Sprintf("Version%d", i)})
	}
	mustUpsert(t, ix, docs...)
	if n, _ := ix.DocCount(); n != 13 {
		t.Fatalf("DocCount = %d, want 13", n)
	}
	for id := range 13 {
		last := 39 - (39-id)%13
		hits := srch(t, ix, fmt.Sprintf("Version%d", last), 1, Filter{Org: "o"})
		if len(hits) != 1 || hits[0].ID != uint32(id) {
			t.Errorf("id %d: version %d not found: %v", id, last, hits)
		}
	}
}
