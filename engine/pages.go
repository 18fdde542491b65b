package engine

import (
	"encoding/binary"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// Edges are stored in pages of pageSize consecutive edge ids, one Badger
// key per page ('e' + big-endian page number). A bulk import writes a page
// per 64 edges instead of a key per edge, which cuts Badger's per-entry
// cost (skiplist insert, WAL entry, compaction) by as much, and a reopen
// decodes 64 records per value it reads. Pages are rewritten whole; only
// the writer (under the store's writer lock) does it.
const (
	pageBits = 6
	pageSize = 1 << pageBits
)

func pageOf(e uint32) uint32 { return e >> pageBits }

// page is a decoded edge page: slot i holds the encoded record of edge
// page*pageSize+i, or nil.
type page [pageSize][]byte

// encodePage appends the stored form of p: version, count, then for each
// present slot its index and length-prefixed record.
func encodePage(dst []byte, p *page) []byte {
	n := 0
	for _, r := range p {
		if r != nil {
			n++
		}
	}
	dst = append(dst, recordVersion, byte(n))
	for i, r := range p {
		if r == nil {
			continue
		}
		dst = append(dst, byte(i))
		dst = binary.AppendUvarint(dst, uint64(len(r)))
		dst = append(dst, r...)
	}
	return dst
}

// decodePage fills p from b. The records alias b.
func decodePage(b []byte, p *page) error {
	*p = page{}
	d := dec{b: b}
	if v := d.u8(); v != recordVersion {
		return fmt.Errorf("%w: edge page version %d", ErrCorrupt, v)
	}
	n := int(d.u8())
	for range n {
		slot := d.u8()
		rec := d.bytes(int(d.uv()))
		if d.err || int(slot) >= pageSize {
			return fmt.Errorf("%w: truncated edge page", ErrCorrupt)
		}
		p[slot] = rec
	}
	if d.err || len(d.b) != 0 {
		return fmt.Errorf("%w: malformed edge page", ErrCorrupt)
	}
	return nil
}

// eachStoredEdge calls fn for every stored edge record, in id order. rec is
// valid only during the call.
func (s *Store) eachStoredEdge(fn func(id uint32, rec []byte) error) error {
	var p page
	return s.iterate([]byte{pfxEdge}, func(k, v []byte) error {
		base := binary.BigEndian.Uint32(k[1:]) << pageBits
		if err := decodePage(v, &p); err != nil {
			return fmt.Errorf("edge page %d: %w", base>>pageBits, err)
		}
		for i, rec := range p {
			if rec != nil {
				if err := fn(base+uint32(i), rec); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// readEdge returns a copy of edge e's stored record, or nil if absent.
func readEdge(txn *badger.Txn, e uint32) ([]byte, error) {
	item, err := txn.Get(key32(pfxEdge, pageOf(e)))
	if err == badger.ErrKeyNotFound {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var out []byte
	err = item.Value(func(v []byte) error {
		var p page
		if err := decodePage(v, &p); err != nil {
			return err
		}
		if r := p[e&(pageSize-1)]; r != nil {
			out = append([]byte(nil), r...)
		}
		return nil
	})
	return out, err
}
