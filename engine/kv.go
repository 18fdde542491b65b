package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"sync"

	badger "github.com/dgraph-io/badger/v4"
)

// KV is the key-value handle of an open Store: its one Badger, lent to the
// packages beside engine (engine/delivery, engine/sessionlog, engine/auth,
// engine/configstore) that keep their records in key spaces of their own
// (the Prefix constants of keys.go). There is one KV per Store (Store.KV),
// so those packages share the store's Open, Close and directory lock.
//
// Concurrency: all methods are safe for concurrent use. Update runs one
// serialisable Badger transaction; a package whose transitions must not
// interleave (read, decide, write) serialises them with a lock of its own,
// which Shared makes one per store. Every method returns ErrClosed once the
// Store is closed.
//
// Memory: keys and values handed to callbacks belong to Badger and are
// valid only during the call; Get returns a copy.
type KV struct {
	s *Store

	mu     sync.Mutex
	shared map[string]any
}

// KV returns the store's key-value handle.
func (s *Store) KV() *KV { return &s.kv }

// Update runs fn in one read-write Badger transaction and commits it when
// fn returns nil.
func (kv *KV) Update(fn func(txn *badger.Txn) error) error {
	if err := kv.s.checkOpen(); err != nil {
		return err
	}
	return kv.s.db.Update(fn)
}

// View runs fn in one read-only Badger transaction.
func (kv *KV) View(fn func(txn *badger.Txn) error) error {
	if err := kv.s.checkOpen(); err != nil {
		return err
	}
	return kv.s.db.View(fn)
}

// Iterate calls fn for every key with prefix, in key order, from one
// snapshot. k and v are valid only during the call.
func (kv *KV) Iterate(prefix []byte, fn func(k, v []byte) error) error {
	if err := kv.s.checkOpen(); err != nil {
		return err
	}
	return kv.s.iterate(prefix, fn)
}

// Get returns a copy of the value at key, or ErrNotFound.
func (kv *KV) Get(key []byte) ([]byte, error) {
	if err := kv.s.checkOpen(); err != nil {
		return nil, err
	}
	return kv.s.get(key)
}

// Shared returns the value stored under name, calling mk to make it the
// first time name is asked for (a failed mk is asked again next time).
// The packages beside engine keep their per-store state in it (locks,
// caches, sequences), so that however often they are constructed over
// one Store, that state exists once.
func (kv *KV) Shared(name string, mk func() (any, error)) (any, error) {
	if err := kv.s.checkOpen(); err != nil {
		return nil, err
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if v, ok := kv.shared[name]; ok {
		return v, nil
	}
	v, err := mk()
	if err != nil {
		return nil, err
	}
	if kv.shared == nil {
		kv.shared = map[string]any{}
	}
	kv.shared[name] = v
	return v, nil
}

// Sequence is a durable uint64 counter kept under a meta key. It is not
// safe for concurrent use: its owner calls Next under its own lock.
type Sequence struct {
	key  []byte
	last uint64
}

// Sequence loads the counter named name (MetaInjectSeq, ...); a counter
// never written starts at 0.
func (kv *KV) Sequence(name string) (*Sequence, error) {
	q := &Sequence{key: append([]byte{pfxMeta}, name...)}
	err := kv.View(func(txn *badger.Txn) (err error) {
		q.last, _, err = metaValue(txn, string(q.key))
		return err
	})
	if err != nil {
		return nil, err
	}
	return q, nil
}

// Next advances the counter and stages its new value in txn. If txn does
// not commit, the number is skipped, never handed out twice.
func (q *Sequence) Next(txn *badger.Txn) (uint64, error) {
	q.last++
	return q.last, txn.Set(q.key, binary.BigEndian.AppendUint64(nil, q.last))
}

// SessionOrgs returns the orgs that have used session id session (leased,
// queued for or logged it; PrefixSessionOrg), in id order. Only operators
// need it: every other caller knows its org.
func (kv *KV) SessionOrgs(session string) ([]string, error) {
	prefix := sessionOrgKey(session, "")
	var orgs []string
	err := kv.Iterate(prefix, func(k, _ []byte) error {
		orgs = append(orgs, string(bytes.Clone(k[len(prefix):])))
		return nil
	})
	return orgs, err
}

// errFound stops an iteration at its first key.
var errFound = errors.New("found")

// HasPrefix reports whether any key starts with prefix.
func (kv *KV) HasPrefix(prefix []byte) (bool, error) {
	err := kv.Iterate(prefix, func(_, _ []byte) error { return errFound })
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}

// deleteBatch bounds the deletes of one transaction of DeleteWhere, well
// below Badger's transaction size limit.
const deleteBatch = 1000

// DeleteWhere deletes every key with prefix for which keep is false (nil:
// every key), in transactions of up to a thousand deletes, and returns
// how many it deleted. It is not atomic: an error may leave some
// deleted; a caller that needs all gone calls it again.
func (kv *KV) DeleteWhere(prefix []byte, keep func(k []byte) bool) (int, error) {
	var keys [][]byte
	err := kv.Iterate(prefix, func(k, _ []byte) error {
		if keep == nil || !keep(k) {
			keys = append(keys, bytes.Clone(k))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for len(keys) > 0 {
		batch := keys[:min(len(keys), deleteBatch)]
		keys = keys[len(batch):]
		if err := kv.Update(func(txn *badger.Txn) error {
			for _, k := range batch {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return n, err
		}
		n += len(batch)
	}
	return n, nil
}

// ForgetSessionOrg deletes org from the index of the orgs that use a
// session (PrefixSessionOrg): once org's sessions are gone from this
// store (its data moved to another shard of a cluster).
func (kv *KV) ForgetSessionOrg(org string) (int, error) {
	suffix := append([]byte{0}, org...)
	return kv.DeleteWhere([]byte{PrefixSessionOrg}, func(k []byte) bool { return !bytes.HasSuffix(k, suffix) })
}
