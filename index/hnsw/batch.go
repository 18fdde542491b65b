package hnsw

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Batch insertion in waves.
//
// Inserting in parallel by letting each worker run Add's algorithm links by
// scheduling: whichever insert reaches a shared neighbour first changes what
// the next one finds, so two replicas fed the same batches end up with
// different graphs and answer one query with different blocks. AddBatch
// instead inserts a batch as a sequence of waves, each a pure function of
// the graph before it and of the wave's items:
//
//  1. The slots of the wave's ids are filled (vector, record, level).
//  2. Out-links, in parallel: every item searches the graph as it was at the
//     wave's start, which no one writes during this phase (nothing links to
//     the new nodes yet, so no search reaches them); adds the record
//     distances to the earlier items of the wave that have the layer, so
//     that wave members link to each other as sequential inserts would
//     (clustered data and duplicates need it); selects its neighbours with
//     the heuristic; and writes its own lists, and nothing else.
//  3. The wave goes live, and the entry point moves to the first item, in
//     batch order, whose level is above the top, as it would with Add.
//  4. Backlinks, in parallel but grouped by target: every (layer, target,
//     new source) triple is collected and sorted, and each target's update
//     (append the sources in batch order, or re-select with the heuristic
//     over its list and all the sources when it overflows) is done by one
//     worker, reading only that target's list and records. Targets are
//     disjoint, so the order in which the groups run does not matter.
//
// A wave of one item is exactly Add. Waves grow with the graph (prefix
// doubling, as in ParlayANN's deterministic batch insertion), so a wave is
// always a small part of what it is inserted into: see waveLen.

const (
	// waveMax caps a wave. The intra-wave distances cost about waveMax/2
	// record distances per insert (a few percent of its search), and
	// AddBatchContext checks its context between waves.
	waveMax = 256
	// waveShift: a wave holds at most live>>waveShift inserts (1/8 of the
	// graph), so nearly all of a new node's neighbourhood is searched in
	// the graph rather than found among its wave.
	waveShift = 3
)

// waveLen returns the length of the wave that starts when the graph holds
// live nodes: with s the largest power of two not above live>>waveShift
// (at least 1, at most waveMax), the wave ends at the next multiple of s.
// Wave boundaries therefore sit at fixed live counts, whatever batch the
// wave belongs to.
func waveLen(live int) int {
	s := 1
	for s < waveMax && 2*s <= live>>waveShift {
		s *= 2
	}
	return s - live%s
}

// AddBatch inserts ids[i] with vecs[i] using up to workers goroutines
// (workers <= 0 means GOMAXPROCS). Every vector is validated before anything
// is inserted, so an invalid batch changes nothing. Levels are drawn in
// batch order.
//
// The graph built is the same for every workers value, GOMAXPROCS and
// goroutine schedule: it depends only on the graph before the call and on
// the ids and vectors in batch order (see Determinism in the package
// documentation). It is not the graph that calling Add in order builds,
// except while the graph is small enough for waves of one item. If an id
// appears twice, the later vector wins, as with Add.
func (g *Graph) AddBatch(ids []uint32, vecs [][]float32, workers int) error {
	return g.AddBatchContext(context.Background(), ids, vecs, workers)
}

