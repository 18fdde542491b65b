package hnsw

import (
	"math"
	"slices"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
)

// scratch is the per-operation working memory, pooled in Graph.pool so that
// steady-state searches allocate nothing. Every field is reset by its user;
// nothing in it is shared between goroutines.
type scratch struct {
	// visited[id] == epoch marks id as seen by the current layer search.
	// Bumping epoch clears the set in O(1); on wrap-around the array is
	// zeroed once every 65535 searches.
	visited []uint16
	epoch   uint16

	cand minHeap // candidates to expand, closest first
	res  maxHeap // best acceptable nodes so far, bounded by ef

	q       []float32 // normalised query (Cosine) or inserted vector copy
	w       []item    // one layer's results, ascending
	seeds   []item    // entry points for the next layer
	sel     []item    // heuristic output (new node's neighbours)
	sel2    []item    // heuristic output (backlink and repair shrinking)
	back    []uint32  // neighbours to add reverse links to
	selVecs [][]float32
	cands   []item // heuristic input
	ids     []uint32
	ids2    []uint32
	snap    []uint32 // Delete: copy of the in-lists, all layers
	snapN   [maxLevel + 1]int

	iter roaring.ManyIntIterator
	ibuf [256]uint32
}

func (g *Graph) getScratch() *scratch { return g.pool.Get().(*scratch) }

func (g *Graph) putScratch(s *scratch) {
	s.iter = roaring.ManyIntIterator{} // do not pin the caller's bitmap
	g.pool.Put(s)
}

// beginLayer starts a new visited generation sized for d.
func (s *scratch) beginLayer(d *directory) {
	if n := d.capacity(); len(s.visited) < n {
		s.visited = make([]uint16, n+n/4)
		s.epoch = 0
	}
	s.epoch++
	if s.epoch == 0 {
		clear(s.visited)
		s.epoch = 1
	}
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

// Search appends to dst[:0] the k nearest live nodes to q (fewer if the graph
// or the allow-list holds fewer), in ascending distance, and returns it. With
// a caller-reused dst of capacity >= k it performs no allocation once the
// internal pools are warm. A query whose length differs from Dim, or k <= 0,
// yields no results.
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
	cur, curD := g.descend(d, q, epID, epLevel, 0)

	s.beginLayer(d)
	checkDel := g.tombstones.Load() > 0
	g.seed(s, d, item{curD, cur}, checkDel, opts.Allow)
	g.searchLayer(s, d, q, ef, 0, checkDel, opts.Allow)

	for len(s.res) > k {
		s.res.pop()
	}
	n := len(s.res)
	dst = slices.Grow(dst, n)[:n]
	for i := n - 1; i >= 0; i-- {
		it := s.res.pop()
		dst[i] = Result{ID: it.id, Distance: it.d}
	}
	return dst
}

// descend greedily walks from the entry point down to layer stop+1 and
// returns the closest node found and its distance (layer-by-layer ef=1
// search, as in the paper).
func (g *Graph) descend(d *directory, q []float32, ep uint32, epLevel, stop int) (uint32, float32) {
	cur := ep
	curD := g.dist(q, g.vec(d.chunkOf(ep), ep&chunkMask))
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
			for i := 1; i <= n; i++ {
				nb := atomic.LoadUint32(&list[i])
				nch := d.chunkOf(nb)
				if nch == nil {
					continue
				}
				if dd := g.dist(q, g.vec(nch, nb&chunkMask)); dd < curD {
					cur, curD, changed = nb, dd, true
				}
			}
		}
	}
	return cur, curD
}

// seed marks it visited, queues it as a candidate and, if acceptable, as a
// result.
func (g *Graph) seed(s *scratch, d *directory, it item, checkDel bool, allow *roaring.Bitmap) {
	if int(it.id) >= len(s.visited) || s.visited[it.id] == s.epoch {
		return
	}
	s.visited[it.id] = s.epoch
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
func (g *Graph) searchLayer(s *scratch, d *directory, q []float32, ef, l int, checkDel bool, allow *roaring.Bitmap) {
	vis, epoch := s.visited, s.epoch
	filtering := checkDel || allow != nil
	bound := float32(math.Inf(1))
	if len(s.res) > 0 {
		bound = s.res[0].d
	}
	for len(s.cand) > 0 {
		c := s.cand.pop()
		if c.d > bound && (len(s.res) >= ef || !filtering) {
			break
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
		for i := 1; i <= n; i++ {
			nb := atomic.LoadUint32(&list[i])
			if int(nb) >= len(vis) || vis[nb] == epoch {
				continue // seen, or inserted after our directory snapshot
			}
			vis[nb] = epoch
			nch := d.chunkOf(nb)
			if nch == nil {
				continue
			}
			ns := nb & chunkMask
			dd := g.dist(q, g.vec(nch, ns))
			if len(s.res) < ef || dd < bound {
				s.cand.push(item{dd, nb})
				if (!checkDel || nch.state[ns].Load()&stDeleted == 0) && (allow == nil || allow.Contains(nb)) {
					if len(s.res) < ef {
						s.res.push(item{dd, nb})
					} else {
						s.res.replaceTop(item{dd, nb})
					}
					bound = s.res[0].d
				}
			}
		}
	}
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
		dd := g.dist(q, g.vec(ch, id&chunkMask))
		it := item{dd, id}
		if len(s.res) < k {
			s.res.push(it)
		} else if it.less(s.res[0]) {
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
