package engine

import (
	"bytes"
	"encoding/json"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
)

// Sessions are scoped by org. A session id is chosen by the agent platform
// and is not secret, so a global namespace would let one org squat or
// probe another's ids; every key that belongs to a session (its lease, its
// inject queue and dedupe hashes, its injection logs) starts with the org,
// and the in-memory state above the store is keyed the same way.
//
// One index runs the other way: 'k' session 0 org -> (empty), written with
// a session's first lease, inject or log, so that an operator (whose token
// names no org) can find the orgs that use a session id without scanning
// every log.

// SessionKey is p org 0 session 0: the prefix of everything of org's
// session in key space p (PrefixLease, PrefixInject, PrefixInjectHash,
// PrefixLog). ValidateID keeps 0 out of both ids, so the prefix of one
// session is never the prefix of another.
func SessionKey(p byte, org, session string) []byte {
	k := make([]byte, 0, 3+len(org)+len(session)+16)
	k = append(k, p)
	k = append(k, org...)
	k = append(k, 0)
	k = append(k, session...)
	return append(k, 0)
}

func sessionOrgKey(session, org string) []byte {
	k := make([]byte, 0, 2+len(session)+len(org))
	k = append(k, PrefixSessionOrg)
	k = append(k, session...)
	k = append(k, 0)
	return append(k, org...)
}

// MarkSession records in txn that org uses session (PrefixSessionOrg;
// idempotent). Every first write of a session's record calls it.
func MarkSession(txn *badger.Txn, org, session string) error {
	return txn.Set(sessionOrgKey(session, org), nil)
}

// migrateSessionKeys moves the session key spaces of a store written
// before sessions were scoped by org (store version 3 and older: 'l'
// session 0 ..., 's' session, 'q' session 0 seq, 'h' session 0 hash) to
// the org-scoped layout, and writes the session -> org index. Records carry
// their org (logs, leases and injects hold orgId; a dedupe hash takes the
// org of its session's other records, which was unique then: a session
// belonged to one org). A hash whose session has no other record left is
// dropped: nothing can be enqueued for it without a lease, which would
// record the org anew.
//
// It is idempotent, so a migration interrupted between its batches is
// finished by the next open: a key already in the new layout is
// recognised (it starts with the SessionKey its own record names, or, for
// a hash, holds two zero bytes) and left alone.
func migrateSessionKeys(db *badger.DB) error {
	type rec struct {
		OrgID     string `json:"orgId"`
		SessionID string `json:"sessionId"`
	}
	type move struct {
		old, new, val []byte
	}
	var moves []move
	orgOf := map[string]string{} // session -> org, from its records
	type oldHash struct{ key, val []byte }
	var hashes []oldHash
	err := db.View(func(txn *badger.Txn) error {
		for _, p := range []byte{PrefixLog, PrefixLease, PrefixInject, PrefixInjectHash} {
			opts := badger.DefaultIteratorOptions
			opts.Prefix = []byte{p}
			it := txn.NewIterator(opts)
			for it.Rewind(); it.Valid(); it.Next() {
				item := it.Item()
				k := item.KeyCopy(nil)
				v, err := item.ValueCopy(nil)
				if err != nil {
					it.Close()
					return err
				}
				if p == PrefixInjectHash {
					if bytes.Count(k, []byte{0}) < 2 {
						hashes = append(hashes, oldHash{k, v})
					}
					continue
				}
				var r rec
				if err := json.Unmarshal(v, &r); err != nil || r.OrgID == "" || r.SessionID == "" {
					it.Close()
					return fmt.Errorf("%w: session record %q: not a lease, inject or log", ErrCorrupt, k)
				}
				orgOf[r.SessionID] = r.OrgID
				prefix := SessionKey(p, r.OrgID, r.SessionID)
				if bytes.HasPrefix(k, prefix) {
					continue // already moved
				}
				// The old key is p session [0 tail]; the tail (time and id
				// of a log, sequence of an inject) carries over.
				tail := k[1+len(r.SessionID):]
				if len(tail) > 0 {
					tail = tail[1:]
				}
				moves = append(moves, move{k, append(prefix, tail...), v})
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, h := range hashes {
		session, hash, _ := bytes.Cut(h.key[1:], []byte{0})
		if org, ok := orgOf[string(session)]; ok {
			moves = append(moves, move{h.key, append(SessionKey(PrefixInjectHash, org, string(session)), hash...), h.val})
		} else {
			moves = append(moves, move{old: h.key})
		}
	}
	if len(moves) == 0 && len(orgOf) == 0 {
		return nil
	}
	wb := db.NewWriteBatch()
	defer wb.Cancel()
	for session, org := range orgOf {
		if err := wb.Set(sessionOrgKey(session, org), nil); err != nil {
			return err
		}
	}
	for _, m := range moves {
		if m.new != nil {
			if err := wb.Set(m.new, m.val); err != nil {
				return err
			}
		}
		if err := wb.Delete(m.old); err != nil {
			return err
		}
	}
	return wb.Flush()
}
