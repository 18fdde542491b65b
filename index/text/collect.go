package text

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
)

// collector keeps the k best hits by (score desc, id asc) in a heap whose
// root is the worst kept hit. A match scoring below the root is dropped
// without looking at its id; every other match needs its node id (the
// stored _id, read from the segment without decompression), as do ties
// with the root, so ties are broken by ID exactly. A post-filter
// allow-list is checked on the same id.
type collector struct {
	k     int
	allow *roaring.Bitmap
	heap  []Hit

	// The segment being evaluated and its id array.
	seg    *scorch.SegmentSnapshot
	ids    *segIDs
	filled int64 // ids' filled prefix when the segment started
	misses int   // ids read from the segment (beyond the filled prefix)
}

// worse reports whether a ranks below b.
func worse(a, b Hit) bool {
	return a.Score < b.Score || (a.Score == b.Score && a.ID > b.ID)
}

func (c *collector) startSegment(s *scorch.SegmentSnapshot, ids *segIDs) {
	c.seg, c.ids, c.filled, c.misses = s, ids, ids.filled.Load(), 0
}

// endSegment extends the segment's id array when this search had to read
// ids beyond it: by 8 documents per id read (a sequential read costs about
// an eighth of a random one), at least 512 and at most 8192.
func (c *collector) endSegment() error {
	if c.misses == 0 {
		return nil
	}
	return c.ids.fill(c.seg, min(max(8*c.misses, 512), 8192))
}

func (c *collector) offer(doc uint64, score float64) error {
	full := len(c.heap) == c.k
	if full && score < c.heap[0].Score {
		return nil
	}
	id, ok := c.ids.get(doc, c.filled)
	if !ok {
		c.misses++
		ext, err := c.seg.DocID(doc)
		if err != nil {
			return err
		}
		if id, ok = parseDocIDBytes(ext); !ok {
			return fmt.Errorf("%w: %q", ErrCorruptID, ext)
		}
	}
	if c.allow != nil && !c.allow.Contains(id) {
		return nil
	}
	h := Hit{ID: id, Score: score}
	if !full {
		c.heap = append(c.heap, h)
		c.up(len(c.heap) - 1)
	} else if worse(c.heap[0], h) {
		c.heap[0] = h
		c.down(0)
	}
	return nil
}

func (c *collector) up(i int) {
	h := c.heap
	for i > 0 {
		p := (i - 1) / 2
		if !worse(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (c *collector) down(i int) {
	h := c.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && worse(h[r], h[l]) {
			m = r
		}
		if !worse(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func parseDocIDBytes(b []byte) (uint32, bool) {
	if len(b) != 4 {
		return 0, false
	}
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]), true
}
