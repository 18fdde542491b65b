package text

import (
	"context"
	"reflect"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// scopedQuery matches the documents of text that lie in the tenant (and,
// optionally, in a doc-id allow-list), scored by text alone. It is a bleve
// query.Query, so the whole restriction runs inside bleve's search.
//
// bleve offers two shapes for "text AND tenant", and each is the slow one
// in one common case, so scopedQuery picks per search (FB15k, 15k docs per
// tenant, mean CPU per query on a busy 2-core machine; the ratios matter):
//
//   - Filter (bleve's BooleanQuery.Filter): walk every text match and check
//     it against the tenant postings. Cost follows the text matches of the
//     WHOLE index: 0.55 ms with one tenant, 4 ms for one tenant of ten.
//   - Conjunction: leapfrog text and tenant postings, scoring only tenant
//     docs. 1.1 ms for one tenant of ten, but 0.74 ms with one tenant,
//     where every advance is wasted work.
//
// So: no restriction at all when the tenant is the whole index (a
// single-tenant deployment), conjunction when the tenant holds less than
// half of the index (or an allow-list is pushed down), filter otherwise.
// The choice uses the tenant term's live document count, known when the
// searcher is built.
//
// In both shapes the tenant/allow-list searchers are opened with score
// "none": zap then advances their postings by roaring-bitmap skips, while
// a scoring term reader can only advance linearly, decoding the frequency
// and norm of every posting it skips (which made a scoring tenant conjunct
// cost more than the text itself). They also get zero weight, so they add
// nothing to the score or to the query norm: a document scores the same
// through an org-wide filter, a project filter or an allow-list.
type scopedQuery struct {
	text   string      // the query text
	tenant query.Query // term query on the org or scope field
	allow  []string    // doc ids of a pushed-down allow-list; nil if none
}

// scopeMode forces a shape in tests: 0 picks per search, 1 filter, 2
// conjunction.
var scopeMode = 0

func (q *scopedQuery) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, opts search.SearcherOptions) (search.Searcher, error) {
	noScore := search.SearcherOptions{Score: "none"}
	var open []search.Searcher
	fail := func(err error) (search.Searcher, error) {
		for _, s := range open {
			_ = s.Close()
		}
		return nil, err
	}

	ts, err := q.textQuery(r).Searcher(ctx, r, m, opts)
	if err != nil {
		return nil, err
	}
	open = append(open, ts)
	tenant, err := q.tenant.Searcher(ctx, r, m, noScore)
	if err != nil {
		return fail(err)
	}
	open = append(open, tenant)

	filter := tenant
	conj := false
	if q.allow != nil {
		ids, err := searcher.NewDocIDSearcher(ctx, r, q.allow, 1, noScore)
		if err != nil {
			return fail(err)
		}
		open = append(open, ids)
		if filter, err = searcher.NewConjunctionSearcher(ctx, r, []search.Searcher{tenant, ids}, noScore); err != nil {
			return fail(err)
		}
		conj = true
	} else {
		// Both counts are of live documents: scorch excludes deleted ones
		// from a postings list's count.
		n, err := r.DocCount()
		if err != nil {
			return fail(err)
		}
		inTenant := tenant.Count()
		if scopeMode == 0 && inTenant == n {
			// Every live document is in the tenant (each document has
			// exactly one org and one scope term): no restriction needed.
			_ = tenant.Close()
			return ts, nil
		}
		conj = inTenant*2 < n
	}
	switch scopeMode {
	case 1:
		conj = false
	case 2:
		conj = true
	}

	if conj {
		s, err := searcher.NewConjunctionSearcher(ctx, r, []search.Searcher{ts, zeroWeight{filter}}, opts)
		if err != nil {
			return fail(err)
		}
		return s, nil
	}
	return &filteredSearcher{child: ts, filter: filter}, nil
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

// textQuery is the disjunction of one match query per field (each
// analysed with that field's analyzer, its terms ORed). Fields that no
// document has (no aliases or types at all, say) are left out: each
// costs a term searcher per query term and a disjunction level per
// candidate, 20% of the search time on FB15k, for nothing.
func (q *scopedQuery) textQuery(r index.IndexReader) query.Query {
	br, _ := r.(index.BM25Reader)
	fields := make([]query.Query, 0, len(textFields))
	for _, f := range textFields {
		if br != nil {
			if n, err := br.FieldCardinality(f.name); err == nil && n == 0 {
				continue
			}
		}
		m := query.NewMatchQuery(q.text)
		m.SetField(f.name)
		m.SetBoost(f.boost)
		fields = append(fields, m)
	}
	if len(fields) == 0 {
		return query.NewMatchNoneQuery()
	}
	return query.NewDisjunctionQuery(fields)
}

// zeroWeight hides a non-scoring searcher from query normalisation: a
// conjunction sums its children's weights into the query norm it then
// imposes on all of them, which would rescale the text scores by a factor
// depending on the tenant's size.
type zeroWeight struct{ search.Searcher }

func (zeroWeight) Weight() float64      { return 0 }
func (zeroWeight) SetQueryNorm(float64) {}

// filteredSearcher walks child and keeps the matches whose internal id the
// filter searcher also reaches. Both iterate in internal id order, so the
// filter is only ever advanced forward. It is bleve's FilteringSearcher
// with BooleanQuery's filter function, minus the boolean and single-child
// conjunction searchers bleve wraps around a must clause, and it reports
// filter errors instead of swallowing them.
type filteredSearcher struct {
	child  search.Searcher
	filter search.Searcher
	ref    *search.DocumentMatch // filter's current match; nil once exhausted (if started)
	start  bool                  // filter has been positioned
}

var reflectStaticSizeFilteredSearcher = int(reflect.TypeFor[filteredSearcher]().Size())

// accept reports whether d is matched by the filter.
func (s *filteredSearcher) accept(ctx *search.SearchContext, d *search.DocumentMatch) (bool, error) {
	var err error
	if !s.start {
		s.start = true
		if s.ref, err = s.filter.Next(ctx); err != nil {
			return false, err
		}
	}
	if s.ref == nil {
		return false, nil
	}
	c := s.ref.IndexInternalID.Compare(d.IndexInternalID)
	if c < 0 {
		ctx.DocumentMatchPool.Put(s.ref)
		if s.ref, err = s.filter.Advance(ctx, d.IndexInternalID); err != nil || s.ref == nil {
			return false, err
		}
		c = s.ref.IndexInternalID.Compare(d.IndexInternalID)
	}
	return c == 0, nil
}

// filtered returns the first accepted match starting with d.
func (s *filteredSearcher) filtered(ctx *search.SearchContext, d *search.DocumentMatch, err error) (*search.DocumentMatch, error) {
	for d != nil && err == nil {
		var ok bool
		if ok, err = s.accept(ctx, d); ok && err == nil {
			return d, nil
		}
		ctx.DocumentMatchPool.Put(d)
		if err != nil {
			return nil, err
		}
		d, err = s.child.Next(ctx)
	}
	return nil, err
}

func (s *filteredSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	d, err := s.child.Next(ctx)
	return s.filtered(ctx, d, err)
}

func (s *filteredSearcher) Advance(ctx *search.SearchContext, id index.IndexInternalID) (*search.DocumentMatch, error) {
	d, err := s.child.Advance(ctx, id)
	return s.filtered(ctx, d, err)
}

func (s *filteredSearcher) Close() error {
	err := s.child.Close()
	if ferr := s.filter.Close(); err == nil {
		err = ferr
	}
	return err
}

func (s *filteredSearcher) Weight() float64        { return s.child.Weight() }
func (s *filteredSearcher) SetQueryNorm(n float64) { s.child.SetQueryNorm(n) }
func (s *filteredSearcher) Count() uint64          { return s.child.Count() }
func (s *filteredSearcher) Min() int               { return s.child.Min() }

// DocumentMatchPoolSize: the filter holds at most one match at a time.
func (s *filteredSearcher) DocumentMatchPoolSize() int { return s.child.DocumentMatchPoolSize() + 1 }

func (s *filteredSearcher) Size() int {
	return reflectStaticSizeFilteredSearcher + s.child.Size() + s.filter.Size()
}
