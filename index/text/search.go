package text

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
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
// tens of nodes, and the collector's cost grows with the result size.
const MaxK = 10_000

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
	// Freqs, when set, receives the document frequencies the search looked
	// up: how informative each word of the query is.
	Freqs *TermFreqs
}

// TermFreqs are document frequencies of a search's query terms, over the
// whole index (all tenants).
type TermFreqs struct {
	// Docs is the number of documents.
	Docs uint64
	// Name maps each query term of the name field (lower-case identifier
	// parts, unstemmed) to the number of documents whose name has it. It is
	// cleared and filled by the search; the caller owns it.
	Name map[string]uint64
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

// SearchContext is Search with a context that cancels the search (checked
// every 4,096 matches).
//
// The query text is analysed per field (see the package documentation,
// "Query and scoring"), and a node matches if any searched term occurs in
// any field. Only the rarest terms within the posting budget
// (Options.MaxPostings) are searched; a query all of whose terms are very
// common returns no hits. Query text that yields no terms in any field
// (empty, only punctuation) returns no hits; stop words are dropped from
// descriptions only.
//
// dst is reused: the hits are written to dst[:0], growing it if needed,
// and the resulting slice is returned. The caller owns it. k <= 0 returns
// dst[:0]; k > MaxK is treated as MaxK.
func (ix *Index) SearchContext(ctx context.Context, dst []Hit, q string, k int, f Filter) ([]Hit, error) {
	dst, _, err := ix.SearchStats(ctx, dst, q, k, f)
	return dst, err
}

// SearchStats is SearchContext that also reports how the search used the
// index: how many query terms it searched and dropped, and their postings.
func (ix *Index) SearchStats(ctx context.Context, dst []Hit, q string, k int, f Filter) ([]Hit, Stats, error) {
	dst = dst[:0]
	if err := checkTenant(f.Org, f.Project); err != nil {
		return dst, Stats{}, err
	}
	if k <= 0 || q == "" || (f.Allow != nil && f.Allow.IsEmpty()) {
		return dst, Stats{}, nil
	}
	k = min(k, MaxK)

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return dst, Stats{}, ErrClosed
	}

	sc := scratchPool.Get().(*engineScratch)
	defer sc.release()
	sc.freqs = f.Freqs
	ix.analyseQuery(&sc.qt, q)
	if len(sc.qt.terms) == 0 {
		return dst, Stats{}, nil
	}

	adv, err := ix.bi.Advanced()
	if err != nil {
		return dst, Stats{}, fmt.Errorf("text: search: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return dst, Stats{}, fmt.Errorf("text: search: %w", err)
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return dst, Stats{}, fmt.Errorf("text: search: unexpected index reader %T", r)
	}

	tenantField, tenantTerm := fieldScope, scopeKey(f.Org, f.Project)
	if f.Project == "" {
		tenantField, tenantTerm = fieldOrg, []byte(f.Org)
	}
	col := collector{k: k, allow: f.Allow, heap: dst}
	st, err := ix.run(ctx, snap, sc, tenantField, tenantTerm, &col)
	if err != nil {
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("text: search: %w", err)
		}
		return col.heap[:0], st, err
	}
	dst = col.heap
	slices.SortFunc(dst, compareHits)
	return dst, st, nil
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
