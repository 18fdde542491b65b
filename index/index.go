package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index/embed"
	"github.com/kgctx/kgctx/index/fuse"
	"github.com/kgctx/kgctx/index/hnsw"
	"github.com/kgctx/kgctx/index/text"
)

// Options configure an Index. Zero fields mean defaults.
type Options struct {
	// TextDir is the directory of the nodes' bleve index; the
	// observations' lives beside it (TextDir + "-obs"). "" keeps both in
	// memory (tests).
	TextDir string
	// HNSW parameters (M, EfConstruction, EfSearch, ExactCutoff); Dim and
	// Metric are set by Open (the embedder's dimension, cosine).
	HNSW hnsw.Options
	// RRFK is the reciprocal rank fusion constant (default 60).
	RRFK float64
	// ListDepth is how many hits each ranking contributes to the fusion
	// (default max(3*k, 30)).
	ListDepth int
	// MinSimilarity drops vector hits whose cosine similarity to the query
	// is below it (default 0.2): every item has some nearest neighbour, and
	// without a floor a query about nothing stored would still seed the
	// walk with noise. Set it negative to keep every hit.
	MinSimilarity float64
	// Workers is the number of goroutines inserting into HNSW (default
	// GOMAXPROCS).
	Workers int
	// VectorWeight is the weight of the vector ranking in score fusion
	// (Query.Scores) against the text ranking's 1. Zero means the
	// embedder's default: DefaultLexicalVectorWeight for the built-in
	// lexical embedder, whose similarities on short names are mostly
	// shared character n-grams, and 1 for any other (a semantic model's
	// cosine says what the words do not). Negative drops the vector
	// ranking from score fusion.
	VectorWeight float64
}

// DefaultLexicalVectorWeight is the built-in lexical embedder's weight in
// score fusion, from the relevance harness: on MetaQA, FB15k-237 and
// codeloc, seeds found by shared character n-grams alone are wrong far
// more often than right, yet they help a query whose words are inflected
// differently from the names.
const DefaultLexicalVectorWeight = 0.25

// Validate reports out-of-range options.
func (o *Options) Validate() error {
	if o.RRFK < 0 || o.ListDepth < 0 || o.Workers < 0 || o.MinSimilarity > 1 {
		return fmt.Errorf("%w: negative or out-of-range field", ErrInvalidOptions)
	}
	h := o.HNSW
	h.Dim = 1
	if err := h.Validate(); err != nil {
		return fmt.Errorf("%w: hnsw: %w", ErrInvalidOptions, err)
	}
	return nil
}

// MaxQueryBytes bounds a query text (API.md: 8 KiB).
const MaxQueryBytes = 8 << 10

// Index is the seed search over one store's nodes and observations.
type Index struct {
	st    *engine.Store
	emb   embed.Embedder
	opts  Options
	nodes space
	obs   space

	qpool sync.Pool // *queryScratch
}

// Open loads (or creates) the indexes of st and attaches them to it, so
// that they replay any change they missed and follow every later write.
// The caller MUST call Close before closing the store.
func Open(ctx context.Context, st *engine.Store, emb embed.Embedder, opts Options) (*Index, error) {
	ix, err := New(emb, opts)
	if err != nil {
		return nil, err
	}
	if err := ix.Load(st); err != nil {
		return nil, err
	}
	if err := ix.Attach(ctx, st); err != nil {
		return nil, err
	}
	return ix, nil
}

// New returns an index over emb's vectors that holds nothing yet: Load
// reads its state from a store, Attach makes it follow the store's
// writes. Open does the three; splitting them lets the HNSW graphs load
// while the store loads its own graph (engine.Options.WhileLoading = Load).
func New(emb embed.Embedder, opts Options) (*Index, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Workers == 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.MinSimilarity == 0 {
		opts.MinSimilarity = 0.2
	}
	ix := &Index{emb: emb, opts: opts,
		nodes: space{name: "nodes", aux: "hnsw/", worker: opts.Workers},
		obs:   space{name: "observations", aux: "ohnsw/", worker: opts.Workers}}
	ix.qpool.New = func() any { return &queryScratch{} }
	return ix, nil
}

