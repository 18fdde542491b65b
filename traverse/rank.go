package traverse

// Less orders candidates: higher importance first, then fewer hops (a
// path's first edge before the later ones it lends its score to), then
// lower edge id.
func Less(a, b *Candidate) bool {
	if a.Importance != b.Importance {
		return a.Importance > b.Importance
	}
	if a.Hop != b.Hop {
		return a.Hop < b.Hop
	}
	return a.Edge < b.Edge
}

// Ranker yields candidates best first without sorting them all: a binary
// heap built in linear time, popped lazily, so a block that fills its
// budget after 40 triplets pays for 40 pops, not for sorting thousands.
// It reorders the slice it is given.
type Ranker struct{ h []Candidate }

// NewRanker heapifies cands in place.
func NewRanker(cands []Candidate) Ranker {
	r := Ranker{h: cands}
	for i := len(cands)/2 - 1; i >= 0; i-- {
		r.down(i)
	}
	return r
}

// Len is the number of candidates not yet popped.
func (r *Ranker) Len() int { return len(r.h) }

// Next pops the best remaining candidate.
func (r *Ranker) Next() (Candidate, bool) {
	if len(r.h) == 0 {
		return Candidate{}, false
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

func (r *Ranker) down(i int) {
	h := r.h
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		best := l
		if rr := l + 1; rr < n && Less(&h[rr], &h[l]) {
			best = rr
		}
		if !Less(&h[best], &h[i]) {
			return
		}
		h[i], h[best] = h[best], h[i]
		i = best
	}
}

// Push adds c (a candidate popped earlier, typically with a lowered
// Importance) back into the ranker.
func (r *Ranker) Push(c Candidate) {
	r.h = append(r.h, c)
	i := len(r.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !Less(&r.h[i], &r.h[p]) {
			return
		}
		r.h[i], r.h[p] = r.h[p], r.h[i]
		i = p
	}
}

// Rest returns the candidates not yet popped, in no particular order, and
// empties the ranker. The slice aliases the ranker's.
func (r *Ranker) Rest() []Candidate {
	rest := r.h
	r.h = r.h[:0]
	return rest
}
