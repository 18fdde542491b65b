package text

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Field boosts of the query disjunction. Names and aliases are what a user
// types when they mean an entity; descriptions are supporting evidence;
// types are shared by thousands of nodes and only break ties.
const (
	boostName    = 2.0
	boostAliases = 2.0
	boostType    = 0.5
	boostDesc    = 1.0
)

// MaxK bounds k in Search; larger values are clamped. Seed search wants
// tens of nodes, and bleve's collector cost grows with the result size.
const MaxK = 10_000

// allowPushdownMax is the largest Filter.Allow for which the allow-list is
// pushed into bleve as a doc-id query (one id lookup per allowed node and
// segment, exact in a single pass). Larger allow-lists are applied to the
// ranked hits afterwards, fetching more hits until k survive.
const allowPushdownMax = 256

// Filter restricts a search to one tenant scope.
type Filter struct {
	// Org is required: searches never cross organisations.
	Org string
	// Project restricts to one project of Org; "" searches the whole org
	// (all its projects, and its project-less nodes).
	Project string
	// Allow, when non-nil, additionally restricts hits to these node ids
	// (an empty bitmap matches nothing). It is only read.
	Allow *roaring.Bitmap
}

// Hit is one search result.
type Hit struct {
	ID    uint32
	Score float64 // BM25 score (bleve's variant, see the package doc); only comparable within one query
}

// Search returns the top k nodes of the filter's scope for the query text,
// by BM25 score descending, ties broken by ascending ID. See SearchContext.
func (ix *Index) Search(dst []Hit, q string, k int, f Filter) ([]Hit, error) {
	return ix.SearchContext(context.Background(), dst, q, k, f)
}

// SearchContext is Search with a context that cancels the bleve search.
//
// The query text is analysed per field (NameAnalyzer for name, aliases and
// type; TextAnalyzer for description) and matched term by term with OR
// semantics; a node matches if any query term occurs in any field. Query
// text that yields no terms (empty, only punctuation or stop words) returns
// no hits.
//
// dst is reused: the hits are written to dst[:0], growing it if needed,
// and the resulting slice is returned. The caller owns it. k <= 0 returns
// dst[:0]; k > MaxK is treated as MaxK.
func (ix *Index) SearchContext(ctx context.Context, dst []Hit, q string, k int, f Filter) ([]Hit, error) {
	dst = dst[:0]
	if err := checkTenant(f.Org, f.Project); err != nil {
		return dst, err
	}
	if k <= 0 || q == "" || (f.Allow != nil && f.Allow.IsEmpty()) {
		return dst, nil
	}
	k = min(k, MaxK)

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return dst, ErrClosed
	}

	pushdown := f.Allow != nil && f.Allow.GetCardinality() <= allowPushdownMax
	postFilter := f.Allow != nil && !pushdown
	qry := buildQuery(q, f, pushdown)

	// Ask for one hit more than needed: if the (k+1)-th raw hit scores
	// strictly below the k-th kept one, nothing bleve did not return can
	// tie with or beat our k-th, so the ID tie-break is exact. With a
	// post-filter, start wider since some hits will be dropped.
	want := k + 1
	if postFilter {
		want = max(4*k, 64)
	}
	for {
		req := bleve.NewSearchRequestOptions(qry, want, 0, false)
		res, err := ix.bi.SearchInContext(ctx, req)
		if err != nil {
			if errors.Is(err, bleve.ErrorIndexClosed) {
				return dst[:0], ErrClosed
			}
			return dst[:0], fmt.Errorf("text: search: %w", err)
		}
		dst = dst[:0]
		for _, h := range res.Hits {
			id, ok := parseDocID(h.ID)
			if !ok {
				return dst[:0], fmt.Errorf("%w: %q", ErrCorruptID, h.ID)
			}
			if postFilter && !f.Allow.Contains(id) {
				continue
			}
			dst = append(dst, Hit{ID: id, Score: h.Score})
		}
		slices.SortFunc(dst, compareHits)
		n := len(res.Hits)
		if uint64(n) >= res.Total || n < want {
			break // every match was returned
		}
		if len(dst) >= k && dst[k-1].Score > res.Hits[n-1].Score {
			break // the unreturned matches all score below our k-th hit
		}
		// Not enough survivors, or a tie straddles the cut: widen.
		want = int(min(uint64(want)*4, res.Total))
	}
	if len(dst) > k {
		dst = dst[:k]
	}
	return dst, nil
}

func compareHits(a, b Hit) int {
	if a.Score != b.Score {
		if a.Score > b.Score {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.ID, b.ID)
}

// buildQuery is
//
//	(name:q^2 OR aliases:q^2 OR type:q^0.5 OR description:q)  restricted to  tenant [AND id in Allow]
//
// with one match query per field (each analysed with that field's
// analyzer, terms ORed). The tenant is a term on the org keyword field, or
// on the org+project scope keyword field; the restriction runs inside bleve
// and does not score (see scopedQuery).
func buildQuery(q string, f Filter, pushdownAllow bool) query.Query {
	match := func(field string, boost float64) query.Query {
		m := query.NewMatchQuery(q)
		m.SetField(field)
		m.SetBoost(boost)
		return m
	}
	sq := &scopedQuery{text: query.NewDisjunctionQuery([]query.Query{
		match(fieldName, boostName),
		match(fieldAliases, boostAliases),
		match(fieldType, boostType),
		match(fieldDesc, boostDesc),
	})}

	var tenant *query.TermQuery
	if f.Project == "" {
		tenant = query.NewTermQuery(f.Org)
		tenant.SetField(fieldOrg)
	} else {
		tenant = query.NewTermQuery(string(scopeKey(f.Org, f.Project)))
		tenant.SetField(fieldScope)
	}
	sq.tenant, sq.tenantField = tenant, tenant.FieldVal
	if pushdownAllow {
		sq.allow = make([]string, 0, f.Allow.GetCardinality())
		it := f.Allow.Iterator()
		for it.HasNext() {
			sq.allow = append(sq.allow, docID(it.Next()))
		}
	}
	return sq
}
