package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/index/hnsw"
	"github.com/kgctx/kgctx/index/text"
)

// space is one searchable collection: an HNSW graph and a text index over
// the same dense ids (nodes, or observations), each with the watermark of
// the change sets it has made durable.
type space struct {
	name   string
	aux    string // aux key prefix of the HNSW records ("hnsw/", "ohnsw/")
	vec    *hnsw.Graph
	txt    *text.Index
	vecWM  atomic.Uint64
	txtWM  atomic.Uint64
	txtNew bool // the text index has no watermark yet (rebuildText)
	worker int
}

func (sp *space) auxMeta() string { return sp.aux + "meta" }
func (sp *space) auxWM() string   { return sp.aux + "wm" }
func (sp *space) auxNode() string { return sp.aux + "n/" }

const textWMKey = "wm"

// open loads the space's HNSW graph from the store's aux records (its
// vectors streamed from eachVector, which yields them in id order), or
// starts an empty one, and opens its text index at dir.
func (sp *space) open(st *engine.Store, hopts hnsw.Options, eachVector func(func(uint32, []float32) error) error, dir string) error {
	if err := sp.loadVectors(st, hopts, eachVector); err != nil {
		return err
	}
	txt, err := text.Open(text.Options{Path: dir})
	if errors.Is(err, text.ErrSchemaMismatch) && dir != "" {
		// Written with other analyzers (an older kgctx): it is derived
		// state, so it is made again from the store (Index.Attach).
		st.Logger().Warn("the text index was written by another version; rebuilding it from the store", "index", sp.name, "err", err)
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("index: remove the %s text index of another version: %w", sp.name, err)
		}
		txt, err = text.Open(text.Options{Path: dir})
	}
	if err != nil {
		return fmt.Errorf("index: open %s text index: %w", sp.name, err)
	}
	sp.txt = txt
	sp.txtNew = false
	if b, err := txt.GetMeta(textWMKey); err == nil {
		wm, perr := strconv.ParseUint(string(b), 10, 64)
		if perr != nil {
			txt.Close()
			return fmt.Errorf("index: %s text watermark %q: %w", sp.name, b, perr)
		}
		sp.txtWM.Store(wm)
	} else if !errors.Is(err, text.ErrMetaNotFound) {
		txt.Close()
		return fmt.Errorf("index: %s text watermark: %w", sp.name, err)
	} else {
		sp.txtNew = true
	}
	return nil
}

// rebuildBatch is how many documents a text rebuild writes at a time.
const rebuildBatch = 8192

