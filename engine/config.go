package engine

import (
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// Configuration documents (policies, budgets, recall matrix, per-project
// memory configs, ...) are opaque values under (kind, key). Their owners
// encode them; the store only keeps them durable.

func configKey(kind, key string) []byte {
	k := make([]byte, 0, 2+len(kind)+len(key))
	k = append(k, pfxConfig)
	k = append(k, kind...)
	k = append(k, 0)
	return append(k, key...)
}

// PutConfig stores val under (kind, key), replacing any previous value.
func (s *Store) PutConfig(kind, key string, val []byte) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(configKey(kind, key), val) }); err != nil {
		return fmt.Errorf("engine: put config %s/%s: %w", kind, key, err)
	}
	return nil
}

// GetConfig returns a copy of the value under (kind, key), or ErrNotFound.
func (s *Store) GetConfig(kind, key string) ([]byte, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	out, err := s.get(configKey(kind, key))
	if err != nil && err != ErrNotFound {
		return nil, fmt.Errorf("engine: get config %s/%s: %w", kind, key, err)
	}
	return out, err
}

// DeleteConfig removes (kind, key); deleting an absent key is not an error.
func (s *Store) DeleteConfig(kind, key string) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	return s.db.Update(func(txn *badger.Txn) error { return txn.Delete(configKey(kind, key)) })
}

// EachConfig calls fn with every key and value of kind. v is only valid
// during the call.
func (s *Store) EachConfig(kind string, fn func(key string, v []byte) error) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	prefix := configKey(kind, "")
	return s.iterate(prefix, func(k, v []byte) error { return fn(string(k[len(prefix):]), v) })
}