// AddBatchContext is AddBatch that stops between two waves (at most 256
// inserts) once ctx is done, returning ctx's error: the vectors inserted so
// far stay in the graph (the caller, giving up on the batch, discards or
// re-adds them), fully linked.
func (g *Graph) AddBatchContext(ctx context.Context, ids []uint32, vecs [][]float32, workers int) error {
	if len(ids) != len(vecs) {
		return fmt.Errorf("add batch: %d ids, %d vectors: %w", len(ids), len(vecs), ErrBatchLength)
	}
	for i, v := range vecs {
		if err := g.checkVector(v); err != nil {
			return fmt.Errorf("add batch: item %d (id %d): %w", i, ids[i], err)
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var w wave
	for start := 0; start < len(ids); {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := w.cut(ids[start:], waveLen(int(g.live.Load())))
		w.ids, w.vecs = ids[start:start+n], vecs[start:start+n]
		// Levels are drawn wave by wave, so that a cancelled batch leaves the
		// generator where AddBatch of its inserted prefix would.
		w.levels = w.levels[:0]
		g.rngMu.Lock()
		for range n {
			w.levels = append(w.levels, uint8(levelFromUniform(g.rng.Float64(), g.mult)))
		}
		g.rngMu.Unlock()
		g.addWave(&w, workers)
		start += n
	}
	return ctx.Err()
}

// wave holds one wave's items and the buffers reused from wave to wave.
type wave struct {
	ids    []uint32
	vecs   [][]float32
	levels []uint8

	fresh   []int           // positions whose slot was never used
	keys    []uint64        // backlinks: layer<<56 | target<<24 | position
	groups  []int           // starts of the (layer, target) runs in keys, and len(keys)
	seen    map[uint32]bool // ids of the wave being cut
	stripes [opStripes]bool
}

// cut returns how many of ids, at most limit, the next wave takes: it ends
// before an id that is already in it, so that an id given twice is
// replaced by its later vector in a later wave.
func (w *wave) cut(ids []uint32, limit int) int {
	n := min(limit, len(ids))
	if w.seen == nil {
		w.seen = make(map[uint32]bool, waveMax)
	}
	clear(w.seen)
	for i, id := range ids[:n] {
		if w.seen[id] {
			return i
		}
		w.seen[id] = true
	}
	return n
}

// addWave inserts the wave w holds (distinct ids).
func (g *Graph) addWave(w *wave, workers int) {
	s := g.getScratch()
	defer g.putScratch(s)

	// Serialise with Add and Delete of the same ids for the whole wave.
	// Stripes are taken in ascending order, which is what lets two batches
	// run at once; Add and Delete only ever hold one.
	clear(w.stripes[:])
	for _, id := range w.ids {
		w.stripes[opStripe(id)] = true
	}
	for i, on := range w.stripes {
		if on {
			g.opMu[i].Lock()
		}
	}
	defer func() {
		for i, on := range w.stripes {
			if on {
				g.opMu[i].Unlock()
			}
		}
	}()

	// Slots used before (a live id replaced, a deleted id re-added) are
	// unlinked and rewritten one at a time, in batch order, as Add does.
	w.fresh = w.fresh[:0]
	for i, id := range w.ids {
		ch := g.ensureChunk(id)
		slot := id & chunkMask
		st := ch.state[slot].Load()
		if st&stPresent == 0 {
			w.fresh = append(w.fresh, i)
			continue
		}
		if st&stDeleted == 0 {
			g.slotMu.RLock()
			g.deleteLocked(s, id)
			g.slotMu.RUnlock()
		}
		g.slotMu.Lock()
		g.clearStaleLinks(ch, slot, id)
		g.fillSlot(ch, slot, g.prepareQuery(s, w.vecs[i]), int(w.levels[i]))
		g.tombstones.Add(-1)
		g.slotMu.Unlock()
		markDirty(ch, slot)
	}
	g.parallel(workers, len(w.fresh), 16, func(s *scratch, k int) {
		i := w.fresh[k]
		id := w.ids[i]
		ch := g.chunkOf(id)
		g.slotMu.RLock()
		g.fillSlot(ch, id&chunkMask, g.prepareQuery(s, w.vecs[i]), int(w.levels[i]))
		g.slotMu.RUnlock()
		markDirty(ch, id&chunkMask)
	})

	// Out-links against the graph as of now.
	ep := g.entry.Load()
	checkDel := g.tombstones.Load() > 0
	g.parallel(workers, len(w.ids), 1, func(s *scratch, i int) {
		g.linkOut(s, w, i, ep, checkDel)
	})

	// The wave goes live before its backlinks exist: its lists only point
	// at live nodes (older ones, and earlier items, marked first), so every
	// state Check may see in between is consistent. A new top level makes
	// its first item the entry point, as Add would.
	g.slotMu.RLock()
	for _, id := range w.ids {
		g.chunkOf(id).state[id&chunkMask].Or(stLinked)
	}
	g.live.Add(int64(len(w.ids)))
	g.epMu.Lock()
	_, top, ok := unpackEntry(g.entry.Load())
	for i, id := range w.ids {
		if lv := int(w.levels[i]); !ok || lv > top {
			g.entry.Store(packEntry(id, lv))
			top, ok = lv, true
		}
	}
	g.epMu.Unlock()
	g.slotMu.RUnlock()

	// Backlinks, grouped by (layer, target).
	keys := w.keys[:0]
	var buf [2 * maxM]uint32
	for i, id := range w.ids {
		ch := g.chunkOf(id)
		for l := 0; l <= int(w.levels[i]); l++ {
			for _, z := range loadList(buf[:0], g.links(ch, id&chunkMask, l)) {
				keys = append(keys, uint64(l)<<56|uint64(z)<<24|uint64(i))
			}
		}
	}
	slices.Sort(keys)
	groups := w.groups[:0]
	for k, key := range keys {
		if k == 0 || key>>24 != keys[k-1]>>24 {
			groups = append(groups, k)
		}
	}
	groups = append(groups, len(keys))
	w.keys, w.groups = keys, groups
	g.parallel(workers, len(groups)-1, 8, func(s *scratch, k int) {
		g.linkBack(s, w, keys[groups[k]:groups[k+1]])
	})
}

// linkOut searches the neighbours of the wave's i-th item on every layer it
// has, in the graph as of the wave's start (entry ep) plus the earlier items
// of the wave, and writes the item's own lists. It writes nothing else.
func (g *Graph) linkOut(s *scratch, w *wave, i int, ep uint64, checkDel bool) {
	id := w.ids[i]
	ch := g.chunkOf(id)
	slot := id & chunkMask
	level := int(w.levels[i])
	g.slotMu.RLock()
	defer g.slotMu.RUnlock()
	d := g.dir.Load()
	q := g.queryOf(g.rec(ch, slot))
	epID, epLevel, hasEntry := unpackEntry(ep)
	s.seeds = s.seeds[:0]
	if hasEntry {
		cur, curD := g.descend(s, d, q, epID, epLevel, level)
		s.seeds = append(s.seeds, item{curD, cur})
	}
	for l := level; l >= 0; l-- {
		s.w = s.w[:0]
		if hasEntry && l <= epLevel {
			s.beginLayer(d)
			s.vis.insert(id) // never select ourselves
			for _, it := range s.seeds {
				g.seed(s, d, it, checkDel, nil)
			}
			g.searchLayer(s, d, q, g.opts.EfConstruction, l, checkDel, nil)
			s.w = s.res.drainSorted(s.w[:0])
			if len(s.w) > 0 {
				s.seeds = append(s.seeds[:0], s.w...)
			}
		}
		cands := g.withWave(s, w, i, l, q, s.w)
		if len(cands) == 0 {
			continue
		}
		s.sel = g.selectNeighbors(s, cands, g.m, s.sel[:0])
		next := s.ids2[:0]
		for _, it := range s.sel {
			next = append(next, it.id)
		}
		// Under outMu like every list write: a concurrent Delete of a new
		// neighbour can start as soon as writeLinks records the link, and
		// its repair of this list must wait for the list to be stored.
		mu := &ch.outMu[slot]
		mu.Lock()
		s.ids2 = g.writeLinks(id, ch, slot, l, g.links(ch, slot, l), nil, next)
		mu.Unlock()
	}
}

// withWave returns found (ascending) merged with the items before i in the
// wave that have layer l, at their record distance from q, keeping the
// EfConstruction closest, ascending. Without such items it returns found.
func (g *Graph) withWave(s *scratch, w *wave, i, l int, q qquery, found []item) []item {
	ef := g.opts.EfConstruction
	// When found is full, an item that is not closer than its last one
	// would be cut from the merge anyway: drop it before sorting.
	bound := item{posInf, ^uint32(0)}
	if len(found) >= ef {
		bound = found[ef-1]
	}
	ext := s.ext[:0]
	ids, ptrs := s.nbIDs[:0], s.nbPtrs[:0]
	flush := func() {
		prefetchAll(ptrs, g.rstride)
		out := s.nbDist[:len(ptrs)]
		g.score(q, ptrs, out, negInf)
		for j, y := range ids {
			if it := (item{out[j], y}); it.less(bound) {
				ext = append(ext, it)
			}
		}
		ids, ptrs = ids[:0], ptrs[:0]
	}
	for j, y := range w.ids[:i] {
		if int(w.levels[j]) < l {
			continue
		}
		ids = append(ids, y)
		ptrs = append(ptrs, g.rec(g.chunkOf(y), y&chunkMask))
		if len(ptrs) == len(s.nbDist) {
			flush()
		}
	}
	if len(ptrs) > 0 {
		flush()
	}
	s.nbIDs, s.nbPtrs = ids, ptrs
	s.ext = ext
	if len(ext) == 0 {
		return found
	}
	slices.SortFunc(ext, cmpItem)
	c := s.cands[:0]
	a, b := 0, 0
	for len(c) < ef && (a < len(found) || b < len(ext)) {
		if b == len(ext) || (a < len(found) && found[a].less(ext[b])) {
			c = append(c, found[a])
			a++
		} else {
			c = append(c, ext[b])
			b++
		}
	}
	s.cands = c
	return c
}

// linkBack adds the wave's new nodes to one target's list: keys is the run
// of backlink keys of one (layer, target), sources in batch order. The
// sources are appended while the list has room; otherwise the list is
// re-selected with the heuristic over its neighbours and all the sources at
// once. With a single source this is Add's backlink.
func (g *Graph) linkBack(s *scratch, w *wave, keys []uint64) {
	l := int(keys[0] >> 56)
	z := uint32(keys[0] >> 24)
	zch := g.chunkOf(z)
	zs := z & chunkMask
	g.slotMu.RLock()
	defer g.slotMu.RUnlock()
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
	next := append(s.back[:0], cur...)
	for _, k := range keys {
		if src := w.ids[k&(1<<24-1)]; !slices.Contains(cur, src) {
			next = append(next, src)
		}
	}
	s.back = next
	if len(next) == len(cur) {
		return
	}
	if len(next) <= g.maxLinks(l) {
		// Append, publishing the new count last (as Add's backlink does).
		n := len(cur)
		for _, src := range next[len(cur):] {
			if g.inAdd(src, z, l) {
				atomic.StoreUint32(&list[n+1], src)
				n++
			}
		}
		atomic.StoreUint32(&list[0], uint32(n))
		markDirty(zch, zs)
		return
	}
	// Full: re-select over z's neighbours and the sources, scored from z
	// in batches.
	zq := g.queryOf(g.rec(zch, zs))
	c := s.cands[:0]
	ids, ptrs := s.nbIDs[:0], s.nbPtrs[:0]
	flush := func() {
		prefetchAll(ptrs, g.rstride)
		out := s.nbDist[:len(ptrs)]
		g.score(zq, ptrs, out, negInf)
		for j, y := range ids {
			c = append(c, item{out[j], y})
		}
		ids, ptrs = ids[:0], ptrs[:0]
	}
	for _, y := range next {
		if ych := g.chunkOf(y); ych != nil {
			ids = append(ids, y)
			ptrs = append(ptrs, g.rec(ych, y&chunkMask))
			if len(ptrs) == len(s.nbDist) {
				flush()
			}
		}
	}
	if len(ptrs) > 0 {
		flush()
	}
	s.nbIDs, s.nbPtrs = ids, ptrs
	slices.SortFunc(c, cmpItem)
	s.cands = c
	sel := g.selectNeighbors(s, c, g.maxLinks(l), s.sel2[:0])
	s.sel2 = sel
	next = next[:0]
	for _, it := range sel {
		next = append(next, it.id)
	}
	s.back = g.writeLinks(z, zch, zs, l, list, cur, next)
}

// parallel calls f(s, i) for every i in [0, n) on up to workers goroutines,
// the calling one included, each with its own scratch, handing out indices
// in chunks; it returns when every call has. Which goroutine runs which
// index is up to the scheduler, so f must give the same result wherever it
// runs.
func (g *Graph) parallel(workers, n, chunk int, f func(s *scratch, i int)) {
	if n == 0 {
		return
	}
	workers = min(workers, (n+chunk-1)/chunk)
	var next atomic.Int64
	run := func() {
		s := g.getScratch()
		defer g.putScratch(s)
		for {
			lo := int(next.Add(int64(chunk))) - chunk
			if lo >= n {
				return
			}
			for i := lo; i < min(lo+chunk, n); i++ {
				f(s, i)
			}
		}
	}
	if workers <= 1 {
		run()
		return
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(run)
	}
	run()
	wg.Wait()
}
