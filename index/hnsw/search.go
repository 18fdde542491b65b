package hnsw

import (
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/RoaringBitmap/roaring/v2"
)

// scratch is the per-operation working memory, pooled in Graph.pool so that
// steady-state searches allocate nothing. Every field is reset by its user;
// nothing in it is shared between goroutines.
type scratch struct {
	vis visitedSet // ids seen by the current layer search

	cand minHeap // candidates to expand, closest first
	res  maxHeap // best acceptable nodes so far, bounded by ef

	q     []float32 // normalised query (Cosine) or inserted vector copy
	qrec  []uint64  // quantised query record (uint64 for alignment)
	w     []item    // one layer's results, ascending
	seeds []item    // entry points for the next layer
	sel   []item    // heuristic output (new node's neighbours)
	sel2  []item    // heuristic output (backlink and repair shrinking)
	back  []uint32  // neighbours to add reverse links to
	cands []item    // heuristic input
	ext   []item    // AddBatch: the earlier items of the wave, scored
	ids   []uint32
	ids2  []uint32
	snap  []uint32 // Delete: copy of the in-lists, all layers
	snapN [maxLevel + 1]int

	// One expansion's batch: the unvisited neighbours, their records and
	// distances. selPtrs holds the records the heuristic kept.
	nbIDs   []uint32
	nbPtrs  []unsafe.Pointer
	nbDist  []float32
	pIDs    []uint32 // the batch in flight (searchLayer's pipeline)
	pPtrs   []unsafe.Pointer
	selPtrs []unsafe.Pointer
	// maskPtrs: rerank's sparse masks to fetch, beside nbPtrs' vectors.
	maskPtrs []unsafe.Pointer

	iter roaring.ManyIntIterator
	ibuf [256]uint32

	vec []float32 // a vector restored from the sparse layout (vbuf)
}

func (g *Graph) getScratch() *scratch {
	s := g.pool.Get().(*scratch)
	if n := 2 * g.m0; cap(s.nbIDs) < n {
		s.nbIDs = make([]uint32, 0, n)
		s.nbPtrs = make([]unsafe.Pointer, 0, n)
		s.nbDist = make([]float32, n)
		s.pIDs = make([]uint32, 0, n)
		s.pPtrs = make([]unsafe.Pointer, 0, n)
		s.selPtrs = make([]unsafe.Pointer, 0, n)
		s.maskPtrs = make([]unsafe.Pointer, 0, n)
	}
	return s
}

func (g *Graph) putScratch(s *scratch) {
	s.iter = roaring.ManyIntIterator{} // do not pin the caller's bitmap
	g.pool.Put(s)
}

// beginLayer starts a new layer search: empty visited set and heaps.
func (s *scratch) beginLayer(d *directory) {
	s.vis.reset(d.capacity())
	s.cand = s.cand[:0]
	s.res = s.res[:0]
}

// prepareQuery returns the vector to search with: q itself for L2, a
// normalised copy in s.q for Cosine.
func (g *Graph) prepareQuery(s *scratch, q []float32) []float32 {
	if g.opts.Metric != Cosine {
		return q
	}
	s.q = slices.Grow(s.q[:0], g.dim)[:g.dim]
	normalizeInto(s.q, q)
	return s.q
}

// quantizeQuery writes the record of q (already prepared) into s.qrec and
// returns its query form.
func (g *Graph) quantizeQuery(s *scratch, q []float32) qquery {
	words := (g.rstride + 7) / 8
	s.qrec = slices.Grow(s.qrec[:0], words)[:words]
	rec := unsafe.Slice((*byte)(unsafe.Pointer(&s.qrec[0])), g.rstride)
	quantize(rec, q, g.opts.Metric)
	if g.opts.Metric != L2 && rec[0] == 0 && !slices.ContainsFunc(rec, func(b byte) bool { return b != 0 }) {
		// A zero query (every cosine distance is 1) must not make the
		// scale-free record distance 0/0: any direction will do.
		rec[0] = 1
	}
	return g.queryOf(unsafe.Pointer(&s.qrec[0]))
}