// Load reads the HNSW graphs of st's nodes and observations from its
// records (no rebuild) and opens the text indexes. It uses only what
// engine.Options.WhileLoading allows, so it may run while st is loading.
// On error nothing stays open.
func (ix *Index) Load(st *engine.Store) error {
	if st.Dim() != ix.emb.Dim() {
		return fmt.Errorf("%w: store dimension %d, embedder %s makes %d", ErrEmbedderMismatch, st.Dim(), ix.emb.Name(), ix.emb.Dim())
	}
	hopts := ix.opts.HNSW
	hopts.Dim = ix.emb.Dim()
	hopts.Metric = hnsw.Cosine
	// The lexical embedder's vectors are mostly zeros (54 of 128
	// components on average for the synthetic graph's nodes): kept
	// sparse, a node's vector takes 272 bytes instead of 512 (about 0.2 GB
	// less at a million nodes), and every result is the same
	// (hnsw.Options.Sparse).
	if _, lex := embed.Base(ix.emb).(*embed.Lexical); lex && hopts.Sparse == 0 && hopts.Dim <= 256 {
		hopts.Sparse = hopts.Dim / 2
	}
	obsDir := ""
	if ix.opts.TextDir != "" {
		obsDir = ix.opts.TextDir + "-obs"
	}
	if err := ix.nodes.open(st, hopts, st.EachVector, ix.opts.TextDir); err != nil {
		return err
	}
	if err := ix.obs.open(st, hopts, st.EachObsVector, obsDir); err != nil {
		ix.nodes.txt.Close()
		return err
	}
	return nil
}

// Attach makes the loaded index follow st: it replays the changes it
// missed, then applies every later write. On error the index is closed.
func (ix *Index) Attach(ctx context.Context, st *engine.Store) error {
	ix.st = st
	err := ix.nodes.rebuildText(st, func(yield func(text.Doc) error) error {
		return st.EachDoc(func(d *engine.NodeDoc) error { return yield(nodeText(d)) })
	})
	if err == nil {
		err = ix.obs.rebuildText(st, func(yield func(text.Doc) error) error {
			return st.EachObsDoc(func(d *engine.ObsDoc) error { return yield(obsText(d)) })
		})
	}
	if err != nil {
		ix.Close()
		return err
	}
	if err := st.Attach(ctx, ix); err != nil {
		ix.Close()
		return err
	}
	return nil
}

// Close closes the text indexes. The HNSW state is already durable.
func (ix *Index) Close() error { return errors.Join(ix.nodes.txt.Close(), ix.obs.txt.Close()) }

// Name implements engine.Indexer.
func (ix *Index) Name() string { return "index" }

// Watermark implements engine.Indexer: the lowest of the four indexes'.
func (ix *Index) Watermark() uint64 { return min(ix.nodes.watermark(), ix.obs.watermark()) }

// Apply implements engine.Indexer. The text sides run concurrently with
// the vector sides: they are independent, and bleve spends much of its time
// waiting for fsync.
func (ix *Index) Apply(ctx context.Context, cs *engine.ChangeSet) error {
	var errs [4]error
	var wg sync.WaitGroup
	wg.Go(func() {
		docs := make([]text.Doc, len(cs.Upserts))
		for i, d := range cs.Upserts {
			docs[i] = nodeText(d)
		}
		errs[0] = ix.nodes.applyText(cs.Seq, docs, cs.Deletes)
		odocs := make([]text.Doc, len(cs.ObsUpserts))
		for i, d := range cs.ObsUpserts {
			odocs[i] = obsText(d)
		}
		errs[1] = ix.obs.applyText(cs.Seq, odocs, cs.ObsDeletes)
	})
	var ids []uint32
	var vecs [][]float32
	for _, d := range cs.Upserts {
		if d.Vector != nil {
			ids = append(ids, d.Dense)
			vecs = append(vecs, d.Vector)
		}
	}
	errs[2] = ix.nodes.applyVectors(ctx, ix.st, cs.Seq, ids, vecs, cs.Deletes)
	ids, vecs = ids[:0], vecs[:0]
	for _, d := range cs.ObsUpserts {
		if d.Vector != nil {
			ids = append(ids, d.Dense)
			vecs = append(vecs, d.Vector)
		}
	}
	errs[3] = ix.obs.applyVectors(ctx, ix.st, cs.Seq, ids, vecs, cs.ObsDeletes)
	wg.Wait()
	return errors.Join(errs[:]...)
}

// nodeText is a node's text document.
func nodeText(d *engine.NodeDoc) text.Doc {
	return text.Doc{ID: d.Dense, Org: d.OrgID, Project: d.ProjectID, Name: d.Name, Aliases: d.Aliases, Type: d.Type, Description: d.Description}
}

// obsText is an observation's text document: its tags are its type.
func obsText(d *engine.ObsDoc) text.Doc {
	return text.Doc{ID: d.Dense, Org: d.OrgID, Project: d.ProjectID, Type: strings.Join(d.Tags, " "), Description: d.Content}
}

// Check implements engine.Checker: HNSW invariants (neighbours exist and
// are live).
func (ix *Index) Check() error { return errors.Join(ix.nodes.vec.Check(), ix.obs.vec.Check()) }

