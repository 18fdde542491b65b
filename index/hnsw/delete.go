package hnsw

import "slices"

// Delete removes id: it is tombstoned at once (no Search that starts after
// Delete returns can return it) and every live node that linked to it
// reselects its neighbours with the heuristic from its remaining neighbours
// plus the deleted node's neighbours, so the graph stays navigable. If id
// was the entry point, the live node with the highest level replaces it.
// Delete reports whether id was live.
//
// The slot's memory (vector and stale out-lists) is kept: concurrent
// searches may still be walking through it. Add of a deleted id reuses the
// slot as a fresh node.
//
// Delete is safe for concurrent use with every other method.
func (g *Graph) Delete(id uint32) bool {
	mu := g.opLock(id)
	mu.Lock()
	defer mu.Unlock()
	s := g.getScratch()
	defer g.putScratch(s)
	g.slotMu.RLock()
	defer g.slotMu.RUnlock()
	return g.deleteLocked(s, id)
}

// deleteLocked is Delete with opLock(id) and slotMu (shared) held.
func (g *Graph) deleteLocked(s *scratch, id uint32) bool {
	ch := g.chunkOf(id)
	if ch == nil {
		return false
	}
	slot := id & chunkMask

	// Setting the tombstone and snapshotting the in-lists under inMu is
	// what makes the snapshot complete: inAdd checks the tombstone under
	// the same lock, so every link to id either is in the snapshot or was
	// refused.
	ch.inMu[slot].Lock()
	st := ch.state[slot].Load()
	if !isLive(st) {
		ch.inMu[slot].Unlock()
		return false
	}
	ch.state[slot].Or(stDeleted)
	level := levelOf(st)
	s.snap = s.snap[:0]
	for l := 0; l <= level; l++ {
		s.snap = append(s.snap, ch.in[slot][l]...)
		s.snapN[l] = len(s.snap)
	}
	ch.inMu[slot].Unlock()
	g.live.Add(-1)
	g.tombstones.Add(1)
	markDirty(ch, slot)

	if ep, _, ok := unpackEntry(g.entry.Load()); ok && ep == id {
		g.replaceEntry(id)
	}
	start := 0
	for l := 0; l <= level; l++ {
		for _, x := range s.snap[start:s.snapN[l]] {
			g.repair(s, x, l, id)
		}
		start = s.snapN[l]
	}
	return true
}

// repair drops del from x's list on layer l and refills the list with the
// heuristic over x's other neighbours and del's neighbours.
func (g *Graph) repair(s *scratch, x uint32, l int, del uint32) {
	xch := g.chunkOf(x)
	xs := x & chunkMask
	mu := &xch.outMu[xs]
	mu.Lock()
	defer mu.Unlock()
	st := xch.state[xs].Load()
	if st&stPresent == 0 || st&stDeleted != 0 || levelOf(st) < l {
		return // deleted nodes keep stale lists; nothing reads them for long
	}
	list := g.links(xch, xs, l)
	old := loadList(s.ids[:0], list)
	s.ids = old
	if !slices.Contains(old, del) {
		return // already repaired (x appeared twice in the snapshot)
	}
	xq := g.queryOf(g.rec(xch, xs))
	c := s.cands[:0]
	consider := func(y uint32) {
		if y == x || y == del || containsItem(c, y) {
			return
		}
		ych := g.chunkOf(y)
		if ych == nil {
			return
		}
		if yst := ych.state[y&chunkMask].Load(); yst&stPresent == 0 || yst&stDeleted != 0 || levelOf(yst) < l {
			return
		}
		c = append(c, item{g.qdist(xq, g.rec(ych, y&chunkMask)), y})
	}
	for _, y := range old {
		consider(y)
	}
	dch := g.chunkOf(del)
	dl := g.links(dch, del&chunkMask, l)
	for i, n := 1, listLen(dl); i <= n; i++ {
		consider(loadAt(dl, i))
	}
	slices.SortFunc(c, cmpItem)
	s.cands = c
	sel := g.selectNeighbors(s, c, g.maxLinks(l), s.sel2[:0])
	s.sel2 = sel
	next := s.ids2[:0]
	for _, it := range sel {
		next = append(next, it.id)
	}
	s.ids2 = g.writeLinks(x, xch, xs, l, list, old, next)
}

// replaceEntry picks the live node with the highest level (lowest id among
// equals) as the new entry point, if del still is the entry point. It scans
// the state words, about 1 ms per million slots; entry-point deletes are
// rare.
func (g *Graph) replaceEntry(del uint32) {
	g.epMu.Lock()
	defer g.epMu.Unlock()
	if ep, _, ok := unpackEntry(g.entry.Load()); !ok || ep != del {
		return
	}
	best, bestID := -1, uint32(0)
	for ci, ch := range g.dir.Load().chunks {
		if ch == nil {
			continue
		}
		for slot := range uint32(chunkSize) {
			if st := ch.state[slot].Load(); isLive(st) && levelOf(st) > best {
				best, bestID = levelOf(st), uint32(ci)<<chunkShift|slot
			}
		}
	}
	if best < 0 {
		g.entry.Store(0)
		return
	}
	g.entry.Store(packEntry(bestID, best))
}