// Search appends to dst[:0] the k nearest live nodes to q (fewer if the graph
// or the allow-list holds fewer), in ascending distance, and returns it. With
// a caller-reused dst of capacity >= k it performs no allocation once the
// internal pools are warm. A query whose length differs from Dim, or k <= 0,
// yields no results.
//
// The walk scores quantised records (see quant.go); its ef best candidates
// are then re-ranked with the exact vectors, so the distances and the order
// of the results are exact.
//
// With opts.Allow the walk still traverses disallowed nodes (so the graph
// stays connected) but only allowed ones are collected, and it keeps
// expanding until ef allowed nodes are found or the reachable graph is
// exhausted. Small allow-lists (see Options.ExactCutoff) are scanned exactly
// instead. Deleted nodes are never returned.
//
// Search is safe to call concurrently with every other method.
func (g *Graph) Search(dst []Result, q []float32, k int, opts SearchOptions) []Result {
	dst = dst[:0]
	if k <= 0 || len(q) != g.dim {
		return dst
	}
	s := g.getScratch()
	defer g.putScratch(s)
	q = g.prepareQuery(s, q)
	g.slotMu.RLock()
	defer g.slotMu.RUnlock()

	if allow := opts.Allow; allow != nil {
		card := allow.GetCardinality()
		if card == 0 {
			return dst
		}
		if card <= uint64(g.opts.ExactCutoff) || card*20 < uint64(g.live.Load()) {
			return g.exact(s, dst, q, k, allow)
		}
	}
	epID, epLevel, ok := unpackEntry(g.entry.Load())
	if !ok {
		return dst
	}
	ef := opts.Ef
	if ef <= 0 {
		ef = g.opts.EfSearch
	}
	ef = max(ef, k)
	d := g.dir.Load()
	qq := g.quantizeQuery(s, q)
	cur, curD := g.descend(s, d, qq, epID, epLevel, 0)

	s.beginLayer(d)
	checkDel := g.tombstones.Load() > 0
	g.seed(s, d, item{curD, cur}, checkDel, opts.Allow)
	g.searchLayer(s, d, qq, ef, 0, checkDel, opts.Allow)
	return g.rerank(s, d, dst, q, k)
}

// rerank replaces the record distances of the candidates in s.res by exact
// distances to q and appends the k best to dst, ascending.
func (g *Graph) rerank(s *scratch, d *directory, dst []Result, q []float32, k int) []Result {
	w := s.w[:0]
	// Every candidate's vector is fetched before the first distance; under
	// Options.Sparse its mask too, which is read first (a miss each,
	// otherwise: a third of a search's time at a million nodes).
	ptrs, masks := s.nbPtrs[:0], s.maskPtrs[:0]
	for i := range s.res {
		it := s.res.at(i)
		w = append(w, it)
		ch, slot := d.chunkOf(it.id), it.id&chunkMask
		ptrs = append(ptrs, g.vecAddr(ch, slot))
		if g.sparse > 0 {
			masks = append(masks, unsafe.Pointer(&ch.spMask[int(slot)*g.maskWords]))
		}
		if len(ptrs) == cap(ptrs) {
			prefetchAll(ptrs, g.vecBytes())
			prefetchAll(masks, 8*g.maskWords)
			ptrs, masks = ptrs[:0], masks[:0]
		}
	}
	prefetchAll(ptrs, g.vecBytes())
	prefetchAll(masks, 8*g.maskWords)
	s.nbPtrs, s.maskPtrs = ptrs[:0], masks[:0]
	s.res = s.res[:0]
	for _, it := range w {
		it.d = g.dist(q, g.vec(s.vbuf(g.dim), d.chunkOf(it.id), it.id&chunkMask))
		if len(s.res) < k {
			s.res.push(it)
		} else if it.less(s.res.top()) {
			s.res.replaceTop(it)
		}
	}
	s.w = w[:0]
	n := len(s.res)
	dst = slices.Grow(dst, n)[:n]
	for i := n - 1; i >= 0; i-- {
		it := s.res.pop()
		dst[i] = Result{ID: it.id, Distance: it.d}
	}
	return dst
}

// descend greedily walks from the entry point down to layer stop+1 and
// returns the closest node found and its record distance (layer-by-layer
// ef=1 search, as in the paper).
func (g *Graph) descend(s *scratch, d *directory, q qquery, ep uint32, epLevel, stop int) (uint32, float32) {
	cur := ep
	curD := g.qdist(q, g.rec(d.chunkOf(ep), ep&chunkMask))
	for l := epLevel; l > stop; l-- {
		for changed := true; changed; {
			changed = false
			ch := d.chunkOf(cur)
			slot := cur & chunkMask
			// A stale link (from a deleted node) may lead to a node re-added
			// at a lower level; never read a layer a node does not have.
			if st := ch.state[slot].Load(); st&stPresent == 0 || levelOf(st) < l {
				break
			}
			list := g.links(ch, slot, l)
			n := listLen(list)
			ids, ptrs := s.nbIDs[:0], s.nbPtrs[:0]
			for i := 1; i <= n; i++ {
				nb := atomic.LoadUint32(&list[i])
				if p := d.recOf(nb, g.rstride); p != nil {
					ids = append(ids, nb)
					ptrs = append(ptrs, p)
				}
			}
			prefetchAll(ptrs, g.rstride)
			out := s.nbDist[:len(ptrs)]
			g.score(q, ptrs, out, negInf)
			for j, dd := range out {
				if dd < curD {
					cur, curD, changed = ids[j], dd, true
				}
			}
			s.nbIDs, s.nbPtrs = ids[:0], ptrs[:0]
		}
	}
	return cur, curD
}

