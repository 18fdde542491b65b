package compose

import (
	"sync"
	"sync/atomic"
)

// lenCache remembers textLen of names by dense id (the code points a name
// takes in a line, and whether it takes a backslash more at a block start).
// A node's name never
// changes (the engine never reuses ids, and re-imports only add aliases),
// so an entry never goes stale. Reads are lock-free; a miss computes the
// length and stores it (racing writers store the same value).
//
// An entry is one byte, four to an atomic word: a block's render reads
// the lengths of thousands of far ends, and at a million nodes 1 MB of
// entries stays in cache where 4 MB did not. A length that does not fit a
// byte (none does: names are cut at MaxNameRunes) is computed every time.
type lenCache struct{ chunks chunked[lenChunk] }

const lenChunkBits = 12

// lenChunk holds 1<<lenChunkBits entries, byte i of word i/4 (from the
// low end) entry i: length<<1 | escape, plus 1; 0 = unknown.
type lenChunk [1 << lenChunkBits / 4]atomic.Uint32

// get returns textLen(name, MaxNameRunes) of id's name, the escape as 0 or
// 1; name is only called on a miss (reading a name touches its record, the
// cache miss this avoids).
func (c *lenCache) get(id uint32, name func(uint32) string) (runes, escape int) {
	ci, off := int(id>>lenChunkBits), id&(1<<lenChunkBits-1)
	shift := 8 * (off & 3)
	if ch := c.chunks.load(ci); ch != nil {
		if v := ch[off>>2].Load() >> shift & 0xff; v != 0 {
			return int(v-1) >> 1, int(v-1) & 1
		}
	}
	n, esc := textLen(name(id), MaxNameRunes)
	if esc {
		escape = 1
	}
	if v := uint32(n<<1|escape) + 1; v <= 0xff {
		c.chunks.chunk(ci)[off>>2].Or(v << shift)
	}
	return n, escape
}

// chunked is a growable array of chunks C, indexed by id >> lenChunkBits:
// lock-free to read, growth serialised. Caches keyed by dense id use it.
type chunked[C any] struct {
	mu     sync.Mutex // serialises growth
	chunks atomic.Pointer[[]*C]
}

// load returns chunk ci, or nil when it does not exist yet.
func (c *chunked[C]) load(ci int) *C {
	if cs := c.chunks.Load(); cs != nil && ci < len(*cs) {
		return (*cs)[ci]
	}
	return nil
}

// chunk returns chunk ci, creating it (and growing the array) if needed.
func (c *chunked[C]) chunk(ci int) *C {
	c.mu.Lock()
	defer c.mu.Unlock()
	var cs []*C
	if p := c.chunks.Load(); p != nil {
		cs = *p
	}
	if ci < len(cs) && cs[ci] != nil {
		return cs[ci]
	}
	grown := make([]*C, max(len(cs), ci+1))
	copy(grown, cs)
	grown[ci] = new(C)
	c.chunks.Store(&grown)
	return grown[ci]
}
