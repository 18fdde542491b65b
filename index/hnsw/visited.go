package hnsw

// visitedSet is the set of ids one layer search has seen: a bitset over the
// id space (128 KiB per million ids, so it stays in L2 where hnswlib's
// 16-bit-per-id visited list needs a cache miss per check at that size).
// Starting a new search clears only the words the previous one set.
type visitedSet struct {
	bits    []uint64
	touched []uint32 // words made non-zero since the last reset
}

// reset empties the set and sizes it for ids below capacity. Ids at or above
// the capacity of the last reset count as visited: they were inserted after
// the search took its directory snapshot, and are skipped.
func (v *visitedSet) reset(capacity int) {
	need := (capacity + 63) / 64
	if len(v.bits) < need {
		v.bits = make([]uint64, need+need/4)
		v.touched = v.touched[:0]
		return
	}
	if len(v.touched) > len(v.bits)/16 {
		clear(v.bits)
	} else {
		for _, w := range v.touched {
			v.bits[w] = 0
		}
	}
	v.touched = v.touched[:0]
}

// insert adds id and reports whether it was absent (and within capacity).
func (v *visitedSet) insert(id uint32) bool {
	w := id >> 6
	if int(w) >= len(v.bits) {
		return false
	}
	b := uint64(1) << (id & 63)
	x := v.bits[w]
	if x&b != 0 {
		return false
	}
	if x == 0 {
		v.touched = append(v.touched, w)
	}
	v.bits[w] = x | b
	return true
}
