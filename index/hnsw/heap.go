package hnsw

import (
	"math"
	"slices"
)

// item is a (distance, id) pair.
type item struct {
	d  float32
	id uint32
}

// less orders by distance, then id, so ties break the same way on every run.
func (a item) less(b item) bool { return a.d < b.d || (a.d == b.d && a.id < b.id) }

// The heaps hold items packed into one uint64 whose integer order is the
// item order (distance, then id): one compare per step instead of two
// float compares and an id compare. They are plain slices kept in the
// pooled scratch, so steady-state searches do not allocate.
func pack(it item) uint64 {
	b := math.Float32bits(it.d)
	if b&(1<<31) != 0 {
		b = ^b // negative: reverse the order of magnitudes
	} else {
		b |= 1 << 31
	}
	return uint64(b)<<32 | uint64(it.id)
}

func unpack(k uint64) item {
	b := uint32(k >> 32)
	if b&(1<<31) != 0 {
		b &^= 1 << 31
	} else {
		b = ^b
	}
	return item{math.Float32frombits(b), uint32(k)}
}

// minHeap pops the closest item first (the candidate queue).
type minHeap []uint64

func (h *minHeap) push(x item) {
	k := pack(x)
	s := append(*h, k)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p] <= k {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = k
	*h = s
}

func (h *minHeap) pop() item {
	s := *h
	top := s[0]
	n := len(s) - 1
	x := s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && s[r] < s[l] {
			c = r
		}
		if x <= s[c] {
			break
		}
		s[i] = s[c]
		i = c
	}
	if n > 0 {
		s[i] = x
	}
	*h = s
	return unpack(top)
}

// topID is the id of the closest item; the heap must not be empty.
func (h minHeap) topID() uint32 { return uint32(h[0]) }

// maxHeap keeps the farthest item on top (the bounded result set).
type maxHeap []uint64

func (h *maxHeap) push(x item) {
	k := pack(x)
	s := append(*h, k)
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p] >= k {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = k
	*h = s
}

// top is the farthest item; the heap must not be empty.
func (h maxHeap) top() item { return unpack(h[0]) }

// at is the i-th item in heap order.
func (h maxHeap) at(i int) item { return unpack(h[i]) }

func (h *maxHeap) pop() item {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	*h = s[:n]
	h.down()
	return unpack(top)
}

// replaceTop replaces the farthest item by x (pop+push with one sift).
func (h *maxHeap) replaceTop(x item) {
	(*h)[0] = pack(x)
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
		if r := l + 1; r < n && s[r] > s[l] {
			c = r
		}
		if x >= s[c] {
			break
		}
		s[i] = s[c]
		i = c
	}
	s[i] = x
}

// drainSorted empties h into dst in ascending order and returns dst.
func (h *maxHeap) drainSorted(dst []item) []item {
	s := *h
	slices.Sort(s)
	for _, k := range s {
		dst = append(dst, unpack(k))
	}
	*h = s[:0]
	return dst
}
