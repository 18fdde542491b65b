package hnsw

import (
	"fmt"
	"slices"
	"sync/atomic"
)

// Add inserts id with vector vec. If id is live, its vector is replaced: the
// node is deleted (with neighbour repair) and inserted afresh. If id was
// deleted, it is inserted as a new node. vec is copied (and normalised under
// Cosine); the caller keeps ownership.
//
// Add is safe for concurrent use with every other method; Adds and Deletes
// of the same id are serialised.
func (g *Graph) Add(id uint32, vec []float32) error {
	if err := g.checkVector(vec); err != nil {
		return fmt.Errorf("add %d: %w", id, err)
	}
	s := g.getScratch()
	defer g.putScratch(s)
	level := g.randomLevel()
	mu := g.opLock(id)
	mu.Lock()
	defer mu.Unlock()
	g.insert(s, id, g.prepareQuery(s, vec), level)
	return nil
}

func (g *Graph) checkVector(v []float32) error {
	if len(v) != g.dim {
		return fmt.Errorf("got %d components, want %d: %w", len(v), g.dim, ErrDimensionMismatch)
	}
	finite, nonZero := checkFinite(v)
	if !finite {
		return fmt.Errorf("NaN or infinite component: %w", ErrInvalidVector)
	}
	if !nonZero && g.opts.Metric == Cosine {
		return fmt.Errorf("zero vector under cosine: %w", ErrInvalidVector)
	}
	return nil
}

// insert places v (already normalised when needed) at id. The caller holds
// id's opLock.
func (g *Graph) insert(s *scratch, id uint32, v []float32, level int) {
	ch := g.ensureChunk(id)
	slot := id & chunkMask
	g.slotMu.RLock()
	if st := ch.state[slot].Load(); st&stPresent != 0 {
		// The slot was used before. Unlink it while sharing slotMu, then
		// rewrite it exclusively: a concurrent search may still hold this id
		// (from before the delete) and read its vector.
		if st&stDeleted == 0 {
			g.deleteLocked(s, id)
		}
		g.slotMu.RUnlock()
		g.slotMu.Lock()
		g.clearStaleLinks(ch, slot, id)
		g.fillSlot(ch, slot, v, level)
		g.tombstones.Add(-1)
		g.slotMu.Unlock()
		g.slotMu.RLock()
	} else {
		g.fillSlot(ch, slot, v, level)
	}
	defer g.slotMu.RUnlock()
	markDirty(ch, slot)
	g.link(s, id, ch, slot, level)
}

// fillSlot writes the vector and empty lists of a slot and publishes it as
// present (not yet linked). The slot is either fresh (nobody can reach it)
// or slotMu is held exclusively.
func (g *Graph) fillSlot(ch *chunk, slot uint32, v []float32, level int) {
	g.setVec(ch, slot, v)
	quantize(g.recBytes(ch, slot), v, g.opts.Metric)
	if level > 0 {
		need := level * g.strideU
		if u := ch.upper[slot]; cap(u) >= need {
			u = u[:need]
			clear(u)
			ch.upper[slot] = u
		} else {
			ch.upper[slot] = make([]uint32, need)
		}
	} else {
		ch.upper[slot] = ch.upper[slot][:0]
	}
	in := ch.in[slot]
	if cap(in) >= level+1 {
		in = in[:level+1]
	} else {
		in = make([][]uint32, level+1)
	}
	for l := range in {
		in[l] = in[l][:0]
	}
	ch.in[slot] = in
	atomic.StoreUint32(&ch.l0[int(slot)*g.stride0], 0)
	ch.state[slot].Store(stPresent | uint32(level))
}

// clearStaleLinks empties the out-lists a deleted node kept and removes it
// from its former neighbours' in-lists, before the slot is reused.
func (g *Graph) clearStaleLinks(ch *chunk, slot uint32, id uint32) {
	var buf [2 * maxM]uint32
	for l := 0; l <= levelOf(ch.state[slot].Load()); l++ {
		list := g.links(ch, slot, l)
		for _, y := range loadList(buf[:0], list) {
			g.inRemove(y, id, l)
		}
		storeList(list, nil)
	}
}

