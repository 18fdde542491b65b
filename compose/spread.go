package compose

import (
	"math/bits"
	"slices"

	"github.com/kgctx/kgctx/traverse"
)

// maxSpreadRate shares a block's budget among seeds: a seed's k-th best
// candidate counts 1/(1 + rate × (k-1)), with rate = maxSpreadRate ×
// (second best seed score / best seed score). When one seed stands out (a
// name the query spells out), its neighbourhood keeps the block; when
// several match about as well, each gets its best lines in, instead of
// the first filling the block with its weaker ones.
const maxSpreadRate = 0.15

// spreadRate is the request's rate (see maxSpreadRate).
func spreadRate(seeds []traverse.Seed) float64 {
	if len(seeds) < 2 || !(seeds[0].Score > 0) {
		return 0
	}
	return maxSpreadRate * min(seeds[1].Score/seeds[0].Score, 1)
}

// spreadEntries makes the render entries of sc.walk in sc.cands with the
// seeds' budget sharing applied at rate (see maxSpreadRate): each
// candidate's importance is divided by spreadFactorOf(rate, its rank
// among its seed's candidates), and the rank is kept in the entry for
// explain. Ranks order by importance, then hop, then edge id, so the
// result is deterministic. Only a seed's spreadTop best are ranked one by
// one (no block holds more lines of one seed); the rest share rank
// spreadTop.
//
// The entries are written grouped by seed (a counting sort on the seed)
// and each group is ranked in place: the render heapifies them, so their
// order in sc.cands is free (edge ids are distinct, so the order they pop
// in does not depend on it).
func spreadEntries(sc *graphScratch, rate float64) {
	ws := sc.walk
	if rate <= 0 || len(ws) == 0 {
		sc.cands = entries(sc.cands, ws)
		return
	}
	// Seeds are few (at most MaxTopK): a linear lookup, once per run of
	// one seed's candidates (the walk lists them in runs).
	groups := len(sc.tseeds) + 1
	sc.starts = append(sc.starts[:0], make([]int32, groups+1)...)
	sc.group = slices.Grow(sc.group[:0], len(ws))[:len(ws)]
	last, lastG := ^uint32(0), 0
	for i := range ws {
		if seed := ws[i].Seed; seed != last {
			last, lastG = seed, len(sc.tseeds)
			for j, s := range sc.tseeds {
				if s.Node == seed {
					lastG = j
					break
				}
			}
		}
		sc.group[i] = uint8(lastG)
		sc.starts[lastG+1]++
	}
	for g := 1; g <= groups; g++ {
		sc.starts[g] += sc.starts[g-1]
	}
	cs := slices.Grow(sc.cands[:0], len(ws))[:len(ws)]
	fill := append(sc.fill[:0], sc.starts[:groups]...)
	for i := range ws {
		c, g := &ws[i], sc.group[i]
		cs[fill[g]] = entry{imp: c.Importance, edge: c.Edge, idx: int32(i), entryFlags: entryFlags{hop: c.Hop}}
		fill[g]++
	}
	sc.cands, sc.fill = cs, fill
	for g := range groups {
		grp := cs[sc.starts[g]:sc.starts[g+1]]
		sortTop(grp, spreadTop)
		for k := range grp {
			rank := min(k, spreadTop)
			grp[k].imp /= spreadFactorOf(rate, rank)
			grp[k].spread = uint16(rank)
		}
	}
}

// compareEntries is traverse.Less's order on entries as a comparison.
func compareEntries(a, b entry) int {
	return traverse.Order(a.imp, b.imp, a.hop, b.hop, a.edge, b.edge)
}

// spreadTop is how many of a seed's candidates the spread ranks one by
// one.
const spreadTop = 256

// spreadFactorOf divides the importance of a seed's line when the block
// already holds k lines of that seed.
func spreadFactorOf(rate float64, k int) float64 { return 1 + rate*float64(k) }

// sortTop orders ks so that its first n keys are its n least
// (compareEntries) in order; the rest follow in no given order. The
// spread ranks only a seed's spreadTop best one by one, so a seed with
// thousands of candidates needs them selected, not sorted: a quickselect
// (median of three; past 2 log2 len rounds, a full sort) moves the n
// least to the front, then only those are sorted. Keys are distinct (the
// edge ids are), so the result is the full sort's first n whatever the
// pivots.
func sortTop(ks []entry, n int) {
	if len(ks) <= n {
		sortKeys(ks)
		return
	}
	lo, hi := 0, len(ks) // the n-th least lies in ks[lo:hi]
	for budget := 2 * bits.Len(uint(len(ks))); hi-lo > 16 && budget > 0; budget-- {
		p := partitionKeys(ks[lo:hi]) + lo
		switch {
		case p == n:
			lo = hi
		case p < n:
			lo = p + 1
		default:
			hi = p
		}
	}
	if lo < hi {
		sortKeys(ks[lo:hi])
	}
	sortKeys(ks[:n])
}

// sortKeys sorts ks by lessEntry: a quicksort on partitionKeys with an
// insertion sort for short runs, and past 2 log2 len levels of partitions
// that split badly, the standard library's sort.
func sortKeys(ks []entry) {
	for budget := 2 * bits.Len(uint(len(ks))); len(ks) > 12; budget-- {
		if budget == 0 {
			slices.SortFunc(ks, compareEntries)
			return
		}
		p := partitionKeys(ks)
		if p < len(ks)-1-p { // recurse into the shorter side
			sortKeys(ks[:p])
			ks = ks[p+1:]
		} else {
			sortKeys(ks[p+1:])
			ks = ks[:p]
		}
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && lessEntry(&ks[j], &ks[j-1]); j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
}

// partitionKeys partitions ks (at least three keys) around a
// median-of-three pivot and returns the pivot's index: the keys before it
// are less, after it greater.
func partitionKeys(ks []entry) int {
	last := len(ks) - 1
	mid := last / 2
	if lessEntry(&ks[mid], &ks[0]) {
		ks[mid], ks[0] = ks[0], ks[mid]
	}
	if lessEntry(&ks[last], &ks[0]) {
		ks[last], ks[0] = ks[0], ks[last]
	}
	if lessEntry(&ks[last], &ks[mid]) {
		ks[last], ks[mid] = ks[mid], ks[last]
	}
	ks[mid], ks[last] = ks[last], ks[mid] // the median to the end
	pivot, i := ks[last], 0
	for j := range last {
		if lessEntry(&ks[j], &pivot) {
			ks[i], ks[j] = ks[j], ks[i]
			i++
		}
	}
	ks[i], ks[last] = ks[last], ks[i]
	return i
}
