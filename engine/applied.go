package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	badger "github.com/dgraph-io/badger/v4"
)

// AppliedLog is a replica's record of how far it applied one replicated
// write log (a stream of compose/service/cluster), kept in the store it
// applies the log to (PrefixCluster): the last sequence applied, with an
// opaque note of the applier's (its incomplete split writes), and one
// record per keyed write applied, by the write's key. The store owns the
// key layout; the applier owns what the note and the keyed records say.
//
// The sequence and the keyed records of one write commit in one
// transaction (Record), so a restart never finds a write recorded as
// applied without its keyed record, or the reverse. The write's own
// effects commit before, in transactions of their own: the applier makes
// applying a write twice change nothing.
//
// Concurrency: an AppliedLog is safe for concurrent use, but a log has one
// applier; two recording the same stream would overwrite each other.
type AppliedLog struct {
	kv  *KV
	key []byte // PrefixCluster, stream
}

// AppliedKeyed is the record of one keyed write, staged by Record (or
// Put).
type AppliedKeyed struct {
	ID    string // the write's key, unique within the stream
	Value []byte
	// Log is the log the record belongs to; nil: the log that records it.
	// A record of another log commits in the same transaction as the
	// sequence (an applier's record of state shared between the logs a
	// store applies).
	Log *AppliedLog
}

// AppliedLog returns the record of the replicated log named stream. The
// name may not be empty nor hold a 0 byte (keyed records follow it after
// one).
func (kv *KV) AppliedLog(stream string) (*AppliedLog, error) {
	if stream == "" || strings.IndexByte(stream, 0) >= 0 {
		return nil, fmt.Errorf("%w: log name %q", ErrInvalidInput, stream)
	}
	return &AppliedLog{kv: kv, key: append([]byte{PrefixCluster}, stream...)}, nil
}

// Applied returns the last sequence recorded and the note recorded with it
// (a copy, nil when empty); 0 and nil for a log never recorded.
func (l *AppliedLog) Applied() (seq uint64, note []byte, err error) {
	v, err := l.kv.Get(l.key)
	switch {
	case errors.Is(err, ErrNotFound):
		return 0, nil, nil
	case err != nil:
		return 0, nil, err
	case len(v) < 8:
		return 0, nil, fmt.Errorf("engine: applied sequence of %s: %d bytes", l.key[1:], len(v))
	}
	if len(v) > 8 {
		note = v[8:]
	}
	return binary.BigEndian.Uint64(v), note, nil
}

// Record notes seq applied, with note (replacing the previous one), and
// stores keyed, all in one transaction.
func (l *AppliedLog) Record(seq uint64, note []byte, keyed ...AppliedKeyed) error {
	v := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(note)), seq)
	v = append(v, note...)
	return l.kv.Update(func(txn *badger.Txn) error {
		if err := l.stage(txn, keyed); err != nil {
			return err
		}
		return txn.Set(l.key, v)
	})
}

// Put stores keyed (each in its Log, nil: l) in one transaction, without
// a sequence.
func (l *AppliedLog) Put(keyed ...AppliedKeyed) error {
	return l.kv.Update(func(txn *badger.Txn) error { return l.stage(txn, keyed) })
}

func (l *AppliedLog) stage(txn *badger.Txn, keyed []AppliedKeyed) error {
	for _, k := range keyed {
		owner := l
		if k.Log != nil {
			if k.Log.kv != l.kv {
				return errors.New("BUG: engine: a keyed record of another store's log")
			}
			owner = k.Log
		}
		if err := txn.Set(owner.keyedKey(k.ID), k.Value); err != nil {
			return err
		}
	}
	return nil
}

// Keyed returns a copy of the record of keyed write id, or ErrNotFound.
func (l *AppliedLog) Keyed(id string) ([]byte, error) {
	return l.kv.Get(l.keyedKey(id))
}

// EachKeyed calls fn for every keyed record, in key order, from one
// snapshot. v is valid only during the call.
func (l *AppliedLog) EachKeyed(fn func(id string, v []byte) error) error {
	prefix := l.keyedKey("")
	return l.kv.Iterate(prefix, func(k, v []byte) error {
		return fn(string(k[len(prefix):]), v)
	})
}

// forgetBatch bounds the deletes of one transaction of Forget, well below
// Badger's transaction size limit.
const forgetBatch = 1000

// Forget deletes the keyed records of ids (absent ones are no error), in
// transactions of up to a thousand: an error may leave some deleted.
func (l *AppliedLog) Forget(ids []string) error {
	for len(ids) > 0 {
		batch := ids[:min(len(ids), forgetBatch)]
		ids = ids[len(batch):]
		if err := l.kv.Update(func(txn *badger.Txn) error {
			for _, id := range batch {
				if err := txn.Delete(l.keyedKey(id)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// keyedKey is the key of keyed write id: the log's key and a 0 byte.
func (l *AppliedLog) keyedKey(id string) []byte {
	k := make([]byte, 0, len(l.key)+1+len(id))
	return append(append(append(k, l.key...), 0), id...)
}

// EachKeyedPrefix calls fn for every keyed record whose id starts with
// prefix, in key (id) order, from one snapshot. v is valid only during
// the call.
func (l *AppliedLog) EachKeyedPrefix(prefix string, fn func(id string, v []byte) error) error {
	base := l.keyedKey("")
	return l.kv.Iterate(l.keyedKey(prefix), func(k, v []byte) error {
		return fn(string(k[len(base):]), v)
	})
}