// link connects a filled slot into the graph (the paper's INSERT, algorithm
// 1) and marks it linked. The caller holds slotMu shared.
func (g *Graph) link(s *scratch, id uint32, ch *chunk, slot uint32, level int) {
	q := g.queryOf(g.rec(ch, slot))
	epID, epLevel, ok := unpackEntry(g.entry.Load())
	holding := false
	if !ok || level > epLevel {
		// This node may become the entry point. Like hnswlib, keep epMu for
		// the whole insertion so two nodes raising the top level one after
		// the other see each other (they are rare: about log_M(n) of them).
		g.epMu.Lock()
		holding = true
		epID, epLevel, ok = unpackEntry(g.entry.Load())
		if !ok {
			ch.state[slot].Or(stLinked)
			g.live.Add(1)
			g.entry.Store(packEntry(id, level))
			g.epMu.Unlock()
			return
		}
		if level <= epLevel {
			g.epMu.Unlock()
			holding = false
		}
	}

	d := g.dir.Load()
	cur, curD := g.descend(s, d, q, epID, epLevel, level)
	s.seeds = append(s.seeds[:0], item{curD, cur})
	// Without tombstones there is nothing to skip, and checking every
	// candidate's state word costs a cache miss each. A node deleted while
	// we search may still be selected; writeLinks refuses the link.
	checkDel := g.tombstones.Load() > 0
	for l := min(level, epLevel); l >= 0; l-- {
		s.beginLayer(d)
		s.vis.insert(id) // never select ourselves
		for _, it := range s.seeds {
			g.seed(s, d, it, checkDel, nil)
		}
		g.searchLayer(s, d, q, g.opts.EfConstruction, l, checkDel, nil)
		s.w = s.res.drainSorted(s.w[:0])
		if len(s.w) == 0 {
			continue // everything reachable is deleted; keep the seeds
		}
		s.sel = g.selectNeighbors(s, s.w, g.m, s.sel[:0])
		g.connect(s, id, ch, slot, l, q)
		s.seeds = append(s.seeds[:0], s.w...)
	}

	ch.state[slot].Or(stLinked)
	g.live.Add(1)
	if holding {
		g.entry.Store(packEntry(id, level))
		g.epMu.Unlock()
	} else if _, lv, ok := unpackEntry(g.entry.Load()); !ok || level > lv {
		// The entry point was deleted meanwhile and replaced by a lower node.
		g.epMu.Lock()
		if _, lv, ok := unpackEntry(g.entry.Load()); !ok || level > lv {
			g.entry.Store(packEntry(id, level))
		}
		g.epMu.Unlock()
	}
}

// connect writes id's list on layer l from s.sel and adds the reverse links
// (hnswlib's mutuallyConnectNewElement). q is id's record.
func (g *Graph) connect(s *scratch, id uint32, ch *chunk, slot uint32, l int, q qquery) {
	mu := &ch.outMu[slot]
	mu.Lock()
	list := g.links(ch, slot, l)
	old := loadList(s.ids[:0], list)
	next := s.ids2[:0]
	if len(old) == 0 {
		for _, it := range s.sel {
			next = append(next, it.id)
		}
	} else {
		// Concurrent inserts that found us through a higher layer already
		// linked to us here; keep them as candidates.
		c := append(s.cands[:0], s.sel...)
		for _, y := range old {
			if !containsItem(c, y) {
				if ych := g.chunkOf(y); ych != nil {
					c = append(c, item{g.qdist(q, g.rec(ych, y&chunkMask)), y})
				}
			}
		}
		slices.SortFunc(c, cmpItem)
		s.cands = c
		sel := g.selectNeighbors(s, c, g.maxLinks(l), s.sel2[:0])
		s.sel2 = sel
		for _, it := range sel {
			next = append(next, it.id)
		}
	}
	next = g.writeLinks(id, ch, slot, l, list, old, next)
	s.ids, s.ids2 = old, next
	s.back = append(s.back[:0], next...)
	mu.Unlock()

	for _, z := range s.back {
		g.addBacklink(s, z, id, l)
	}
}

// addBacklink makes z link to id on layer l, shrinking z's list with the
// heuristic when it is full.
func (g *Graph) addBacklink(s *scratch, z, id uint32, l int) {
	zch := g.chunkOf(z)
	zs := z & chunkMask
	mu := &zch.outMu[zs]
	mu.Lock()
	defer mu.Unlock()
	st := zch.state[zs].Load()
	if st&stPresent == 0 || st&stDeleted != 0 || levelOf(st) < l {
		return
	}
	list := g.links(zch, zs, l)
	cur := loadList(s.ids[:0], list)
	s.ids = cur
	if slices.Contains(cur, id) {
		return
	}
	if n := len(cur); n < g.maxLinks(l) {
		if g.inAdd(id, z, l) {
			atomic.StoreUint32(&list[n+1], id)
			atomic.StoreUint32(&list[0], uint32(n+1))
			markDirty(zch, zs)
		}
		return
	}
	// Score z's neighbours and id from z, all records in one batch.
	zq := g.queryOf(g.rec(zch, zs))
	ids, ptrs := s.nbIDs[:0], s.nbPtrs[:0]
	for _, y := range append(cur, id) {
		if ych := g.chunkOf(y); ych != nil {
			ids = append(ids, y)
			ptrs = append(ptrs, g.rec(ych, y&chunkMask))
		}
	}
	prefetchAll(ptrs, g.rstride)
	out := s.nbDist[:len(ptrs)]
	g.score(zq, ptrs, out, negInf)
	c := s.cands[:0]
	for j, y := range ids {
		c = append(c, item{out[j], y})
	}
	s.nbIDs, s.nbPtrs = ids[:0], ptrs[:0]
	slices.SortFunc(c, cmpItem)
	s.cands = c
	sel := g.selectNeighbors(s, c, g.maxLinks(l), s.sel2[:0])
	s.sel2 = sel
	next := s.ids2[:0]
	for _, it := range sel {
		next = append(next, it.id)
	}
	s.ids2 = g.writeLinks(z, zch, zs, l, list, cur, next)
}