// seed marks it visited, queues it as a candidate and, if acceptable, as a
// result.
func (g *Graph) seed(s *scratch, d *directory, it item, checkDel bool, allow *roaring.Bitmap) {
	if d.chunkOf(it.id) == nil || !s.vis.insert(it.id) {
		return
	}
	s.cand.push(it)
	if g.acceptable(d, it.id, checkDel, allow) {
		s.res.push(it)
	}
}

func (g *Graph) acceptable(d *directory, id uint32, checkDel bool, allow *roaring.Bitmap) bool {
	if checkDel && d.chunkOf(id).state[id&chunkMask].Load()&stDeleted != 0 {
		return false
	}
	return allow == nil || allow.Contains(id)
}

// listLen loads the count of a [count, ids...] window, clamped to its
// capacity.
func listLen(list []uint32) int {
	n := int(atomic.LoadUint32(&list[0]))
	if n > len(list)-1 {
		n = len(list) - 1
	}
	return n
}

// searchLayer is the paper's SEARCH-LAYER (algorithm 2) with hnswlib's
// filtering rule: s.cand holds the seeds, s.res the acceptable ones; on
// return s.res holds up to ef acceptable nodes. Unacceptable nodes (deleted,
// or outside allow) are expanded but not collected, and while filtering the
// search does not stop before s.res is full, so a selective filter widens the
// walk instead of returning fewer than ef results.
//
// The walk is bound by memory latency, so it is software-pipelined: an
// expansion collects the unvisited neighbours of the best candidate and
// prefetches all their records, then scores the batch the previous
// expansion prefetched (whose records have arrived meanwhile). The misses of
// a whole batch overlap, and the wait for one batch overlaps the gathering
// of the next. Expanding a candidate one batch early can only add an
// expansion the strict order would have skipped, never drop one: a
// candidate that fails the stopping test while a batch is pending is put
// back and retested once the batch is in.
func (g *Graph) searchLayer(s *scratch, d *directory, q qquery, ef, l int, checkDel bool, allow *roaring.Bitmap) {
	filtering := checkDel || allow != nil
	bound := posInf
	if len(s.res) > 0 {
		bound = s.res.top().d
	}
	ids, ptrs := s.nbIDs[:0], s.nbPtrs[:0] // the batch being gathered
	pids, pptrs := s.pIDs[:0], s.pPtrs[:0] // the batch in flight
	for {
		if len(s.cand) == 0 {
			if len(pids) == 0 {
				break
			}
			bound = g.absorb(s, d, q, pids, pptrs, bound, ef, checkDel, allow)
			pids, pptrs = pids[:0], pptrs[:0]
			continue
		}
		c := s.cand.pop()
		if c.d > bound && (len(s.res) >= ef || !filtering) {
			if len(pids) == 0 {
				break
			}
			s.cand.push(c)
			bound = g.absorb(s, d, q, pids, pptrs, bound, ef, checkDel, allow)
			pids, pptrs = pids[:0], pptrs[:0]
			continue
		}
		ch := d.chunkOf(c.id)
		slot := c.id & chunkMask
		var list []uint32
		if l == 0 {
			o := int(slot) * g.stride0
			list = ch.l0[o : o+g.stride0 : o+g.stride0]
		} else {
			if st := ch.state[slot].Load(); st&stPresent == 0 || levelOf(st) < l {
				continue
			}
			list = g.links(ch, slot, l)
		}
		n := listLen(list)
		ids, ptrs = ids[:0], ptrs[:0]
		for i := 1; i <= n; i++ {
			nb := atomic.LoadUint32(&list[i])
			if !s.vis.insert(nb) {
				continue
			}
			// An id inserted after our directory snapshot has no chunk in it.
			if p := d.recOf(nb, g.rstride); p != nil {
				ids = append(ids, nb)
				ptrs = append(ptrs, p)
			}
		}
		prefetchAll(ptrs, g.rstride)
		if len(pids) > 0 {
			bound = g.absorb(s, d, q, pids, pptrs, bound, ef, checkDel, allow)
		}
		if l == 0 && len(s.cand) > 0 {
			// The next expansion's list, while this batch is in flight.
			next := s.cand.topID()
			if nch := d.chunkOf(next); nch != nil {
				prefetchRange(unsafe.Pointer(&nch.l0[int(next&chunkMask)*g.stride0]), 4*g.stride0)
			}
		}
		ids, pids = pids[:0], ids
		ptrs, pptrs = pptrs[:0], ptrs
	}
	s.nbIDs, s.nbPtrs, s.pIDs, s.pPtrs = ids[:0], ptrs[:0], pids[:0], pptrs[:0]
}

