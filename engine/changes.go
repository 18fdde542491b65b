package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	badger "github.com/dgraph-io/badger/v4"
)

// The change log ('c' keys) is an outbox for derived indexes: every batch
// that creates, changes or deletes nodes writes the ids it touched, in the
// same Badger batch as the nodes themselves. Indexers remember the highest
// sequence they made durable; at Attach the store replays what they missed
// (a crash between the commit and the index update), so indexes converge on
// the store without a rebuild. Entries every indexer has passed are trimmed.

// A change record holds four bitmaps: upserted nodes, deleted nodes,
// created observations, deleted observations.
func encodeChange(dst []byte, sets [4]*roaring.Bitmap) []byte {
	dst = append(dst, recordVersion)
	for _, b := range sets {
		raw, _ := b.ToBytes()
		dst = binary.AppendUvarint(dst, uint64(len(raw)))
		dst = append(dst, raw...)
	}
	return dst
}

func decodeChange(b []byte) ([4]*roaring.Bitmap, error) {
	var sets [4]*roaring.Bitmap
	d := dec{b: b}
	if d.u8() != recordVersion {
		return sets, fmt.Errorf("%w: change record version", ErrCorrupt)
	}
	for i := range sets {
		raw := d.bytes(int(d.uv()))
		if d.err {
			return sets, fmt.Errorf("%w: truncated change record", ErrCorrupt)
		}
		sets[i] = roaring.New()
		if err := sets[i].UnmarshalBinary(raw); err != nil {
			return sets, fmt.Errorf("%w: change record: %v", ErrCorrupt, err)
		}
	}
	return sets, nil
}

// Attach registers an indexer and first replays to it every change set above
// its watermark, so it matches the store when Attach returns. Attach
// indexers before serving writes.
func (s *Store) Attach(ctx context.Context, ix Indexer) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	from := ix.Watermark()
	cs, err := s.replayFrom(from, s.seq)
	if err != nil {
		return err
	}
	if cs != nil {
		s.log.Info("replaying changes to indexer", "indexer", ix.Name(), "from", from, "to", cs.Seq,
			"upserts", len(cs.Upserts), "deletes", len(cs.Deletes), "observations", len(cs.ObsUpserts), "observationDeletes", len(cs.ObsDeletes))
		if err := ix.Apply(ctx, cs); err != nil {
			return fmt.Errorf("engine: replay to %s: %w", ix.Name(), err)
		}
	}
	s.aq.mu.Lock()
	s.aq.indexers = append(s.aq.indexers[:len(s.aq.indexers):len(s.aq.indexers)], ix)
	s.aq.mu.Unlock()
	return nil
}

