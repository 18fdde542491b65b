package fuse

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// DefaultK is the RRF constant used when k <= 0. 60 is the value from
// Cormack et al. (2009) and the common default: it damps the difference
// between rank 1 and rank 2 so that one retriever's top hit cannot dominate
// an item ranked well by all of them.
const DefaultK = 60

// Ranked is one result: a node ID and its score. Input lists are ordered
// best first; their Score is ignored by RRF.
type Ranked struct {
	ID    uint32
	Score float64
}

// maxPooledEntries bounds the scratch kept in the pool: a rare huge fusion
// should not pin its memory for the process lifetime.
const maxPooledEntries = 1 << 16

// entry accumulates one ID's fused score.
type entry struct {
	id   uint32
	list int32  // last list that contributed, for per-list dedup
	sum  uint64 // fixed-point sum of 1/(k+rank)
}

// scratch is a reusable open-addressing table: slots holds index+1 into
// ents (0 = empty), ents holds the distinct IDs in first-seen order.
type scratch struct {
	slots []int32
	ents  []entry
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// RRF fuses ranked lists (each best first) with constant k (DefaultK when k
// <= 0 or not finite): score(id) = sum over lists of 1/(k + rank), rank
// starting at 1 and being the position in the list. An ID repeated within
// one list counts once, at its first (best) rank; positions after a
// duplicate are not shifted.
//
// It returns the top n by fused score descending, ties broken by ID
// ascending; n <= 0 or n larger than the number of distinct IDs returns them
// all. The result is appended into dst[:0].
func RRF(dst []Ranked, k float64, n int, lists ...[]Ranked) []Ranked {
	dst = dst[:0]
	if !(k > 0) || math.IsInf(k, 0) {
		k = DefaultK
	}
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	if total == 0 {
		return dst
	}

	// Fixed point with shift = 62 - bitlen(len(lists)): every contribution
	// is < 1 (k > 0, rank >= 1), so the sum over L lists is < L <=
	// 2^bitlen and the scaled sum stays below 2^62. Integer addition is
	// associative, so equal rank multisets give identical sums whatever the
	// list order; float addition would not guarantee that.
	shift := 62 - bits.Len(uint(len(lists)))
	scale := math.Ldexp(1, shift)

	s := scratchPool.Get().(*scratch)
	size := 1 << bits.Len(uint(2*total-1)) // power of two >= 2*total: load <= 1/2
	if cap(s.slots) < size {
		s.slots = make([]int32, size)
	} else {
		s.slots = s.slots[:size]
		clear(s.slots)
	}
	s.ents = s.ents[:0]
	mask := uint32(size - 1)
	hshift := 32 - uint(bits.Len(uint(size-1))) // keep the top bits of a Fibonacci hash

	for li, l := range lists {
		for pos, r := range l {
			c := uint64(scale / (k + float64(pos+1)))
			// Fibonacci hashing spreads sequential IDs (the common case:
			// dense node numbering) across the table.
			i := (r.ID * 0x9e3779b1) >> hshift & mask
			for {
				slot := s.slots[i]
				if slot == 0 {
					s.ents = append(s.ents, entry{id: r.ID, list: int32(li), sum: c})
					s.slots[i] = int32(len(s.ents))
					break
				}
				e := &s.ents[slot-1]
				if e.id == r.ID {
					if e.list != int32(li) {
						e.list, e.sum = int32(li), e.sum+c
					}
					break
				}
				i = (i + 1) & mask
			}
		}
	}

	m := len(s.ents)
	if n <= 0 || n > m {
		n = m
	}
	if n < m/2 {
		// Typical use asks for the top tens out of hundreds: selecting
		// first and sorting only the winners is cheaper than sorting
		// everything.
		selectTop(s.ents, n)
		slices.SortFunc(s.ents[:n], compareEntries)
	} else {
		slices.SortFunc(s.ents, compareEntries)
	}
	dst = slices.Grow(dst, n)
	inv := 1 / scale // exact: a power of two
	for _, e := range s.ents[:n] {
		dst = append(dst, Ranked{ID: e.id, Score: float64(e.sum) * inv})
	}

	if cap(s.ents) <= maxPooledEntries && cap(s.slots) <= 2*maxPooledEntries {
		scratchPool.Put(s)
	}
	return dst
}

// compareEntries orders by fused score descending, then ID ascending. IDs
// are unique in the table, so this is a strict total order.
func compareEntries(a, b entry) int {
	if a.sum != b.sum {
		return cmp.Compare(b.sum, a.sum)
	}
	return cmp.Compare(a.id, b.id)
}

// better reports whether a ranks before b.
func better(a, b *entry) bool {
	return a.sum > b.sum || (a.sum == b.sum && a.id < b.id)
}

// selectTop moves the n best entries into e[:n], in no particular order
// (quickselect with a median-of-three pivot). The caller sorts e[:n], so
// pivot choices never affect the result.
func selectTop(e []entry, n int) {
	lo, hi := 0, len(e)
	for hi-lo > 12 {
		// Median of three to the end as pivot: robust on the already
		// sorted runs that concatenated rank lists tend to produce.
		mid := lo + (hi-lo)/2
		a, b, c := &e[lo], &e[mid], &e[hi-1]
		if better(b, a) {
			*a, *b = *b, *a
		}
		if better(c, b) {
			*b, *c = *c, *b
			if better(b, a) {
				*a, *b = *b, *a
			}
		}
		e[mid], e[hi-1] = e[hi-1], e[mid]
		pivot := e[hi-1]
		p := lo
		for i := lo; i < hi-1; i++ {
			if better(&e[i], &pivot) {
				e[i], e[p] = e[p], e[i]
				p++
			}
		}
		e[p], e[hi-1] = e[hi-1], e[p]
		// e[lo:p] beat the pivot, e[p] is in its final place.
		switch {
		case p == n || p == n-1:
			return
		case p > n:
			hi = p
		default:
			lo = p + 1
		}
	}
	slices.SortFunc(e[lo:hi], compareEntries)
}

// Normalize divides every score by the largest, in place, so the best
// result scores exactly 1.0 (x/x is exact in IEEE arithmetic) and, for
// positive scores such as RRF's, all lie in (0, 1]. It leaves r unchanged
// when it is empty or the largest score is not positive and finite, since
// no meaningful scale exists then.
func Normalize(r []Ranked) {
	if len(r) == 0 {
		return
	}
	hi := r[0].Score
	for _, x := range r[1:] {
		if x.Score > hi {
			hi = x.Score
		}
	}
	if !(hi > 0) || math.IsInf(hi, 0) {
		return
	}
	for i := range r {
		r[i].Score /= hi
	}
}