// Query is one seed search.
type Query struct {
	Text string
	// Org is required; Project "" searches the whole org.
	Org, Project string
	// Allow is the scope's bitmap (from an engine.View: ScopeNodes or
	// ScopeObservations): vector hits and text hits are restricted to it.
	// Required for vector hits: the HNSW graph spans every tenant, so a
	// nil Allow skips the vector ranking rather than search across
	// tenants. Only read.
	Allow *roaring.Bitmap
	// K is the number of results wanted.
	K int
	// Vector, when set, is the query's embedding (saves embedding the same
	// text twice when searching both spaces).
	Vector []float32
	// MinSimilarity overrides Options.MinSimilarity for this search when
	// positive (callers with their own relevance threshold raise it).
	MinSimilarity float64
	// Absolute scales fused scores by the best score possible (ranked first
	// by both rankings) instead of the best one found, so that a score
	// means the same across queries: 1 for a top hit of both, 0.5 for a
	// top hit of one. Thresholds (minRelevanceScore) need it.
	Absolute bool
	// Scores fuses the rankings by their scores instead of their ranks:
	// fused = bm25/best bm25 + VectorWeight × cosine, divided by the best
	// fused score. Rank fusion gives a node found by one ranking half the
	// score of one found by both, whatever the match: a name the query
	// spells out loses to thirty nodes that share a few letters with it.
	// Score fusion keeps the gaps of each ranking.
	Scores bool
	// TextDepth, when larger than the rankings' depth (max(3K, 30), or
	// Options.ListDepth), is how deep the text ranking is read (for
	// TextHits; fusion still uses the top of it). VectorDepth, when
	// positive, is how deep the vector ranking is read instead (a caller
	// that rescores a wide fused pool need not widen the HNSW search).
	TextDepth, VectorDepth int
	// TextHits, when set, receives the text ranking as read (best first,
	// BM25 scores): callers that score candidates against the query use
	// it to know which nodes match query words. Appended to (*TextHits)[:0].
	TextHits *[]fuse.Ranked
	// Freqs, when set, receives the document frequencies of the query's
	// words (see text.TermFreqs).
	Freqs *text.TermFreqs
}

// Stats describe one search.
type Stats struct {
	VectorHits, TextHits int
}

type queryScratch struct {
	qv    []float32
	vhits []hnsw.Result
	vlist []fuse.Ranked
	thits []text.Hit
	tlist []fuse.Ranked
}

// Search returns up to q.K nodes (dense ids) with fused scores normalised
// so the best is 1, appended to dst[:0].
func (ix *Index) Search(ctx context.Context, dst []fuse.Ranked, q Query) ([]fuse.Ranked, Stats, error) {
	return ix.search(ctx, &ix.nodes, dst, q)
}

// SearchObservations is Search over observations.
func (ix *Index) SearchObservations(ctx context.Context, dst []fuse.Ranked, q Query) ([]fuse.Ranked, Stats, error) {
	return ix.search(ctx, &ix.obs, dst, q)
}

// EmbedderName names the embedder (for messages and logs).
func (ix *Index) EmbedderName() string { return ix.emb.Name() }

// Embed embeds a query text into dst (reused when large enough).
func (ix *Index) Embed(ctx context.Context, dst []float32, text string) ([]float32, error) {
	if lex, ok := embed.Base(ix.emb).(*embed.Lexical); ok {
		return lex.EmbedInto(dst, text), nil
	}
	vs, err := ix.emb.Embed(ctx, []string{text})
	if err != nil {
		return dst, fmt.Errorf("index: embed query: %w", err)
	}
	return append(dst[:0], vs[0]...), nil
}