// replayFrom builds one change set of every change the log holds above
// sequence from and up to to, from the current state of the nodes and
// observations they name; nil when there are none. Its Seq is the last
// entry's.
func (s *Store) replayFrom(from, to uint64) (*ChangeSet, error) {
	if from >= to {
		return nil, nil
	}
	nodes, obs := roaring.New(), roaring.New()
	var last uint64
	err := s.iterate([]byte{pfxChange}, func(k, v []byte) error {
		seq := binary.BigEndian.Uint64(k[1:])
		if seq <= from || seq > to {
			return nil
		}
		sets, err := decodeChange(v)
		if err != nil {
			return err
		}
		nodes.Or(sets[0])
		nodes.Or(sets[1])
		obs.Or(sets[2])
		obs.Or(sets[3])
		last = seq
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("engine: read change log: %w", err)
	}
	if last == 0 {
		return nil, nil
	}
	return s.replaySet(last, nodes, obs)
}

// replayDocs loads the current document of every id in ids: live ones go
// to ups, the others (load returned nil) to dels.
func replayDocs[D any](txn *badger.Txn, ids *roaring.Bitmap, load func(*badger.Txn, uint32) (*D, error), ups *[]*D, dels *[]uint32) error {
	it := ids.Iterator()
	for it.HasNext() {
		id := it.Next()
		doc, err := load(txn, id)
		if err != nil {
			return err
		}
		if doc == nil {
			*dels = append(*dels, id)
			continue
		}
		*ups = append(*ups, doc)
	}
	return nil
}

// replaySet builds one change set from the current state of the nodes and
// observations the log names: live ones are upserted with their stored
// vector, the others deleted.
func (s *Store) replaySet(seq uint64, nodes, obs *roaring.Bitmap) (*ChangeSet, error) {
	cs := &ChangeSet{Seq: seq}
	err := s.db.View(func(txn *badger.Txn) error {
		if err := replayDocs(txn, nodes, s.loadDoc, &cs.Upserts, &cs.Deletes); err != nil {
			return err
		}
		return replayDocs(txn, obs, s.loadObsDoc, &cs.ObsUpserts, &cs.ObsDeletes)
	})
	return cs, err
}

// loadObsDoc reads the indexable state of observation id, nil if it is gone.
func (s *Store) loadObsDoc(txn *badger.Txn, id uint32) (*ObsDoc, error) {
	item, err := txn.Get(key32(pfxObs, id))
	if err == badger.ErrKeyNotFound {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var doc *ObsDoc
	err = item.Value(func(v []byte) error {
		doc, err = s.decodeObsDoc(id, v)
		return err
	})
	if err != nil || doc == nil {
		return nil, err
	}
	item, err = txn.Get(key32(pfxObsVec, id))
	if err == badger.ErrKeyNotFound {
		return doc, nil
	} else if err != nil {
		return nil, err
	}
	err = item.Value(func(v []byte) error { doc.Vector = decodeVector(nil, v); return nil })
	return doc, err
}

// EachObsVector calls fn with every stored observation vector, in id
// order. v is only valid during the call.
func (s *Store) EachObsVector(fn func(id uint32, v []float32) error) error {
	var buf []float32
	return s.iterate([]byte{pfxObsVec}, func(k, v []byte) error {
		buf = decodeVector(buf, v)
		return fn(binary.BigEndian.Uint32(k[1:]), buf)
	})
}

// loadDoc reads the indexable state of node id, nil if it is gone.
func (s *Store) loadDoc(txn *badger.Txn, id uint32) (*NodeDoc, error) {
	item, err := txn.Get(key32(pfxNode, id))
	if err == badger.ErrKeyNotFound {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var doc *NodeDoc
	err = item.Value(func(v []byte) error {
		var err error
		doc, err = s.decodeDoc(id, v)
		return err
	})
	if err != nil || doc == nil {
		return doc, err
	}
	item, err = txn.Get(key32(pfxVector, id))
	if err == badger.ErrKeyNotFound {
		return doc, nil
	} else if err != nil {
		return nil, err
	}
	err = item.Value(func(v []byte) error { doc.Vector = decodeVector(nil, v); return nil })
	return doc, err
}

// trimChangeLog deletes change-log entries every attached indexer has made
// durable. It deletes only entries at or below every watermark, so it is
// safe beside writers that append newer entries, and below the first set
// an indexer that is behind has missed (indexFloor), whatever its
// watermark says. A failure leaves entries that a later trim deletes.
func (s *Store) trimChangeLog() {
	ixs := s.attached()
	if len(ixs) == 0 {
		return
	}
	low := s.indexFloor()
	for _, ix := range ixs {
		low = min(low, ix.Watermark())
	}
	var keys [][]byte
	if err := s.iterate([]byte{pfxChange}, func(k, _ []byte) error {
		if binary.BigEndian.Uint64(k[1:]) <= low {
			keys = append(keys, slices.Clone(k))
		}
		return nil
	}); err != nil {
		s.log.Warn("trim change log: read", "err", err)
		return
	}
	if len(keys) == 0 {
		return
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for _, k := range keys {
		if err := wb.Delete(k); err != nil {
			s.log.Warn("trim change log", "err", err)
			return
		}
	}
	if err := wb.Flush(); err != nil {
		s.log.Warn("trim change log", "err", err)
	}
}

// EachVector calls fn with every stored node vector, in id order. v is only
// valid during the call.
func (s *Store) EachVector(fn func(id uint32, v []float32) error) error {
	var buf []float32
	return s.iterate([]byte{pfxVector}, func(k, v []byte) error {
		buf = decodeVector(buf, v)
		return fn(binary.BigEndian.Uint32(k[1:]), buf)
	})
}

// Vector returns a copy of node id's stored vector.
func (s *Store) Vector(id uint32) ([]float32, error) {
	var out []float32
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(key32(pfxVector, id))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error { out = decodeVector(nil, v); return nil })
	})
	if err == badger.ErrKeyNotFound {
		return nil, ErrNotFound
	}
	return out, err
}

// EachDoc calls fn with the indexable state of every live node (vectors not
// included), for rebuilding a derived index from scratch.
func (s *Store) EachDoc(fn func(doc *NodeDoc) error) error {
	return s.iterate([]byte{pfxNode}, func(k, v []byte) error {
		doc, err := s.decodeDoc(binary.BigEndian.Uint32(k[1:]), v)
		if err != nil || doc == nil {
			return err
		}
		return fn(doc)
	})
}

// EachObsDoc calls fn with the indexable state of every live observation
// (vectors not included), for rebuilding a derived index from scratch.
func (s *Store) EachObsDoc(fn func(doc *ObsDoc) error) error {
	return s.iterate([]byte{pfxObs}, func(k, v []byte) error {
		doc, err := s.decodeObsDoc(binary.BigEndian.Uint32(k[1:]), v)
		if err != nil || doc == nil {
			return err
		}
		return fn(doc)
	})
}

// tenantOf returns the tenant of id as the in-memory graph knows it. A
// record read from a snapshot older than the graph (a catch-up replays
// the log without the writer lock) can name a tenant the graph no longer
// holds (an undone import dropped it) or does not hold yet (an import
// committed its first chunk and applies it next): such a record is not a
// document now, and the change sets after the replay bring the index to
// what the graph holds.
func (s *Store) tenantOf(id uint32) (Tenant, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if int(id) >= len(s.g.tenants) {
		return Tenant{}, false
	}
	return s.g.tenants[id], true
}

// decodeObsDoc turns a stored observation record into its index document
// (no vector), nil when its tenant is not in the graph (tenantOf).
func (s *Store) decodeObsDoc(id uint32, v []byte) (*ObsDoc, error) {
	rec, content, err := decodeObs(v, true)
	if err != nil {
		return nil, err
	}
	t, ok := s.tenantOf(rec.tenant)
	if !ok {
		return nil, nil
	}
	return &ObsDoc{Dense: id, ID: rec.id, OrgID: t.Org, ProjectID: t.Project, Content: content, Tags: rec.tags, Namespace: rec.namespace}, nil
}

// decodeDoc turns a stored node record into its index document, nil when
// its tenant is not in the graph (tenantOf).
func (s *Store) decodeDoc(id uint32, v []byte) (*NodeDoc, error) {
	rec, desc, err := decodeNode(v, true)
	if err != nil {
		return nil, err
	}
	t, ok := s.tenantOf(rec.tenant)
	if !ok {
		return nil, nil
	}
	return &NodeDoc{Dense: id, ID: rec.uuid.String(), OrgID: t.Org, ProjectID: t.Project, Name: rec.name,
		Aliases: rec.aliases, Type: rec.typ, Description: desc}, nil
}

// Seq is the sequence of the last committed change set.
func (s *Store) Seq() uint64 {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.seq
}
