package engine

import (
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// The aux key space holds records other packages own (index snapshots,
// watermarks) so that they live and die with the store's Badger files. Keys
// are namespaced by the caller (e.g. "hnsw/...") and stored under 'x'.

// AuxWriter stages aux writes; nothing is visible until the batch commits.
type AuxWriter struct {
	wb  *badger.WriteBatch
	err error
}

// Set stages key = val. Both are copied.
func (w *AuxWriter) Set(key, val []byte) {
	if w.err == nil {
		w.err = w.wb.Set(auxKey(key), append([]byte(nil), val...))
	}
}

// Delete stages the removal of key.
func (w *AuxWriter) Delete(key []byte) {
	if w.err == nil {
		w.err = w.wb.Delete(auxKey(key))
	}
}

func auxKey(k []byte) []byte {
	out := make([]byte, 1+len(k))
	out[0] = pfxAux
	copy(out[1:], k)
	return out
}

// WriteAux runs fn and commits what it staged. The batch may span several
// Badger transactions: callers that need atomicity write a watermark last.
func (s *Store) WriteAux(fn func(w *AuxWriter) error) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	w := &AuxWriter{wb: wb}
	if err := fn(w); err != nil {
		return err
	}
	if w.err != nil {
		return fmt.Errorf("engine: aux write: %w", w.err)
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("engine: aux write: %w", err)
	}
	return nil
}

// GetAux returns a copy of the aux value at key, or ErrNotFound.
func (s *Store) GetAux(key []byte) ([]byte, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	return s.get(auxKey(key))
}

// get returns a copy of the value at key, or ErrNotFound.
func (s *Store) get(key []byte) ([]byte, error) {
	var out []byte
	err := s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if err != nil {
			return err
		}
		out, err = item.ValueCopy(nil)
		return err
	})
	if err == badger.ErrKeyNotFound {
		return nil, ErrNotFound
	}
	return out, err
}

// EachAux calls fn for every aux key starting with prefix (the prefix as the
// caller wrote it, without the store's namespace byte). k and v are valid
// only during the call.
func (s *Store) EachAux(prefix []byte, fn func(k, v []byte) error) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	return s.iterate(auxKey(prefix), func(k, v []byte) error { return fn(k[1:], v) })
}
