package configstore

import (
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/kgctx/kgctx/engine"
)

// Store is the configuration documents of an engine.Store.
type Store struct {
	kv *engine.KV
}

// New returns the configuration documents of st.
func New(st *engine.Store) *Store { return &Store{kv: st.KV()} }

func configKey(kind, key string) []byte {
	k := make([]byte, 0, 2+len(kind)+len(key))
	k = append(k, engine.PrefixConfig)
	k = append(k, kind...)
	k = append(k, 0)
	return append(k, key...)
}

// Put stores val under (kind, key), replacing any previous value.
func (s *Store) Put(kind, key string, val []byte) error {
	if err := s.kv.Update(func(txn *badger.Txn) error { return txn.Set(configKey(kind, key), val) }); err != nil {
		return fmt.Errorf("configstore: put %s/%s: %w", kind, key, err)
	}
	return nil
}

// Get returns a copy of the value under (kind, key), or engine.ErrNotFound.
func (s *Store) Get(kind, key string) ([]byte, error) {
	out, err := s.kv.Get(configKey(kind, key))
	if err != nil && !errors.Is(err, engine.ErrNotFound) {
		return nil, fmt.Errorf("configstore: get %s/%s: %w", kind, key, err)
	}
	return out, err
}

// Delete removes (kind, key); deleting an absent key is not an error.
func (s *Store) Delete(kind, key string) error {
	return s.kv.Update(func(txn *badger.Txn) error { return txn.Delete(configKey(kind, key)) })
}

// Each calls fn with every key and value of kind, in key order. v is only
// valid during the call.
func (s *Store) Each(kind string, fn func(key string, v []byte) error) error {
	prefix := configKey(kind, "")
	return s.kv.Iterate(prefix, func(k, v []byte) error { return fn(string(k[len(prefix):]), v) })
}
