package traverse

// Less orders candidates: higher importance first, then fewer hops (a
// path's first edge before the later ones it lends its score to), then
// lower edge id.
func Less(a, b *Candidate) bool {
	return Order(a.Importance, b.Importance, a.Hop, b.Hop, a.Edge, b.Edge) < 0
}

// Order compares two lines by Less's order given their importance, hop
// and edge: negative when a comes first, 0 when equal. Compose orders its
// own records of candidates by it.
func Order(aImp, bImp float64, aHop, bHop uint8, aEdge, bEdge uint32) int {
	switch {
	case aImp != bImp:
		if aImp > bImp {
			return -1
		}
		return 1
	case aHop != bHop:
		return int(aHop) - int(bHop)
	case aEdge < bEdge:
		return -1
	case aEdge > bEdge:
		return 1
	}
	return 0
}

// Ranker yields items best first without sorting them all: a binary heap
// built in linear time, popped lazily, so a block that fills its budget
// after 40 triplets pays for 40 pops, not for sorting thousands. It
// reorders the slice it is given. T is a Candidate (NewRanker) or a
// caller's record of one, ordered by the caller's less (RankerOf): the
// composer ranks its render entries so.
type Ranker[T any] struct {
	h    []T
	less func(a, b *T) bool
}

// NewRanker heapifies cands in place, in Less's order.
func NewRanker(cands []Candidate) Ranker[Candidate] { return RankerOf(cands, Less) }

// RankerOf heapifies items in place in less's order (less(a, b): a comes
// first).
func RankerOf[T any](items []T, less func(a, b *T) bool) Ranker[T] {
	r := Ranker[T]{h: items, less: less}
	for i := len(items)/2 - 1; i >= 0; i-- {
		r.down(i)
	}
	return r
}

// Len is the number of items not yet popped.
func (r *Ranker[T]) Len() int { return len(r.h) }

// Next pops the best remaining item.
func (r *Ranker[T]) Next() (T, bool) {
	if len(r.h) == 0 {
		var zero T
		return zero, false
	}
	top := r.h[0]
	last := len(r.h) - 1
	r.h[0] = r.h[last]
	r.h = r.h[:last]
	if last > 0 {
		r.down(0)
	}
	return top, true
}

func (r *Ranker[T]) down(i int) {
	h := r.h
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		best := l
		if rr := l + 1; rr < n && r.less(&h[rr], &h[l]) {
			best = rr
		}
		if !r.less(&h[best], &h[i]) {
			return
		}
		h[i], h[best] = h[best], h[i]
		i = best
	}
}

// Push adds x (an item popped earlier, typically with a lowered
// importance) back into the ranker.
func (r *Ranker[T]) Push(x T) {
	r.h = append(r.h, x)
	i := len(r.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !r.less(&r.h[i], &r.h[p]) {
			return
		}
		r.h[i], r.h[p] = r.h[p], r.h[i]
		i = p
	}
}

// Rest returns the items not yet popped, in no particular order, and
// empties the ranker. The slice aliases the ranker's.
func (r *Ranker[T]) Rest() []T {
	rest := r.h
	r.h = r.h[:0]
	return rest
}
