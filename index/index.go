package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index/embed"
	"github.com/kgctx/kgctx/index/fuse"
	"github.com/kgctx/kgctx/index/hnsw"
	"github.com/kgctx/kgctx/index/text"
)

// Options configure an Index. Zero fields mean defaults.
type Options struct {
	// TextDir is the bleve index directory; "" keeps it in memory (tests).
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
	// is below it (default 0.2): every node has some nearest neighbour, and
	// without a floor a query about nothing in the graph would still seed
	// the walk with noise. Set it negative to keep every hit.
	MinSimilarity float64
	// Workers is the number of goroutines inserting into HNSW (default
	// GOMAXPROCS).
	Workers int
}

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

// Index is the seed search over one store's nodes.
type Index struct {
	st   *engine.Store
	emb  embed.Embedder
	opts Options
	vec  *hnsw.Graph
	txt  *text.Index

	vecWM, txtWM atomic.Uint64

	qpool sync.Pool // *queryScratch
}

const (
	auxMeta   = "hnsw/meta"
	auxWM     = "hnsw/wm"
	auxNode   = "hnsw/n/"
	textWMKey = "wm"
)

// Open loads (or creates) the indexes of st and attaches them to it, so
// that they replay any change they missed and follow every later write.
// The caller MUST call Close before closing the store.
func Open(ctx context.Context, st *engine.Store, emb embed.Embedder, opts Options) (*Index, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if st.Dim() != emb.Dim() {
		return nil, fmt.Errorf("%w: store dimension %d, embedder %s makes %d", ErrEmbedderMismatch, st.Dim(), emb.Name(), emb.Dim())
	}
	if opts.Workers == 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.MinSimilarity == 0 {
		opts.MinSimilarity = 0.2
	}
	ix := &Index{st: st, emb: emb, opts: opts}
	ix.qpool.New = func() any { return &queryScratch{} }
	hopts := opts.HNSW
	hopts.Dim = emb.Dim()
	hopts.Metric = hnsw.Cosine
	if err := ix.loadVectors(hopts); err != nil {
		return nil, err
	}
	txt, err := text.Open(text.Options{Path: opts.TextDir})
	if err != nil {
		return nil, fmt.Errorf("index: open text index: %w", err)
	}
	ix.txt = txt
	if b, err := txt.GetMeta(textWMKey); err == nil {
		wm, perr := strconv.ParseUint(string(b), 10, 64)
		if perr != nil {
			txt.Close()
			return nil, fmt.Errorf("index: text watermark %q: %w", b, perr)
		}
		ix.txtWM.Store(wm)
	} else if !errors.Is(err, text.ErrMetaNotFound) {
		txt.Close()
		return nil, fmt.Errorf("index: text watermark: %w", err)
	}
	if err := st.Attach(ctx, ix); err != nil {
		txt.Close()
		return nil, err
	}
	return ix, nil
}

// loadVectors restores the HNSW graph from the aux space, streaming the
// stored node vectors alongside (both are in id order), or starts empty.
func (ix *Index) loadVectors(hopts hnsw.Options) error {
	meta, err := ix.st.GetAux([]byte(auxMeta))
	if errors.Is(err, engine.ErrNotFound) {
		g, err := hnsw.New(hopts)
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
		ix.vec = g
		return nil
	} else if err != nil {
		return fmt.Errorf("index: read hnsw meta: %w", err)
	}
	if b, err := ix.st.GetAux([]byte(auxWM)); err == nil && len(b) == 8 {
		ix.vecWM.Store(binary.BigEndian.Uint64(b))
	}
	vecs := func(yield func(uint32, []float32) bool) {
		_ = ix.st.EachVector(func(id uint32, v []float32) error {
			if !yield(id, v) {
				return errStop
			}
			return nil
		})
	}
	next, stop := iter.Pull2(iter.Seq2[uint32, []float32](vecs))
	defer stop()
	curID, curVec, ok := next()
	vector := func(id uint32) []float32 {
		for ok && curID < id {
			curID, curVec, ok = next()
		}
		if ok && curID == id {
			return curVec
		}
		return nil
	}
	nodes := func(yield func(id uint32, data []byte) error) error {
		return ix.st.EachAux([]byte(auxNode), func(k, v []byte) error {
			if len(k) != len(auxNode)+4 {
				return fmt.Errorf("index: malformed hnsw key %q", k)
			}
			return yield(binary.BigEndian.Uint32(k[len(auxNode):]), v)
		})
	}
	g, err := hnsw.Load(hopts, meta, nodes, vector)
	if err != nil {
		return fmt.Errorf("index: load hnsw: %w", err)
	}
	ix.vec = g
	return nil
}

var errStop = errors.New("stop")

// Close closes the text index. The HNSW state is already durable.
func (ix *Index) Close() error { return ix.txt.Close() }

// Name implements engine.Indexer.
func (ix *Index) Name() string { return "nodes" }

// Watermark implements engine.Indexer: the lower of the two indexes'.
func (ix *Index) Watermark() uint64 { return min(ix.vecWM.Load(), ix.txtWM.Load()) }

// Apply implements engine.Indexer. The vector and text sides are updated
// concurrently: they are independent, and the text side spends much of its
// time waiting for fsync.
func (ix *Index) Apply(ctx context.Context, cs *engine.ChangeSet) error {
	var vecErr, txtErr error
	var wg sync.WaitGroup
	if cs.Seq > ix.txtWM.Load() {
		wg.Go(func() { txtErr = ix.applyText(cs) })
	}
	if cs.Seq > ix.vecWM.Load() {
		vecErr = ix.applyVectors(cs)
	}
	wg.Wait()
	return errors.Join(vecErr, txtErr)
}

