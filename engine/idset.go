package engine

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
)

// idSet is an open-addressing hash index from a record's key to its dense
// id that stores only the ids: the key of a slot is read back from the
// record the id names (graph.nodes or graph.edges), so an entry costs four
// bytes at a load of at most 3/4 instead of the 30-70 bytes of a Go map
// holding the key. At 1M nodes and 5M edges the name, uuid and triple
// indexes shrink from about 300 MB to about 40 MB.
//
// Linear probing; deletions leave tombstones, and a rebuild (on growth, or
// when tombstones fill a quarter of the table) drops them. The caller
// supplies the hash of the key and a matcher that compares a candidate
// id's record with the key; it must remove an id before changing the
// record's key.
type idSet struct {
	slots []uint32 // id+1; 0 is empty, tomb a deleted entry
	n     int      // live entries
	used  int      // live entries and tombstones
}

const tomb = ^uint32(0)

// matcher reports whether the record of id has the key being looked up.
type matcher interface{ match(id uint32) bool }

// find returns the id whose record matches, if any.
func find[M matcher](s *idSet, h uint64, m M) (uint32, bool) {
	if len(s.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := s.slots[i]
		if v == 0 {
			return 0, false
		}
		if v != tomb && m.match(v-1) {
			return v - 1, true
		}
	}
}

// insert adds id, whose key hashes to h and is not in the set. hashOf
// gives the hash of any live id's key, for rebuilds.
func (s *idSet) insert(h uint64, id uint32, hashOf func(uint32) uint64) {
	if (s.used+1)*4 > len(s.slots)*3 {
		s.rebuild(hashOf, s.n+1)
	}
	mask := uint64(len(s.slots) - 1)
	i := h & mask
	for s.slots[i] != 0 && s.slots[i] != tomb {
		i = (i + 1) & mask
	}
	if s.slots[i] == 0 {
		s.used++
	}
	s.slots[i] = id + 1
	s.n++
}

// remove deletes id, whose key hashes to h; absent ids are ignored.
func (s *idSet) remove(h uint64, id uint32) {
	if len(s.slots) == 0 {
		return
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case 0:
			return
		case id + 1:
			s.slots[i] = tomb
			s.n--
			return
		}
	}
}

// reserve sizes the table for want entries, so that filling it does not
// rehash (used when loading a store whose record counts are known).
func (s *idSet) reserve(hashOf func(uint32) uint64, want int) {
	if want*4 > len(s.slots)*3 {
		s.rebuild(hashOf, want)
	}
}

// rebuild rehashes the live ids into a table sized for want entries at a
// load of at most 1/2, dropping tombstones.
func (s *idSet) rebuild(hashOf func(uint32) uint64, want int) {
	size := 16
	for size < want*2 {
		size *= 2
	}
	old := s.slots
	s.slots, s.used = make([]uint32, size), 0
	mask := uint64(size - 1)
	for _, v := range old {
		if v == 0 || v == tomb {
			continue
		}
		i := hashOf(v-1) & mask
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = v
		s.used++
	}
}

// Key hashes. The name hash is seeded per process (maphash), the others
// mix integers, so an adversary choosing names cannot force collisions.

var nameSeed = maphash.MakeSeed()

func hashName(tenant uint32, norm string) uint64 {
	return mix64(maphash.String(nameSeed, norm) ^ uint64(tenant)*0x9e3779b97f4a7c15)
}

func hashUUID(u uuid) uint64 {
	return mix64(binary.LittleEndian.Uint64(u[:8]) ^ binary.LittleEndian.Uint64(u[8:])*0x9e3779b97f4a7c15)
}

func hashTriple(src, rel, dst uint32) uint64 {
	return mix64(uint64(src)<<32 | uint64(dst) ^ uint64(rel)*0x9e3779b97f4a7c15 ^ tripleSeed)
}

var tripleSeed = maphash.Comparable(maphash.MakeSeed(), 0)

// mix64 is the splitmix64 finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// The three indexes of graph and their matchers.

type nameMatch struct {
	g      *graph
	tenant uint32
	norm   string
}

func (m nameMatch) match(id uint32) bool {
	n := &m.g.nodes[id]
	return n.tenant == m.tenant && n.norm == m.norm
}

type uuidMatch struct {
	g *graph
	u uuid
}

func (m uuidMatch) match(id uint32) bool { return m.g.nodes[id].uuid == m.u }

type tripleMatch struct {
	g             *graph
	src, rel, dst uint32
}

func (m tripleMatch) match(id uint32) bool {
	e := &m.g.edges[id]
	return e.src == m.src && e.rel == m.rel && e.dst == m.dst
}

// nodeByName returns the live node named norm in tenant: the node whose
// key is norm or, failing that, the node that holds norm as a legacy key.
func (g *graph) nodeByName(tenant uint32, norm string) (uint32, bool) {
	if id, ok := find(&g.byName, hashName(tenant, norm), nameMatch{g, tenant, norm}); ok || len(g.legacy) == 0 {
		return id, ok
	}
	id, ok := g.legacy[nameKey{tenant, norm}]
	return id, ok
}

// legacyKeysOf lists the legacy keys of live node id. They are keys of its
// aliases (aliases are never removed), so they need no list of their own.
func (g *graph) legacyKeysOf(id uint32) []nameKey {
	if len(g.legacy) == 0 {
		return nil
	}
	n := &g.nodes[id]
	var out []nameKey
	for _, a := range n.aliases {
		k := nameKey{n.tenant, NormalizeName(a)}
		if owner, ok := g.legacy[k]; ok && owner == id && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// nodeByUUID returns the live node with external id u.
func (g *graph) nodeByUUID(u uuid) (uint32, bool) {
	return find(&g.byUUID, hashUUID(u), uuidMatch{g, u})
}

// edgeByTriple returns the live edge src -rel-> dst.
func (g *graph) edgeByTriple(src, rel, dst uint32) (uint32, bool) {
	return find(&g.byTriple, hashTriple(src, rel, dst), tripleMatch{g, src, rel, dst})
}

func (g *graph) nameHashOf(id uint32) uint64 {
	n := &g.nodes[id]
	return hashName(n.tenant, n.norm)
}

func (g *graph) uuidHashOf(id uint32) uint64 { return hashUUID(g.nodes[id].uuid) }

func (g *graph) tripleHashOf(id uint32) uint64 {
	e := &g.edges[id]
	return hashTriple(e.src, e.rel, e.dst)
}
