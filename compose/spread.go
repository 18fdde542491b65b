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

// spread applies the seeds' budget sharing to sc.cands (see
// maxSpreadRate): each candidate's importance is divided by
// spreadFactorOf(rate, its rank among its seed's candidates), and the
// rank is kept in the entry for explain. Ranks order by importance, then hop,
// then edge id, so the result is deterministic. Only a seed's spreadTop
// best are ranked one by one (no block holds more lines of one seed);
// the rest share rank spreadTop.
func spread(sc *graphScratch, rate float64) {
	if rate <= 0 || len(sc.cands) == 0 {
		return
	}
	cs := sc.cands
	// Group the candidates by seed (seeds are few: a linear lookup), as
	// sort keys: importance, hop and edge copied out of the candidates, so
	// the sort compares small contiguous records.
	groups := len(sc.tseeds) + 1
	sc.starts = append(sc.starts[:0], make([]int32, groups+1)...)
	sc.group = slices.Grow(sc.group[:0], len(cs))[:len(cs)]
	last, lastG := ^uint32(0), 0 // a walk lists a seed's candidates in runs
	for i := range cs {
		seed := sc.walk[cs[i].idx].Seed
		if seed != last {
			last, lastG = seed, len(sc.tseeds)
			for j, s := range sc.tseeds {
				if s.Node == seed {
					lastG = j
					break
				}
			}
		}
		sc.group[i] = uint8(min(lastG, 255))
		sc.starts[lastG+1]++
	}
	for g := 1; g <= groups; g++ {
		sc.starts[g] += sc.starts[g-1]
	}
	sc.keys = slices.Grow(sc.keys[:0], len(cs))[:len(cs)]
	fill := append(sc.fill[:0], sc.starts[:groups]...)
	for i := range cs {
		g := sc.group[i]
		sc.keys[fill[g]] = spreadKey{imp: cs[i].imp, hop: cs[i].hop, edge: cs[i].edge, idx: int32(i)}
		fill[g]++
	}
	sc.fill = fill
	for g := range groups {
		grp := sc.keys[sc.starts[g]:sc.starts[g+1]]
		sortTop(grp, spreadTop)
		for k, key := range grp {
			rank := min(k, spreadTop)
			c := &cs[key.idx]
			c.imp /= spreadFactorOf(rate, rank)
			c.spread = uint16(rank)
		}
	}
}

// spreadKey is a candidate's order in the spread (traverse.Less's:
// importance, then hop, then edge) and its index.
type spreadKey struct {
	imp  float64
	edge uint32
	idx  int32
	hop  uint8
}

func compareSpreadKeys(a, b spreadKey) int {
	return traverse.Order(a.imp, b.imp, a.hop, b.hop, a.edge, b.edge)
}

// lessKey is compareSpreadKeys(*a, *b) < 0, small enough to inline: the
// spread's sorts compare tens of thousands of keys a block.
func lessKey(a, b *spreadKey) bool {
	if a.imp != b.imp {
		return a.imp > b.imp
	}
	if a.hop != b.hop {
		return a.hop < b.hop
	}
	return a.edge < b.edge
}

// spreadTop is how many of a seed's candidates the spread ranks one by
// one.
const spreadTop = 256

// spreadFactorOf divides the importance of a seed's line when the block
// already holds k lines of that seed.
func spreadFactorOf(rate float64, k int) float64 { return 1 + rate*float64(k) }

// sortTop orders ks so that its first n keys are its n least
// (compareSpreadKeys) in order; the rest follow in no given order. The
// spread ranks only a seed's spreadTop best one by one, so a seed with
// thousands of candidates needs them selected, not sorted: a quickselect
// (median of three; past 2 log2 len rounds, a full sort) moves the n
// least to the front, then only those are sorted. Keys are distinct (the
// edge ids are), so the result is the full sort's first n whatever the
// pivots.
func sortTop(ks []spreadKey, n int) {
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

// sortKeys sorts ks by lessKey: a quicksort on partitionKeys with an
// insertion sort for short runs, and past 2 log2 len levels of partitions
// that split badly, the standard library's sort.
func sortKeys(ks []spreadKey) {
	for budget := 2 * bits.Len(uint(len(ks))); len(ks) > 12; budget-- {
		if budget == 0 {
			slices.SortFunc(ks, compareSpreadKeys)
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
		for j := i; j > 0 && lessKey(&ks[j], &ks[j-1]); j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
}

// partitionKeys partitions ks (at least three keys) around a
// median-of-three pivot and returns the pivot's index: the keys before it
// are less, after it greater.
func partitionKeys(ks []spreadKey) int {
	last := len(ks) - 1
	mid := last / 2
	if lessKey(&ks[mid], &ks[0]) {
		ks[mid], ks[0] = ks[0], ks[mid]
	}
	if lessKey(&ks[last], &ks[0]) {
		ks[last], ks[0] = ks[0], ks[last]
	}
	if lessKey(&ks[last], &ks[mid]) {
		ks[last], ks[mid] = ks[mid], ks[last]
	}
	ks[mid], ks[last] = ks[last], ks[mid] // the median to the end
	pivot, i := ks[last], 0
	for j := range last {
		if lessKey(&ks[j], &pivot) {
			ks[i], ks[j] = ks[j], ks[i]
			i++
		}
	}
	ks[i], ks[last] = ks[last], ks[i]
	return i
}
