package engine

import (
	"errors"

	badger "github.com/dgraph-io/badger/v4"
)

// ID returns the store's identity: a random UUID made the first time it is
// asked for and kept in the store's metadata (keyMetaID), so it names this
// store whatever directory it is opened from. A tool that keeps state about
// a store outside it (kgctx index) binds that state to the ID. Safe for
// concurrent use.
func (s *Store) ID() (string, error) {
	v, err := s.kv.Shared(keyMetaID, func() (any, error) {
		var id string
		err := s.db.Update(func(txn *badger.Txn) error {
			item, err := txn.Get([]byte(keyMetaID))
			if err == nil {
				b, err := item.ValueCopy(nil)
				id = string(b)
				return err
			}
			if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			id = newUUID().String()
			return txn.Set([]byte(keyMetaID), []byte(id))
		})
		return id, err
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}
