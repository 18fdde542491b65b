package delivery

import (
	"encoding/binary"
	"encoding/json"
	"sync"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/kgctx/kgctx/engine"
)

// Store is the leases and inject queues of an engine.Store.
type Store struct {
	kv  *engine.KV
	mu  sync.Mutex       // serialises lease and inject-queue transitions
	seq *engine.Sequence // last inject sequence (guarded by mu)
}

// New returns st's delivery store: the same one for every call over st.
func New(st *engine.Store) (*Store, error) {
	kv := st.KV()
	v, err := kv.Shared("delivery", func() (any, error) {
		seq, err := kv.Sequence(engine.MetaInjectSeq)
		if err != nil {
			return nil, err
		}
		return &Store{kv: kv, seq: seq}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*Store), nil
}

// update runs fn in one Badger transaction under the delivery lock, so
// lease and queue transitions are serialised and atomic.
func (s *Store) update(fn func(txn *badger.Txn) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kv.Update(fn)
}

// Keys (engine.SessionKey): a session id is scoped by its org, so two
// orgs using the same id have two sessions that never meet.
func leaseKey(org, session string) []byte { return engine.SessionKey(engine.PrefixLease, org, session) }

func injectPrefix(org, session string) []byte {
	return engine.SessionKey(engine.PrefixInject, org, session)
}

func injectKey(org, session string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(injectPrefix(org, session), seq)
}

func hashKey(org, session, hash string) []byte {
	return append(engine.SessionKey(engine.PrefixInjectHash, org, session), hash...)
}

func getJSON(txn *badger.Txn, key []byte, v any) (bool, error) {
	item, err := txn.Get(key)
	if err == badger.ErrKeyNotFound {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return true, item.Value(func(b []byte) error { return json.Unmarshal(b, v) })
}

func setJSON(txn *badger.Txn, key []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return txn.Set(key, b)
}

// DropOrg deletes every lease, queued inject and dedupe hash of org's
// sessions (its data moved to another shard of a cluster), and returns
// how many records it deleted.
func (s *Store) DropOrg(org string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total := 0
	for _, p := range []byte{engine.PrefixLease, engine.PrefixInject, engine.PrefixInjectHash} {
		n, err := s.kv.DeleteWhere(orgPrefix(p, org), nil)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// orgPrefix is p org 0: the prefix of every session of org in key space p.
func orgPrefix(p byte, org string) []byte {
	k := engine.SessionKey(p, org, "")
	return k[:len(k)-1]
}