// selectNeighbors is the paper's heuristic (algorithm 4) as hnswlib runs it:
// walking cands in ascending distance to the base node, keep a candidate
// only if it is closer to the base than to every neighbour kept so far, up
// to m. Pruned candidates are not used to fill up the list
// (keepPrunedConnections = false), and when there are at most m candidates
// all are kept, exactly like hnswlib's getNeighborsByHeuristic2. cands must
// be sorted by cmpItem. Distances are record distances; each candidate is
// scored against the kept ones in one batch that stops at the first
// neighbour closer than the base.
func (g *Graph) selectNeighbors(s *scratch, cands []item, m int, out []item) []item {
	if len(cands) <= m {
		return append(out, cands...)
	}
	d := g.dir.Load()
	kept := s.selPtrs[:0]
	dist := s.nbDist
	for _, c := range cands {
		if len(out) >= m {
			break
		}
		cp := g.rec(d.chunkOf(c.id), c.id&chunkMask)
		good := true
		if len(kept) > 0 {
			cq := g.queryOf(cp)
			k := g.score(cq, kept, dist[:len(kept)], c.d)
			good = dist[k-1] >= c.d
		}
		if good {
			out = append(out, c)
			kept = append(kept, cp)
		}
	}
	s.selPtrs = kept[:0]
	return out
}

// writeLinks replaces x's list on layer l (currently old) by next, keeping
// the reverse index exact. The caller holds x's outMu. Additions whose
// target was deleted meanwhile (or no longer has layer l) are dropped; that
// check happens under the target's inMu, which Delete also takes to set the
// tombstone, so a link to a deleted node can never slip in. Returns the list
// as written (next filtered in place).
func (g *Graph) writeLinks(x uint32, xch *chunk, xs uint32, l int, list, old, next []uint32) []uint32 {
	w := next[:0]
	for _, z := range next {
		if slices.Contains(old, z) || g.inAdd(z, x, l) {
			w = append(w, z)
		}
	}
	for _, y := range old {
		if !slices.Contains(w, y) {
			g.inRemove(y, x, l)
		}
	}
	storeList(list, w)
	markDirty(xch, xs)
	return w
}

// inAdd records that src links to target on layer l, unless target is
// deleted, absent or lower than l. It reports whether the link may be
// written.
func (g *Graph) inAdd(target, src uint32, l int) bool {
	tch := g.chunkOf(target)
	if tch == nil {
		return false
	}
	ts := target & chunkMask
	tch.inMu[ts].Lock()
	st := tch.state[ts].Load()
	ok := st&stPresent != 0 && st&stDeleted == 0 && levelOf(st) >= l
	if ok {
		tch.in[ts][l] = append(tch.in[ts][l], src)
	}
	tch.inMu[ts].Unlock()
	return ok
}

// inRemove removes one occurrence of src from target's in-list on layer l.
func (g *Graph) inRemove(target, src uint32, l int) {
	tch := g.chunkOf(target)
	if tch == nil {
		return
	}
	ts := target & chunkMask
	tch.inMu[ts].Lock()
	if in := tch.in[ts]; l < len(in) {
		if i := slices.Index(in[l], src); i >= 0 {
			last := len(in[l]) - 1
			in[l][i] = in[l][last]
			in[l] = in[l][:last]
		}
	}
	tch.inMu[ts].Unlock()
}

// chunkOf looks id up in the current directory (write paths may meet ids
// newer than the directory their search started with).
func (g *Graph) chunkOf(id uint32) *chunk { return g.dir.Load().chunkOf(id) }

func cmpItem(a, b item) int {
	if a.less(b) {
		return -1
	}
	if b.less(a) {
		return 1
	}
	return 0
}

func containsItem(c []item, id uint32) bool {
	for _, it := range c {
		if it.id == id {
			return true
		}
	}
	return false
}
