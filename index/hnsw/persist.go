package hnsw

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Encoding. The caller stores the bytes (kgctx keeps them in Badger next to
// the vectors it already persists); this package does no I/O.
//
// Meta (MarshalMeta):
//
//	byte     version (1)
//	uvarint  Dim, M, EfConstruction, EfSearch, Metric, ExactCutoff
//	varint   Seed
//	byte     1 if there is an entry point, else 0
//	uvarint  entry id, entry level
//	uvarint  live count, tombstone count
//
// Node record (AppendNode), one per present id:
//
//	byte     flags (bit 0: deleted)
//	uvarint  level
//	live nodes only, for each layer 0..level:
//	  uvarint count, then count uvarint neighbour ids, in list order
//
// Deleted nodes carry no lists (nothing live links to them, and their stale
// lists only serve searches already running) and need no vector on Load.
const encodingVersion = 1

const recDeleted = 1 << 0

// MarshalMeta encodes the graph parameters, entry point and counts. Store it
// together with the node records of the same moment: under concurrent writes
// it is a snapshot of each field, not of the whole graph.
func (g *Graph) MarshalMeta() []byte {
	o := g.opts
	b := []byte{encodingVersion}
	for _, v := range []int{o.Dim, o.M, o.EfConstruction, o.EfSearch, int(o.Metric), o.ExactCutoff} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	b = binary.AppendVarint(b, o.Seed)
	id, level, ok := unpackEntry(g.entry.Load())
	if ok {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(id))
	b = binary.AppendUvarint(b, uint64(level))
	b = binary.AppendUvarint(b, uint64(g.live.Load()))
	b = binary.AppendUvarint(b, uint64(g.tombstones.Load()))
	return b
}

// TakeDirty returns, in ascending order, the ids whose record (state, level
// or any neighbour list) changed since the previous call, and forgets them.
// Persist AppendNode(id) for each (an empty encoding means: delete the
// record). A change racing with TakeDirty is reported by this call or the
// next, never lost.
func (g *Graph) TakeDirty() []uint32 {
	var out []uint32
	for ci, ch := range g.dir.Load().chunks {
		if ch == nil {
			continue
		}
		for w := range ch.dirty {
			if ch.dirty[w].Load() == 0 {
				continue
			}
			word := ch.dirty[w].Swap(0)
			base := uint32(ci)<<chunkShift | uint32(w)*64
			for word != 0 {
				out = append(out, base|uint32(bits.TrailingZeros64(word)))
				word &= word - 1
			}
		}
	}
	return out
}

// AppendNode appends the record of id (level, deleted flag, neighbour lists;
// not the vector) to dst and returns it. It appends nothing if id holds no
// node. Each list is read under its lock, so a record is never torn within
// a list.
func (g *Graph) AppendNode(dst []byte, id uint32) []byte {
	g.slotMu.RLock()
	defer g.slotMu.RUnlock()
	ch := g.chunkOf(id)
	if ch == nil {
		return dst
	}
	slot := id & chunkMask
	st := ch.state[slot].Load()
	if st&stPresent == 0 {
		return dst
	}
	level := levelOf(st)
	if st&stDeleted != 0 {
		dst = append(dst, recDeleted)
		return binary.AppendUvarint(dst, uint64(level))
	}
	dst = append(dst, 0)
	dst = binary.AppendUvarint(dst, uint64(level))
	var buf [2 * maxM]uint32
	for l := 0; l <= level; l++ {
		ch.outMu[slot].Lock()
		ids := loadList(buf[:0], g.links(ch, slot, l))
		ch.outMu[slot].Unlock()
		dst = binary.AppendUvarint(dst, uint64(len(ids)))
		for _, y := range ids {
			dst = binary.AppendUvarint(dst, uint64(y))
		}
	}
	return dst
}

type meta struct {
	opts       Options
	hasEntry   bool
	entryID    uint32
	entryLevel int
	live, tomb uint64
}

type reader struct {
	b   []byte
	err bool
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = true
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = true
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.err = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// int reads a uvarint that must fit in [0, limit].
func (r *reader) int(limit int) int {
	v := r.uvarint()
	if v > uint64(limit) {
		r.err = true
		return 0
	}
	return int(v)
}

func decodeMeta(b []byte) (meta, error) {
	var m meta
	if len(b) == 0 {
		return m, fmt.Errorf("empty meta: %w", ErrCorrupt)
	}
	if b[0] != encodingVersion {
		return m, fmt.Errorf("meta version %d, want %d: %w", b[0], encodingVersion, ErrVersion)
	}
	r := reader{b: b[1:]}
	m.opts.Dim = r.int(maxDim)
	m.opts.M = r.int(maxM)
	m.opts.EfConstruction = r.int(maxEf)
	m.opts.EfSearch = r.int(maxEf)
	m.opts.Metric = Metric(r.int(int(L2)))
	m.opts.ExactCutoff = r.int(1 << 62)
	m.opts.Seed = r.varint()
	m.hasEntry = r.byte() == 1
	m.entryID = uint32(r.int(1<<32 - 1))
	m.entryLevel = r.int(maxLevel)
	m.live = r.uvarint()
	m.tomb = r.uvarint()
	if r.err || len(r.b) != 0 {
		return m, fmt.Errorf("meta: %w", ErrCorrupt)
	}
	if err := m.opts.Validate(); err != nil {
		return m, fmt.Errorf("meta options: %w: %w", ErrCorrupt, err)
	}
	return m, nil
}

// Load rebuilds a graph from MarshalMeta output and the node records
// (AppendNode), without recomputing any neighbour: reopening costs a pass
// over the records and the vectors, not a rebuild.
//
// opts may be zero except where it must agree with the stored graph: a
// non-zero Dim or M, or a non-zero Metric, that differs from meta is
// ErrIncompatible. Non-zero EfConstruction, EfSearch, ExactCutoff and Seed
// override the stored values (they do not change the structure).
//
// nodes must call yield once per stored record, in any order, and return
// yield's error if it gets one. vector(id) is called for every live node and
// must return the vector as originally passed to Add (Load normalises it
// again under Cosine, which reproduces the stored bits exactly); Load copies
// it. Links to nodes recorded as deleted are dropped (and the linking node
// reported by TakeDirty): that only happens when records were written while
// deletes ran. Links to ids without a record are ErrCorrupt.
func Load(opts Options, metaBytes []byte, nodes func(yield func(id uint32, data []byte) error) error, vector func(id uint32) []float32) (*Graph, error) {
	m, err := decodeMeta(metaBytes)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	o, err := mergeOptions(opts, m.opts)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	g, err := New(o)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	g.rng = rand.New(rand.NewPCG(uint64(g.opts.Seed), m.live+m.tomb))
	s := new(scratch)

	var ids []uint32
	yield := func(id uint32, data []byte) error {
		if len(data) == 0 {
			return nil
		}
		if err := g.loadRecord(s, id, data, vector); err != nil {
			return fmt.Errorf("node %d: %w", id, err)
		}
		ids = append(ids, id)
		return nil
	}
	if err := nodes(yield); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	slices.Sort(ids)
	if err := g.resolveLinks(ids); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}

	// The entry point must be a live node of the top level; when meta and
	// records come from slightly different moments, pick one again.
	top, topID := -1, uint32(0)
	for _, id := range ids {
		if st := g.chunkOf(id).state[id&chunkMask].Load(); isLive(st) && levelOf(st) > top {
			top, topID = levelOf(st), id
		}
	}
	switch {
	case top < 0:
		g.entry.Store(0)
	case m.hasEntry && g.Contains(m.entryID) && levelOf(g.chunkOf(m.entryID).state[m.entryID&chunkMask].Load()) == top:
		g.entry.Store(packEntry(m.entryID, top))
	default:
		g.entry.Store(packEntry(topID, top))
	}
	return g, nil
}

func mergeOptions(opts, stored Options) (Options, error) {
	if err := (&Options{Dim: max(opts.Dim, 1), M: opts.M, EfConstruction: opts.EfConstruction,
		EfSearch: opts.EfSearch, Metric: opts.Metric, ExactCutoff: opts.ExactCutoff}).Validate(); err != nil {
		return opts, err
	}
	o := stored
	if opts.Dim != 0 && opts.Dim != stored.Dim {
		return o, fmt.Errorf("Dim %d, stored %d: %w", opts.Dim, stored.Dim, ErrIncompatible)
	}
	if opts.M != 0 && opts.M != stored.M {
		return o, fmt.Errorf("option M %d, stored %d: %w", opts.M, stored.M, ErrIncompatible)
	}
	if opts.Metric != 0 && opts.Metric != stored.Metric {
		return o, fmt.Errorf("metric %v, stored %v: %w", opts.Metric, stored.Metric, ErrIncompatible)
	}
	if opts.EfConstruction != 0 {
		o.EfConstruction = opts.EfConstruction
	}
	if opts.EfSearch != 0 {
		o.EfSearch = opts.EfSearch
	}
	if opts.ExactCutoff != 0 {
		o.ExactCutoff = opts.ExactCutoff
	}
	o.Sparse = opts.Sparse // the layout in memory: the caller's, never stored
	if opts.Seed != 0 {
		o.Seed = opts.Seed
	}
	return o, nil
}

// loadRecord decodes one record into its slot. Links are stored as read;
// resolveLinks validates them once every record is in.
func (g *Graph) loadRecord(s *scratch, id uint32, data []byte, vector func(uint32) []float32) error {
	r := reader{b: data}
	flags := r.byte()
	level := r.int(maxLevel)
	if r.err || flags&^recDeleted != 0 {
		return fmt.Errorf("header: %w", ErrCorrupt)
	}
	ch := g.ensureChunk(id)
	slot := id & chunkMask
	if ch.state[slot].Load()&stPresent != 0 {
		return fmt.Errorf("duplicate record: %w", ErrCorrupt)
	}
	if flags&recDeleted != 0 {
		if len(r.b) != 0 {
			return fmt.Errorf("trailing bytes: %w", ErrCorrupt)
		}
		g.fillSlot(ch, slot, g.zero, level) // vector stays zero
		ch.state[slot].Store(stPresent | stLinked | stDeleted | uint32(level))
		g.tombstones.Add(1)
		return nil
	}
	v := vector(id)
	if v == nil {
		// The store no longer holds the vector: the node was deleted after
		// this record was saved, and the deletion waits in the store's
		// change log, replayed after the load. Loaded as a tombstone, as
		// that replay would leave it.
		g.fillSlot(ch, slot, g.zero, level)
		ch.state[slot].Store(stPresent | stLinked | stDeleted | uint32(level))
		g.tombstones.Add(1)
		return nil
	}
	if err := g.checkVector(v); err != nil {
		return fmt.Errorf("vector: %w", err)
	}
	g.fillSlot(ch, slot, g.prepareQuery(s, v), level)
	var buf [2 * maxM]uint32
	for l := 0; l <= level; l++ {
		n := r.int(g.maxLinks(l))
		list := buf[:0]
		for range n {
			y := r.uvarint()
			if y > 1<<32-1 || uint32(y) == id {
				return fmt.Errorf("layer %d: bad neighbour %d: %w", l, y, ErrCorrupt)
			}
			list = append(list, uint32(y))
		}
		if r.err {
			return fmt.Errorf("layer %d: %w", l, ErrCorrupt)
		}
		storeList(g.links(ch, slot, l), list)
	}
	if len(r.b) != 0 {
		return fmt.Errorf("trailing bytes: %w", ErrCorrupt)
	}
	ch.state[slot].Or(stLinked)
	g.live.Add(1)
	return nil
}

// resolveLinks checks every stored link of the live nodes, drops links to
// deleted nodes and duplicates, and builds the reverse index.
//
// Layer-0 in-lists (nearly all of the reverse index) are built by a
// counting sort rather than by appending to each target's list: the first
// pass validates and counts in-links per target, the second scatters the
// sources into one array cut into exactly sized lists. Appending cost three
// dependent cache misses and a share of ~5 allocations per link; at 1M
// nodes (25M links) that was most of the time to reopen the graph.
func (g *Graph) resolveLinks(ids []uint32) error {
	var buf, keep [2 * maxM]uint32
	var maxID uint32
	for _, x := range ids {
		maxID = max(maxID, x)
	}
	count := make([]uint32, int(maxID)+1) // layer-0 in-links per target
	for _, x := range ids {
		xch := g.chunkOf(x)
		xs := x & chunkMask
		st := xch.state[xs].Load()
		if !isLive(st) {
			continue
		}
		for l := 0; l <= levelOf(st); l++ {
			list := g.links(xch, xs, l)
			cur := loadList(buf[:0], list)
			w := keep[:0]
			for _, y := range cur {
				ych := g.chunkOf(y)
				if ych == nil {
					return fmt.Errorf("node %d layer %d: neighbour %d has no record: %w", x, l, y, ErrCorrupt)
				}
				yst := ych.state[y&chunkMask].Load()
				switch {
				case yst&stPresent == 0:
					return fmt.Errorf("node %d layer %d: neighbour %d has no record: %w", x, l, y, ErrCorrupt)
				case levelOf(yst) < l:
					return fmt.Errorf("node %d layer %d: neighbour %d has level %d: %w", x, l, y, levelOf(yst), ErrCorrupt)
				case yst&stDeleted != 0 || slices.Contains(w, y):
					continue
				}
				w = append(w, y)
				if l == 0 {
					count[y]++
				} else {
					ych.in[y&chunkMask][l] = append(ych.in[y&chunkMask][l], x)
				}
			}
			if len(w) != len(cur) {
				storeList(list, w)
				markDirty(xch, xs)
			}
		}
	}
	// Exclusive prefix sums: count[y] becomes the start of y's list.
	var total uint32
	for y, c := range count {
		count[y] = total
		total += c
	}
	arena := make([]uint32, total)
	for _, x := range ids {
		xch := g.chunkOf(x)
		xs := x & chunkMask
		if !isLive(xch.state[xs].Load()) {
			continue
		}
		for _, y := range loadList(buf[:0], g.links(xch, xs, 0)) {
			arena[count[y]] = x
			count[y]++
		}
	}
	// count[y] is now the end of y's list, and the start of y+1's.
	var start uint32
	for y, end := range count {
		if end > start {
			ych := g.chunkOf(uint32(y))
			ych.in[uint32(y)&chunkMask][0] = arena[start:end:end]
		}
		start = end
	}
	return nil
}