// absorb scores a batch of neighbours and offers them to the candidate and
// result heaps; it returns the new bound (the farthest result once ef are
// held).
func (g *Graph) absorb(s *scratch, d *directory, q qquery, ids []uint32, ptrs []unsafe.Pointer, bound float32, ef int, checkDel bool, allow *roaring.Bitmap) float32 {
	out := s.nbDist[:len(ids)]
	g.score(q, ptrs, out, negInf)
	for j, nb := range ids {
		dd := out[j]
		if len(s.res) < ef || dd < bound {
			s.cand.push(item{dd, nb})
			if (!checkDel || d.chunkOf(nb).state[nb&chunkMask].Load()&stDeleted == 0) && (allow == nil || allow.Contains(nb)) {
				if len(s.res) < ef {
					s.res.push(item{dd, nb})
				} else {
					s.res.replaceTop(item{dd, nb})
				}
				bound = s.res.top().d
			}
		}
	}
	return bound
}

// Exact appends to dst[:0] the k nearest non-deleted nodes to q by brute
// force, restricted to allow when it is non-nil. It is the oracle of the
// tests and the small-allow-list path of Search. Same contract as Search.
func (g *Graph) Exact(dst []Result, q []float32, k int, allow *roaring.Bitmap) []Result {
	dst = dst[:0]
	if k <= 0 || len(q) != g.dim {
		return dst
	}
	s := g.getScratch()
	defer g.putScratch(s)
	q = g.prepareQuery(s, q)
	g.slotMu.RLock()
	defer g.slotMu.RUnlock()
	return g.exact(s, dst, q, k, allow)
}

func (g *Graph) exact(s *scratch, dst []Result, q []float32, k int, allow *roaring.Bitmap) []Result {
	s.res = s.res[:0]
	d := g.dir.Load()
	consider := func(ch *chunk, id uint32) {
		dd := g.dist(q, g.vec(s.vbuf(g.dim), ch, id&chunkMask))
		it := item{dd, id}
		if len(s.res) < k {
			s.res.push(it)
		} else if it.less(s.res.top()) {
			s.res.replaceTop(it)
		}
	}
	if allow != nil {
		s.iter.Initialize(allow)
	scan:
		for {
			n := s.iter.NextMany(s.ibuf[:])
			if n == 0 {
				break
			}
			for _, id := range s.ibuf[:n] {
				if int(id>>chunkShift) >= len(d.chunks) {
					break scan // ids are ascending: the rest is beyond the graph
				}
				ch := d.chunks[id>>chunkShift]
				if ch == nil {
					continue
				}
				if st := ch.state[id&chunkMask].Load(); st&stPresent == 0 || st&stDeleted != 0 {
					continue
				}
				consider(ch, id)
			}
		}
	} else {
		for ci, ch := range d.chunks {
			if ch == nil {
				continue
			}
			base := uint32(ci) << chunkShift
			for slot := range uint32(chunkSize) {
				if st := ch.state[slot].Load(); st&stPresent == 0 || st&stDeleted != 0 {
					continue
				}
				consider(ch, base|slot)
			}
		}
	}
	n := len(s.res)
	dst = slices.Grow(dst, n)[:n]
	for i := n - 1; i >= 0; i-- {
		it := s.res.pop()
		dst[i] = Result{ID: it.id, Distance: it.d}
	}
	return dst
}

// vbuf returns s's buffer for a vector restored from the sparse layout.
func (s *scratch) vbuf(dim int) []float32 {
	if cap(s.vec) < dim {
		s.vec = make([]float32, dim)
	}
	return s.vec[:dim]
}