// rebuildText fills a new text index (no watermark: created, or replaced
// by open) from every live document of the store, when the store has
// committed changes: its change log keeps only what the indexers have not
// passed, so replaying it would leave out everything older. The watermark
// is written last, with the final batch: a rebuild cut short starts over
// at the next open. each streams the documents.
func (sp *space) rebuildText(st *engine.Store, each func(yield func(text.Doc) error) error) error {
	if !sp.txtNew {
		return nil
	}
	seq := st.Seq()
	if seq == 0 {
		return nil
	}
	start := time.Now()
	batch := make([]text.Doc, 0, rebuildBatch)
	n := 0
	err := each(func(d text.Doc) error {
		batch = append(batch, d)
		if len(batch) < rebuildBatch {
			return nil
		}
		n += len(batch)
		err := sp.txt.Upsert(batch)
		batch = batch[:0]
		return err
	})
	if err == nil {
		n += len(batch)
		err = sp.txt.UpsertWithMeta(batch, nil, textWMKey, strconv.AppendUint(nil, seq, 10))
	}
	if err != nil {
		return fmt.Errorf("index: rebuild the %s text index: %w", sp.name, err)
	}
	sp.txtWM.Store(seq)
	sp.txtNew = false
	st.Logger().Info("text index rebuilt from the store", "index", sp.name, "documents", n, "seq", seq, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

func (sp *space) loadVectors(st *engine.Store, hopts hnsw.Options, eachVector func(func(uint32, []float32) error) error) error {
	meta, err := st.GetAux([]byte(sp.auxMeta()))
	if errors.Is(err, engine.ErrNotFound) {
		g, err := hnsw.New(hopts)
		if err != nil {
			return fmt.Errorf("index: %w", err)
		}
		sp.vec = g
		return nil
	} else if err != nil {
		return fmt.Errorf("index: read %s hnsw meta: %w", sp.name, err)
	}
	if b, err := st.GetAux([]byte(sp.auxWM())); err == nil && len(b) == 8 {
		sp.vecWM.Store(binary.BigEndian.Uint64(b))
	}
	var readErr error // a failure to read the vectors, reported after the load
	vecs := func(yield func(uint32, []float32) bool) {
		if err := eachVector(func(id uint32, v []float32) error {
			if !yield(id, v) {
				return errStop
			}
			return nil
		}); err != nil && !errors.Is(err, errStop) {
			readErr = err
		}
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
	prefix := sp.auxNode()
	nodes := func(yield func(id uint32, data []byte) error) error {
		return st.EachAux([]byte(prefix), func(k, v []byte) error {
			if len(k) != len(prefix)+4 {
				return fmt.Errorf("index: malformed hnsw key %q", k)
			}
			return yield(binary.BigEndian.Uint32(k[len(prefix):]), v)
		})
	}
	g, err := hnsw.Load(hopts, meta, nodes, vector)
	stop() // ends the vector stream, so readErr is final
	if readErr != nil {
		return fmt.Errorf("index: read %s vectors: %w", sp.name, readErr)
	}
	if err != nil {
		return fmt.Errorf("index: load %s hnsw: %w", sp.name, err)
	}
	sp.vec = g
	return nil
}

var errStop = errors.New("stop")

func (sp *space) watermark() uint64 { return min(sp.vecWM.Load(), sp.txtWM.Load()) }

// applyVectors inserts the vectors given, deletes dels, then persists the
// HNSW records that changed and the watermark, in that order.
//
// When ctx ends during the inserts (the store abandons its indexers at a
// quick close) nothing is persisted: the records on disk stay those of the
// last applied set, and the store's change log replays this one at the
// next open.
func (sp *space) applyVectors(ctx context.Context, st *engine.Store, seq uint64, ids []uint32, vecs [][]float32, dels []uint32) error {
	if seq <= sp.vecWM.Load() {
		return nil
	}
	if len(ids) > 0 {
		workers := sp.worker
		if len(ids) < 256 {
			workers = 1
		}
		if err := sp.vec.AddBatchContext(ctx, ids, vecs, workers); err != nil {
			return fmt.Errorf("index: %s hnsw insert: %w", sp.name, err)
		}
	}
	for _, id := range dels {
		sp.vec.Delete(id)
	}
	dirty := sp.vec.TakeDirty()
	prefix := sp.auxNode()
	err := st.WriteAux(func(w *engine.AuxWriter) error {
		key := []byte(prefix + "\x00\x00\x00\x00")
		var buf []byte
		for _, id := range dirty {
			binary.BigEndian.PutUint32(key[len(prefix):], id)
			buf = sp.vec.AppendNode(buf[:0], id)
			w.Set(key, buf)
		}
		w.Set([]byte(sp.auxMeta()), sp.vec.MarshalMeta())
		w.Set([]byte(sp.auxWM()), binary.BigEndian.AppendUint64(nil, seq))
		return nil
	})
	if err != nil {
		return fmt.Errorf("index: persist %s hnsw: %w", sp.name, err)
	}
	sp.vecWM.Store(seq)
	return nil
}

func (sp *space) applyText(seq uint64, docs []text.Doc, dels []uint32) error {
	if seq <= sp.txtWM.Load() {
		return nil
	}
	if err := sp.txt.UpsertWithMeta(docs, dels, textWMKey, strconv.AppendUint(nil, seq, 10)); err != nil {
		return fmt.Errorf("index: %s text update: %w", sp.name, err)
	}
	sp.txtWM.Store(seq)
	return nil
}
