package traverse

import "math/bits"

// nodeSet maps the nodes one walk has entered to their state (the round
// a path last ended at the node, its best seed score at depth 0): open
// addressing with linear probing, at most half full, cleared by epoch.
// A walk enters at most Options.MaxVisited nodes (depth 0: its seeds), so
// the table stays in cache where a slot per node of a million-node graph
// would not (nor take 16 bytes a node per pooled scratch).
type nodeSet struct {
	keys  []uint32
	round []uint32
	reach []float64
	stamp []uint32
	epoch uint32
	shift uint8 // 32 - log2(len(keys))
	n     int
}

// minNodeSet is the smallest table (entries).
const minNodeSet = 1024

// reset empties the set.
func (t *nodeSet) reset() {
	if len(t.keys) == 0 {
		t.alloc(minNodeSet)
	}
	t.epoch++
	if t.epoch == 0 { // wrapped: stale stamps could collide
		clear(t.stamp)
		t.epoch = 1
	}
	t.n = 0
}

func (t *nodeSet) alloc(size int) {
	t.keys, t.round, t.reach, t.stamp = make([]uint32, size), make([]uint32, size), make([]float64, size), make([]uint32, size)
	t.shift = uint8(32 - bits.TrailingZeros(uint(size)))
	t.epoch = 1
}

func (t *nodeSet) hash(k uint32) uint32 { return (k * 0x9E3779B1) >> t.shift }

// find returns n's entry, or -1 when n is not in the set.
func (t *nodeSet) find(n uint32) int {
	mask := uint32(len(t.keys) - 1)
	for h := t.hash(n); t.stamp[h] == t.epoch; h = (h + 1) & mask {
		if t.keys[h] == n {
			return int(h)
		}
	}
	return -1
}

// add enters n, which must not be in the set, with round and reach 0 and
// returns its entry. Entries found before an add may move.
func (t *nodeSet) add(n uint32) int {
	if 2*(t.n+1) > len(t.keys) {
		t.grow()
	}
	mask := uint32(len(t.keys) - 1)
	h := t.hash(n)
	for t.stamp[h] == t.epoch {
		h = (h + 1) & mask
	}
	t.stamp[h], t.keys[h], t.round[h], t.reach[h] = t.epoch, n, 0, 0
	t.n++
	return int(h)
}

func (t *nodeSet) grow() {
	old := *t
	t.alloc(2 * len(old.keys))
	t.n = 0
	for i, s := range old.stamp {
		if s == old.epoch {
			j := t.add(old.keys[i])
			t.round[j], t.reach[j] = old.round[i], old.reach[i]
		}
	}
}

// count is the number of nodes in the set.
func (t *nodeSet) count() int { return t.n }
