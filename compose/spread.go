package compose

import (
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
	for i := range cs {
		g := len(sc.tseeds)
		for j, s := range sc.tseeds {
			if s.Node == sc.walk[cs[i].idx].Seed {
				g = j
				break
			}
		}
		sc.group[i] = uint8(min(g, 255))
		sc.starts[g+1]++
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
		slices.SortFunc(grp, compareSpreadKeys)
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

// spreadTop is how many of a seed's candidates the spread ranks one by
// one.
const spreadTop = 256

// spreadFactorOf divides the importance of a seed's line when the block
// already holds k lines of that seed.
func spreadFactorOf(rate float64, k int) float64 { return 1 + rate*float64(k) }