func (ix *Index) search(ctx context.Context, sp *space, dst []fuse.Ranked, q Query) ([]fuse.Ranked, Stats, error) {
	var st Stats
	dst = dst[:0]
	if len(q.Text) > MaxQueryBytes {
		return dst, st, fmt.Errorf("%w: %d bytes, the limit is %d", ErrQueryTooLong, len(q.Text), MaxQueryBytes)
	}
	if q.K <= 0 || q.Org == "" {
		return dst, st, nil
	}
	if q.Allow != nil && q.Allow.IsEmpty() {
		return dst, st, nil
	}
	depth := ix.opts.ListDepth
	if depth == 0 {
		depth = max(3*q.K, 30)
	}

	sc := ix.qpool.Get().(*queryScratch)
	defer ix.qpool.Put(sc)

	// Vector ranking.
	sc.vhits = sc.vhits[:0]
	if q.Allow != nil {
		qv := q.Vector
		if qv == nil {
			var err error
			if sc.qv, err = ix.Embed(ctx, sc.qv, q.Text); err != nil {
				return dst, st, err
			}
			qv = sc.qv
		}
		vdepth := depth
		if q.VectorDepth > 0 {
			vdepth = q.VectorDepth
		}
		sc.vhits = sp.vec.Search(sc.vhits, qv, vdepth, hnsw.SearchOptions{Allow: q.Allow})
	}
	sc.vlist = sc.vlist[:0]
	minSim := ix.opts.MinSimilarity
	if q.MinSimilarity > 0 {
		minSim = q.MinSimilarity
	}
	maxDist := float32(1 - minSim)
	for _, h := range sc.vhits {
		if h.Distance <= maxDist {
			sc.vlist = append(sc.vlist, fuse.Ranked{ID: h.ID, Score: float64(1 - h.Distance)})
		}
	}
	st.VectorHits = len(sc.vlist)

	// Text ranking.
	var err error
	sc.thits, err = sp.txt.SearchContext(ctx, sc.thits, q.Text, max(depth, q.TextDepth), text.Filter{Org: q.Org, Project: q.Project, Allow: q.Allow, Freqs: q.Freqs})
	if err != nil {
		return dst, st, fmt.Errorf("index: %s text search: %w", sp.name, err)
	}
	sc.tlist = sc.tlist[:0]
	for _, h := range sc.thits {
		sc.tlist = append(sc.tlist, fuse.Ranked{ID: h.ID, Score: h.Score})
	}
	if q.TextHits != nil {
		*q.TextHits = append((*q.TextHits)[:0], sc.tlist...)
	}
	sc.tlist = sc.tlist[:min(len(sc.tlist), depth)]
	st.TextHits = len(sc.tlist)

	if q.Scores {
		return ix.scoreFusion(dst, q.K, sc), st, nil
	}
	k := ix.opts.RRFK
	if k <= 0 {
		k = fuse.DefaultK
	}
	dst = fuse.RRF(dst, k, q.K, sc.vlist, sc.tlist)
	if q.Absolute {
		best := 2 / (k + 1)
		for i := range dst {
			dst[i].Score = min(dst[i].Score/best, 1)
		}
	} else {
		fuse.Normalize(dst)
	}
	return dst, st, nil
}

// vectorWeight is the vector ranking's weight in score fusion.
func (ix *Index) vectorWeight() float64 {
	switch w := ix.opts.VectorWeight; {
	case w < 0:
		return 0
	case w > 0:
		return w
	}
	if _, ok := embed.Base(ix.emb).(*embed.Lexical); ok {
		return DefaultLexicalVectorWeight
	}
	return 1
}

// scoreFusion fuses sc's lists by score (see Query.Scores): the top k by
// fused score, ties by id, the best scaled to 1, appended to dst[:0].
func (ix *Index) scoreFusion(dst []fuse.Ranked, k int, sc *queryScratch) []fuse.Ranked {
	dst = dst[:0]
	best := 0.0
	for _, h := range sc.tlist {
		best = max(best, h.Score)
	}
	vw := ix.vectorWeight()
	add := func(id uint32, s float64) {
		for i := range dst {
			if dst[i].ID == id {
				dst[i].Score += s
				return
			}
		}
		dst = append(dst, fuse.Ranked{ID: id, Score: s})
	}
	if best > 0 {
		for _, h := range sc.tlist {
			add(h.ID, h.Score/best)
		}
	}
	if vw > 0 {
		for _, h := range sc.vlist {
			add(h.ID, vw*h.Score)
		}
	}
	slices.SortFunc(dst, func(a, b fuse.Ranked) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	dst = dst[:min(len(dst), k)]
	fuse.Normalize(dst)
	return dst
}

// Len is the number of live node vectors indexed.
func (ix *Index) Len() int { return ix.nodes.vec.Len() }

// ObsLen is the number of live observation vectors indexed.
func (ix *Index) ObsLen() int { return ix.obs.vec.Len() }

// Graph exposes the nodes' HNSW graph (benchmarks, diagnostics); read-only
// use.
func (ix *Index) Graph() *hnsw.Graph { return ix.nodes.vec }

// NodeVector is the vector a node with this name, type and description
// gets (what the store's vectorizer computes), for comparing a would-be
// node with the indexed ones.
func (ix *Index) NodeVector(ctx context.Context, name, typ, desc string) ([]float32, error) {
	vs, err := NewVectorizer(ix.emb).Vectorize(ctx, []*engine.NodeDoc{{Name: name, Type: typ, Description: desc}})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// SimilarNodes returns up to k nodes of allow whose vectors have a cosine
// similarity of at least minSim with v, most similar first (Score is the
// similarity).
func (ix *Index) SimilarNodes(v []float32, allow *roaring.Bitmap, k int, minSim float64) []fuse.Ranked {
	if allow == nil || allow.IsEmpty() || k <= 0 {
		return nil
	}
	hits := ix.nodes.vec.Search(nil, v, k, hnsw.SearchOptions{Allow: allow})
	out := make([]fuse.Ranked, 0, len(hits))
	for _, h := range hits {
		if sim := 1 - float64(h.Distance); sim >= minSim {
			out = append(out, fuse.Ranked{ID: h.ID, Score: sim})
		}
	}
	return out
}
