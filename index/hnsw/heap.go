package hnsw

// item is a (distance, id) pair. Heaps of items are plain slices kept in the
// pooled scratch, so steady-state searches do not allocate.
type item struct {
	d  float32
	id uint32
}

// less orders by distance, then id, so ties break the same way on every run
// (the result heap uses it; the candidate heap compares distances only, since
// the order in which equal candidates are expanded does not matter).
func (a item) less(b item) bool { return a.d < b.d || (a.d == b.d && a.id < b.id) }

// minHeap pops the closest item first (the candidate queue).
type minHeap []item

func (h *minHeap) push(x item) {
	s := append(*h, x)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[i].d >= s[p].d {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
	*h = s
}

func (h *minHeap) pop() item {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && s[r].d < s[l].d {
			c = r
		}
		if s[c].d >= s[i].d {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}

// maxHeap keeps the farthest item on top (the bounded result set).
type maxHeap []item

func (h *maxHeap) push(x item) {
	s := append(*h, x)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s[p].less(s[i]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
	*h = s
}

func (h *maxHeap) pop() item {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	*h = s[:n]
	h.down()
	return top
}

// replaceTop replaces the farthest item by x (pop+push with one sift).
func (h *maxHeap) replaceTop(x item) {
	(*h)[0] = x
	h.down()
}

func (h *maxHeap) down() {
	s := *h
	n := len(s)
	if n == 0 {
		return
	}
	i := 0
	x := s[0]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && s[l].less(s[r]) {
			c = r
		}
		if !x.less(s[c]) {
			break
		}
		s[i] = s[c]
		i = c
	}
	s[i] = x
}

// drainSorted empties h into dst in ascending order and returns dst.
func (h *maxHeap) drainSorted(dst []item) []item {
	n := len(*h)
	start := len(dst)
	for range n {
		dst = append(dst, item{})
	}
	for i := n - 1; i >= 0; i-- {
		dst[start+i] = h.pop()
	}
	return dst
}
