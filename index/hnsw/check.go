package hnsw

import (
	"fmt"
	"slices"
)

// Check verifies the structural invariants and returns an error wrapping
// ErrInvariant for the first violation:
//
//   - every neighbour of a live node exists, is live, has the layer, is not
//     the node itself and appears once; list lengths are within capacity
//     (2*M on layer 0, M above);
//   - the reverse index is exact for live nodes: y.in[l] lists x once iff
//     live x links to y on layer l;
//   - per-slot storage matches the level (upper lists, in-lists);
//   - the entry point is live and has the highest level of all live nodes;
//     there is none iff no node is live;
//   - the live and tombstone counters match the slots.
//
// Check excludes every other operation while it runs (it takes the write
// side of the slot lock), so it sees a quiescent graph. It is O(n*M) and
// meant for tests and debugging.
func (g *Graph) Check() error {
	g.slotMu.Lock()
	defer g.slotMu.Unlock()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("check: "+format+": %w", append(args, ErrInvariant)...)
	}
	d := g.dir.Load()
	var live, tomb int64
	top := -1
	var buf [2 * maxM]uint32
	for ci, ch := range d.chunks {
		if ch == nil {
			continue
		}
		for slot := range uint32(chunkSize) {
			st := ch.state[slot].Load()
			if st&stPresent == 0 {
				continue
			}
			id := uint32(ci)<<chunkShift | slot
			lv := levelOf(st)
			switch {
			case lv > maxLevel:
				return fail("node %d: level %d", id, lv)
			case len(ch.in[slot]) != lv+1:
				return fail("node %d: %d in-lists for level %d", id, len(ch.in[slot]), lv)
			case lv > 0 && len(ch.upper[slot]) != lv*g.strideU:
				return fail("node %d: upper storage %d for level %d", id, len(ch.upper[slot]), lv)
			}
			if st&stDeleted != 0 {
				tomb++
				continue
			}
			if st&stLinked == 0 {
				continue // an Add between its exclusive and linking phases
			}
			live++
			top = max(top, lv)
			for l := 0; l <= lv; l++ {
				list := g.links(ch, slot, l)
				if n := int(list[0]); n > g.maxLinks(l) {
					return fail("node %d layer %d: %d neighbours, capacity %d", id, l, n, g.maxLinks(l))
				}
				ids := loadList(buf[:0], list)
				for i, y := range ids {
					if y == id {
						return fail("node %d layer %d: self-link", id, l)
					}
					if slices.Contains(ids[:i], y) {
						return fail("node %d layer %d: duplicate neighbour %d", id, l, y)
					}
					ych := d.chunkOf(y)
					if ych == nil {
						return fail("node %d layer %d: neighbour %d does not exist", id, l, y)
					}
					yst := ych.state[y&chunkMask].Load()
					switch {
					case !isLive(yst):
						return fail("node %d layer %d: neighbour %d not live (state %#x)", id, l, y, yst)
					case levelOf(yst) < l:
						return fail("node %d layer %d: neighbour %d has level %d", id, l, y, levelOf(yst))
					}
					if n := count(ych.in[y&chunkMask][l], id); n != 1 {
						return fail("node %d layer %d: listed %d times in the in-list of %d", id, l, n, y)
					}
				}
			}
		}
	}
	// Reverse direction: every live entry of an in-list is a real link.
	for ci, ch := range d.chunks {
		if ch == nil {
			continue
		}
		for slot := range uint32(chunkSize) {
			st := ch.state[slot].Load()
			if st&stPresent == 0 {
				continue
			}
			y := uint32(ci)<<chunkShift | slot
			for l, in := range ch.in[slot] {
				for _, x := range in {
					xch := d.chunkOf(x)
					if xch == nil || xch.state[x&chunkMask].Load()&stPresent == 0 {
						return fail("in-list of %d layer %d: %d does not exist", y, l, x)
					}
					xst := xch.state[x&chunkMask].Load()
					if !isLive(xst) {
						continue // stale lists of deleted nodes are not indexed exactly
					}
					if levelOf(xst) < l || !slices.Contains(loadList(buf[:0], g.links(xch, x&chunkMask, l)), y) {
						return fail("in-list of %d layer %d: %d does not link to it", y, l, x)
					}
				}
			}
		}
	}

	epID, epLevel, ok := unpackEntry(g.entry.Load())
	switch {
	case live == 0 && ok:
		return fail("entry point %d set in a graph without live nodes", epID)
	case live > 0 && !ok:
		return fail("no entry point with %d live nodes", live)
	case live > 0 && !g.Contains(epID):
		return fail("entry point %d not live", epID)
	case live > 0 && levelOf(d.chunkOf(epID).state[epID&chunkMask].Load()) != epLevel:
		return fail("entry point %d: recorded level %d differs from its level", epID, epLevel)
	case live > 0 && epLevel != top:
		return fail("entry point level %d below the top level %d", epLevel, top)
	case live != g.live.Load():
		return fail("%d live nodes, counter says %d", live, g.live.Load())
	case tomb != g.tombstones.Load():
		return fail("%d tombstones, counter says %d", tomb, g.tombstones.Load())
	}
	return nil
}

func count(s []uint32, x uint32) int {
	n := 0
	for _, v := range s {
		if v == x {
			n++
		}
	}
	return n
}
