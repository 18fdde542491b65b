package hnsw

import (
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Per-node storage lives in chunks of chunkSize consecutive ids (slot = id &
// chunkMask). A chunk is allocated whole the first time one of its ids is
// inserted and never moves or shrinks, so a reader holding an id it found in
// a neighbour list can read that node's vector and links without a lock: the
// writer published the id with an atomic store after filling the slot.
//
// The chunk table (directory) is copy-on-grow behind an atomic pointer;
// growth takes growMu only to serialise allocators.
const (
	chunkShift = 12
	chunkSize  = 1 << chunkShift
	chunkMask  = chunkSize - 1

	// maxLevel caps the random level. With M >= 2 a level above 31 has
	// probability below 2^-31 per node; the cap keeps the state encoding and
	// the per-level scratch small.
	maxLevel = 31
)

// Node state, one atomic uint32 per slot.
//
//	bits 0-7  level (valid when stPresent)
//	stPresent the slot holds a node (being inserted, live, or deleted)
//	stLinked  insertion finished; cleared while a slot is being reinserted
//	stDeleted tombstone: traversable through stale links, never returned
const (
	stLevelMask uint32 = 0xff
	stPresent   uint32 = 1 << 8
	stLinked    uint32 = 1 << 9
	stDeleted   uint32 = 1 << 10
)

func levelOf(st uint32) int { return int(st & stLevelMask) }

// isLive: inserted, linked and not deleted (what Contains and Len count).
func isLive(st uint32) bool { return st&(stPresent|stLinked|stDeleted) == stPresent|stLinked }

type chunk struct {
	// vecs holds chunkSize vectors of Dim float32, slot-major. A slot's
	// vector is written before the node is published and rewritten only
	// under Graph.slotMu held exclusively. Nil under Options.Sparse.
	vecs []float32

	// Under Options.Sparse (K = Graph.sparse), the same protocol: the bits
	// of spMask[slot*W:] (W = Graph.maskWords) mark the vector's nonzero
	// components and spVal[slot*K:] holds their values in index order; a
	// vector of more than K nonzeros is kept whole in whole[slot], its
	// mask all ones. A component is zero when its bits are (a -0 is kept),
	// so the vector restored is the one stored.
	spMask []uint64
	spVal  []float32
	whole  atomic.Pointer[[chunkSize][]float32] // allocated at the first whole vector

	// qv holds the quantised traversal records (quant.go), stride
	// Graph.rstride, under the same protocol as vecs.
	qv []byte

	// l0 holds the layer-0 neighbour lists, stride 1+2M: [count, ids...].
	// Elements are read and written with atomic loads/stores; writers hold
	// outMu of the slot. A reader may see a mix of an old and a new list;
	// every id it sees was a valid neighbour at some point, which is all an
	// approximate search needs.
	l0 []uint32

	state [chunkSize]atomic.Uint32
	dirty [chunkSize / 64]atomic.Uint64

	// upper[slot] holds layers 1..level, stride 1+M each, same protocol as
	// l0. The slice header is set before publication or under slotMu held
	// exclusively, so reading it needs no lock.
	upper [chunkSize][]uint32

	// in[slot][layer] lists the nodes whose layer list contains this node
	// (the reverse index), guarded by inMu[slot]. It is exact for live
	// linkers and lets Delete find every node that must be repaired without
	// a full scan. Deleted nodes keep their (stale) out-lists and may remain
	// in in-lists; nothing ever repairs a deleted node.
	in [chunkSize][][]uint32

	// outMu[slot] serialises writers of the slot's out-lists; inMu[slot]
	// guards in[slot]. Lock order: opMu -> slotMu -> epMu -> outMu -> inMu;
	// no goroutine ever holds two outMu or two inMu at once.
	outMu [chunkSize]sync.Mutex
	inMu  [chunkSize]sync.Mutex
}

type directory struct {
	chunks []*chunk // nil for never-touched chunks (sparse ids)
	// recs[i] is the base of chunks[i].qv (nil with it): the walk's hottest
	// lookup, one load from a small dense array instead of a load from each
	// chunk's header (chunks are large, page-aligned objects whose headers
	// all compete for the same few L1 sets).
	recs []unsafe.Pointer
}

// recOf returns the quantised record of id, or nil if id has no chunk.
func (d *directory) recOf(id uint32, stride int) unsafe.Pointer {
	ci := int(id >> chunkShift)
	if ci >= len(d.recs) || d.recs[ci] == nil {
		return nil
	}
	return unsafe.Add(d.recs[ci], int(id&chunkMask)*stride)
}

// chunkOf returns the chunk holding id, or nil.
func (d *directory) chunkOf(id uint32) *chunk {
	ci := int(id >> chunkShift)
	if ci >= len(d.chunks) {
		return nil
	}
	return d.chunks[ci]
}

// capacity is the number of id slots the directory spans; visited sets are
// sized to it.
func (d *directory) capacity() int { return len(d.chunks) << chunkShift }

// ensureChunk returns the chunk for id, allocating it (and a larger
// directory) if needed.
func (g *Graph) ensureChunk(id uint32) *chunk {
	if ch := g.dir.Load().chunkOf(id); ch != nil {
		return ch
	}
	g.growMu.Lock()
	defer g.growMu.Unlock()
	d := g.dir.Load()
	if ch := d.chunkOf(id); ch != nil {
		return ch
	}
	ci := int(id >> chunkShift)
	n := max(len(d.chunks), ci+1)
	nd := &directory{chunks: make([]*chunk, n), recs: make([]unsafe.Pointer, n)}
	copy(nd.chunks, d.chunks)
	copy(nd.recs, d.recs)
	ch := &chunk{
		l0: make([]uint32, chunkSize*g.stride0),
		qv: make([]byte, chunkSize*g.rstride),
	}
	if g.sparse > 0 {
		ch.spMask = make([]uint64, chunkSize*g.maskWords)
		ch.spVal = make([]float32, chunkSize*g.sparse)
		adviseHuge(unsafe.Pointer(unsafe.SliceData(ch.spVal)), uintptr(len(ch.spVal))*4)
	} else {
		ch.vecs = make([]float32, chunkSize*g.dim)
		adviseHuge(unsafe.Pointer(unsafe.SliceData(ch.vecs)), uintptr(len(ch.vecs))*4)
	}
	adviseHuge(unsafe.Pointer(unsafe.SliceData(ch.l0)), uintptr(len(ch.l0))*4)
	adviseHuge(unsafe.Pointer(unsafe.SliceData(ch.qv)), uintptr(len(ch.qv)))
	nd.chunks[ci] = ch
	nd.recs[ci] = unsafe.Pointer(unsafe.SliceData(ch.qv))
	g.dir.Store(nd)
	return ch
}

// vec returns the vector in slot of ch: a view of the dense layout's
// storage, or under Options.Sparse the vector restored into buf (Dim
// long), or a view of a vector kept whole.
func (g *Graph) vec(buf []float32, ch *chunk, slot uint32) []float32 {
	if g.sparse == 0 {
		o := int(slot) * g.dim
		return ch.vecs[o : o+g.dim : o+g.dim]
	}
	mask := ch.spMask[int(slot)*g.maskWords : int(slot+1)*g.maskWords]
	if g.whole(mask) {
		return ch.whole.Load()[slot]
	}
	buf = buf[:g.dim]
	clear(buf)
	val := ch.spVal[int(slot)*g.sparse : int(slot+1)*g.sparse]
	j := 0
	for w, m := range mask {
		for m != 0 {
			buf[w<<6+bits.TrailingZeros64(m)] = val[j]
			j++
			m &= m - 1
		}
	}
	return buf
}

// whole reports whether a slot's mask says its vector is kept whole.
func (g *Graph) whole(mask []uint64) bool {
	n := 0
	for _, m := range mask {
		n += bits.OnesCount64(m)
	}
	return n > g.sparse
}

// setVec stores v as slot's vector. The slot is fresh or slotMu is held
// exclusively (see chunk.vecs).
func (g *Graph) setVec(ch *chunk, slot uint32, v []float32) {
	if g.sparse == 0 {
		copy(g.vec(nil, ch, slot), v)
		return
	}
	mask := ch.spMask[int(slot)*g.maskWords : int(slot+1)*g.maskWords]
	clear(mask)
	n := 0
	for i, x := range v {
		if math.Float32bits(x) != 0 {
			mask[i>>6] |= 1 << (i & 63)
			n++
		}
	}
	if w := ch.whole.Load(); w != nil {
		w[slot] = nil
	}
	if n > g.sparse {
		w := ch.whole.Load()
		if w == nil {
			ch.whole.CompareAndSwap(nil, new([chunkSize][]float32))
			w = ch.whole.Load()
		}
		w[slot] = slices.Clone(v)
		for i := range mask {
			mask[i] = ^uint64(0)
		}
		return
	}
	val := ch.spVal[int(slot)*g.sparse : int(slot+1)*g.sparse]
	j := 0
	for _, x := range v {
		if math.Float32bits(x) != 0 {
			val[j] = x
			j++
		}
	}
}

// vecAddr is the address of the memory slot's vector is read from (what
// rerank prefetches, vecBytes long): the dense vector, or the sparse
// layout's values.
func (g *Graph) vecAddr(ch *chunk, slot uint32) unsafe.Pointer {
	if g.sparse == 0 {
		return unsafe.Pointer(&ch.vecs[int(slot)*g.dim])
	}
	return unsafe.Pointer(&ch.spVal[int(slot)*g.sparse])
}

// vecBytes is the length of what vecAddr points at.
func (g *Graph) vecBytes() int {
	if g.sparse == 0 {
		return 4 * g.dim
	}
	return 4 * g.sparse
}

// links returns the [count, ids...] window of slot's list on layer l. The
// caller guarantees l <= the node's level.
func (g *Graph) links(ch *chunk, slot uint32, l int) []uint32 {
	if l == 0 {
		o := int(slot) * g.stride0
		return ch.l0[o : o+g.stride0 : o+g.stride0]
	}
	o := (l - 1) * g.strideU
	return ch.upper[slot][o : o+g.strideU : o+g.strideU]
}

// maxLinks is the capacity of a list on layer l.
func (g *Graph) maxLinks(l int) int {
	if l == 0 {
		return g.m0
	}
	return g.m
}

func markDirty(ch *chunk, slot uint32) {
	w := &ch.dirty[slot>>6]
	bit := uint64(1) << (slot & 63)
	if w.Load()&bit == 0 {
		w.Or(bit)
	}
}

// loadList copies the ids of list into dst (atomic loads) and returns it.
func loadList(dst []uint32, list []uint32) []uint32 {
	n := int(atomic.LoadUint32(&list[0]))
	if n > len(list)-1 {
		n = len(list) - 1 // only reachable through a bug; never read past the window
	}
	for i := 1; i <= n; i++ {
		dst = append(dst, atomic.LoadUint32(&list[i]))
	}
	return dst
}

// storeList overwrites list with ids. The caller holds the slot's outMu.
// Ids are stored before the count so a reader never sees a count covering
// unwritten entries.
func storeList(list []uint32, ids []uint32) {
	if len(ids) > len(list)-1 {
		panic("BUG: hnsw: neighbour list overflow")
	}
	for i, id := range ids {
		atomic.StoreUint32(&list[i+1], id)
	}
	atomic.StoreUint32(&list[0], uint32(len(ids)))
}

// loadAt atomically loads the i-th word of a list window.
func loadAt(list []uint32, i int) uint32 { return atomic.LoadUint32(&list[i]) }
