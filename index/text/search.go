package text

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
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
// text that yields no terms in any field (empty, only punctuation) returns
// no hits; stop words are dropped from descriptions only.
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
	// tie with or beat our k-th, so the ID tie-break is exact.
	want := k + 1
	if postFilter {
		// Some hits will be dropped: size the first request for the share
		// of the index the allow-list can keep, so that one round usually
		// suffices (every returned hit costs an id lookup in bleve).
		n, err := ix.bi.DocCount()
		if err != nil {
			return dst, fmt.Errorf("text: search: %w", err)
		}
		want = postFilterWant(k, f.Allow.GetCardinality(), n)
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
		// Not enough survivors, or a tie straddles the cut: widen, by the
		// survival rate seen so far when filtering.
		next := uint64(want) * 4
		if postFilter && len(dst) < k {
			next = max(next, uint64(postFilterWant(k, uint64(len(dst)), uint64(n))))
		}
		want = int(min(next, res.Total))
	}
	if len(dst) > k {
		dst = dst[:k]
	}
	return dst, nil
}

// postFilterWant is how many raw hits to request so that about 1.5*k
// survive a post-filter expected to keep kept out of every total hits; at
// least 4k+1 and 64.
func postFilterWant(k int, kept, total uint64) int {
	w := uint64(4*k + 1)
	if kept == 0 {
		w = uint64(k) * 64
	} else if total > kept {
		w = max(w, uint64(k)*total*3/(2*kept)+uint64(k))
	}
	return int(min(max(w, 64), math.MaxInt32))
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
	sq := &scopedQuery{text: q}
	var tenant *query.TermQuery
	if f.Project == "" {
		tenant = query.NewTermQuery(f.Org)
		tenant.SetField(fieldOrg)
	} else {
		tenant = query.NewTermQuery(string(scopeKey(f.Org, f.Project)))
		tenant.SetField(fieldScope)
	}
	sq.tenant = tenant
	if pushdownAllow {
		sq.allow = make([]string, 0, f.Allow.GetCardinality())
		it := f.Allow.Iterator()
		for it.HasNext() {
			sq.allow = append(sq.allow, docID(it.Next()))
		}
	}
	return sq
}