func (ix *Index) applyVectors(cs *engine.ChangeSet) error {
	var ids []uint32
	var vecs [][]float32
	for _, d := range cs.Upserts {
		if d.Vector != nil {
			ids = append(ids, d.Dense)
			vecs = append(vecs, d.Vector)
		}
	}
	if len(ids) > 0 {
		workers := ix.opts.Workers
		if len(ids) < 256 {
			workers = 1
		}
		if err := ix.vec.AddBatch(ids, vecs, workers); err != nil {
			return fmt.Errorf("index: hnsw insert: %w", err)
		}
	}
	for _, id := range cs.Deletes {
		ix.vec.Delete(id)
	}
	dirty := ix.vec.TakeDirty()
	err := ix.st.WriteAux(func(w *engine.AuxWriter) error {
		key := []byte(auxNode + "\x00\x00\x00\x00")
		var buf []byte
		for _, id := range dirty {
			binary.BigEndian.PutUint32(key[len(auxNode):], id)
			buf = ix.vec.AppendNode(buf[:0], id)
			w.Set(key, buf)
		}
		w.Set([]byte(auxMeta), ix.vec.MarshalMeta())
		w.Set([]byte(auxWM), binary.BigEndian.AppendUint64(nil, cs.Seq))
		return nil
	})
	if err != nil {
		return fmt.Errorf("index: persist hnsw: %w", err)
	}
	ix.vecWM.Store(cs.Seq)
	return nil
}

func (ix *Index) applyText(cs *engine.ChangeSet) error {
	docs := make([]text.Doc, len(cs.Upserts))
	for i, d := range cs.Upserts {
		docs[i] = text.Doc{ID: d.Dense, Org: d.OrgID, Project: d.ProjectID, Name: d.Name, Aliases: d.Aliases, Type: d.Type, Description: d.Description}
	}
	if err := ix.txt.UpsertWithMeta(docs, cs.Deletes, textWMKey, strconv.AppendUint(nil, cs.Seq, 10)); err != nil {
		return fmt.Errorf("index: text update: %w", err)
	}
	ix.txtWM.Store(cs.Seq)
	return nil
}

// Check implements engine.Checker: HNSW invariants (neighbours exist and
// are live).
func (ix *Index) Check() error { return ix.vec.Check() }

// Query is one seed search.
type Query struct {
	Text string
	// Org is required; Project "" searches the whole org.
	Org, Project string
	// Allow is the scope's node bitmap (from an engine.View): vector hits
	// and text hits are restricted to it. Required for vector hits: the
	// HNSW graph spans every tenant, so a nil Allow skips the vector
	// ranking rather than search across tenants. Only read.
	Allow *roaring.Bitmap
	// K is the number of seeds wanted.
	K int
}

// Stats describe one search.
type Stats struct {
	VectorHits, TextHits int
}

type queryScratch struct {
	qv     []float32
	vhits  []hnsw.Result
	vlist  []fuse.Ranked
	thits  []text.Hit
	tlist  []fuse.Ranked
	single [1]string
}

// Search returns up to q.K seeds (dense node ids) with fused scores
// normalised so the best is 1, appended to dst[:0].
func (ix *Index) Search(ctx context.Context, dst []fuse.Ranked, q Query) ([]fuse.Ranked, Stats, error) {
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
	if lex, ok := ix.emb.(*embed.Lexical); ok {
		sc.qv = lex.EmbedInto(sc.qv, q.Text)
	} else {
		sc.single[0] = q.Text
		vs, err := ix.emb.Embed(ctx, sc.single[:])
		if err != nil {
			return dst, st, fmt.Errorf("index: embed query: %w", err)
		}
		sc.qv = append(sc.qv[:0], vs[0]...)
	}
	sc.vhits = sc.vhits[:0]
	if q.Allow != nil {
		sc.vhits = ix.vec.Search(sc.vhits, sc.qv, depth, hnsw.SearchOptions{Allow: q.Allow})
	}
	sc.vlist = sc.vlist[:0]
	maxDist := float32(1 - ix.opts.MinSimilarity)
	for _, h := range sc.vhits {
		if h.Distance <= maxDist {
			sc.vlist = append(sc.vlist, fuse.Ranked{ID: h.ID, Score: float64(1 - h.Distance)})
		}
	}
	st.VectorHits = len(sc.vlist)

	// Text ranking.
	var err error
	sc.thits, err = ix.txt.SearchContext(ctx, sc.thits, q.Text, depth, text.Filter{Org: q.Org, Project: q.Project, Allow: q.Allow})
	if err != nil {
		return dst, st, fmt.Errorf("index: text search: %w", err)
	}
	sc.tlist = sc.tlist[:0]
	for _, h := range sc.thits {
		sc.tlist = append(sc.tlist, fuse.Ranked{ID: h.ID, Score: h.Score})
	}
	st.TextHits = len(sc.tlist)

	dst = fuse.RRF(dst, ix.opts.RRFK, q.K, sc.vlist, sc.tlist)
	fuse.Normalize(dst)
	return dst, st, nil
}

// Len is the number of live vectors indexed.
func (ix *Index) Len() int { return ix.vec.Len() }

// Graph exposes the HNSW graph (benchmarks, diagnostics); read-only use.
func (ix *Index) Graph() *hnsw.Graph { return ix.vec }
