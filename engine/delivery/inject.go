package delivery

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/kgctx/kgctx/engine"
)

// Inject states.
const (
	InjectPending   = "pending"
	InjectDelivered = "delivered"
	InjectAcked     = "acked"
)

// Inject is one block queued for a session (session_memory_injects).
type Inject struct {
	DeliveryID     string    `json:"deliveryId"`
	OrgID          string    `json:"orgId"`
	SessionID      string    `json:"sessionId"`
	AgentID        string    `json:"agentId,omitempty"`
	Text           string    `json:"text"`
	ContentHash    string    `json:"contentHash"`
	ObservationIDs []string  `json:"observationIds"`
	State          string    `json:"state"`
	EnqueuedAt     time.Time `json:"enqueuedAt"`
	DeliveredAt    time.Time `json:"deliveredAt,omitzero"`
	Attempts       int       `json:"attempts"`
	Seq            uint64    `json:"seq"`
}

// ContentHash is the dedupe key of an inject's text.
func ContentHash(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:])
}

// MaxInjectBytes bounds an inject's text.
const MaxInjectBytes = 256 << 10

// maxObservationIDs bounds the observation ids an inject lists (as many as
// an injection log may).
const maxObservationIDs = 10_000

// Enqueue adds in to its session's queue (enqueueMemoryInject). It is
// idempotent on (sessionId, contentHash): a text already enqueued for the
// session returns (row, true) with nothing inserted.
func (s *Store) Enqueue(in Inject, now time.Time) (Inject, bool, error) {
	if err := engine.ValidateID(in.SessionID); err != nil {
		return in, false, fmt.Errorf("sessionId: %w", err)
	}
	if err := engine.ValidateID(in.OrgID); err != nil {
		return in, false, fmt.Errorf("orgId: %w", err)
	}
	switch {
	case strings.TrimSpace(in.Text) == "":
		return in, false, fmt.Errorf("%w: text is empty", engine.ErrInvalidInput)
	case len(in.Text) > MaxInjectBytes:
		return in, false, fmt.Errorf("%w: text is over %d bytes", engine.ErrInvalidInput, MaxInjectBytes)
	case !utf8.ValidString(in.Text):
		return in, false, fmt.Errorf("%w: text is not valid UTF-8", engine.ErrInvalidInput)
	case len(in.ObservationIDs) > maxObservationIDs:
		return in, false, fmt.Errorf("%w: too many observationIds", engine.ErrInvalidInput)
	}
	in.ContentHash = ContentHash(in.Text)
	if in.ObservationIDs == nil {
		in.ObservationIDs = []string{}
	}
	dup := false
	err := s.update(func(txn *badger.Txn) error {
		if _, err := txn.Get(hashKey(in.OrgID, in.SessionID, in.ContentHash)); err == nil {
			dup = true
			return nil
		} else if err != badger.ErrKeyNotFound {
			return err
		}
		seq, err := s.seq.Next(txn)
		if err != nil {
			return err
		}
		in.Seq, in.State, in.EnqueuedAt, in.Attempts, in.DeliveryID = seq, InjectPending, now.UTC(), 0, ""
		if err := setJSON(txn, injectKey(in.OrgID, in.SessionID, in.Seq), &in); err != nil {
			return err
		}
		if err := engine.MarkSession(txn, in.OrgID, in.SessionID); err != nil {
			return err
		}
		return txn.Set(hashKey(in.OrgID, in.SessionID, in.ContentHash), binary.BigEndian.AppendUint64(nil, in.Seq))
	})
	return in, dup, err
}

// ClaimInject hands org's session's next inject to worker, who must hold
// the session's live lease (claimPendingInjectForSession): the in-flight
// one again if it was never acked (attempts grows), else the oldest
// pending one, now in flight with a fresh deliveryId. (nil, nil) when the
// queue is empty; ErrNotHolder for anyone but the lease holder.
func (s *Store) ClaimInject(org, session, worker string, now time.Time) (*Inject, error) {
	return s.ClaimInjectIDs(org, session, worker, now, nil)
}

// ClaimInjectIDs is ClaimInject drawing a new deliveryId from ids (nil:
// random), so that the replicas of a cluster give the same one. With ids,
// now is the claim's unique time in a replicated log: the same claim
// applied twice hands out the same inject and counts one attempt.
func (s *Store) ClaimInjectIDs(org, session, worker string, now time.Time, ids *engine.IDSource) (*Inject, error) {
	var out *Inject
	err := s.update(func(txn *badger.Txn) error {
		var l Lease
		found, err := getJSON(txn, leaseKey(org, session), &l)
		if err != nil {
			return err
		}
		if !found || l.WorkerID != worker || !l.Live(now) {
			return ErrNotHolder
		}
		in, key, err := firstInject(txn, org, session)
		if err != nil || in == nil {
			return err
		}
		if ids != nil && in.State == InjectDelivered && in.DeliveredAt.Equal(now.UTC()) {
			// The same logged claim applied again (a replica that crashed
			// before recording it): the log's time is the claim's own.
			out = in
			return nil
		}
		if in.State == InjectPending {
			in.State = InjectDelivered
			in.DeliveryID = ids.ID("dlv")
		}
		in.Attempts++
		in.DeliveredAt = now.UTC()
		if err := setJSON(txn, key, in); err != nil {
			return err
		}
		out = in
		return nil
	})
	return out, err
}

// firstInject returns the oldest inject of the session that is not acked
// (acked ones are deleted, so it is the first record).
func firstInject(txn *badger.Txn, org, session string) (*Inject, []byte, error) {
	opts := badger.DefaultIteratorOptions
	opts.Prefix = injectPrefix(org, session)
	opts.PrefetchValues = false
	it := txn.NewIterator(opts)
	defer it.Close()
	it.Rewind()
	if !it.Valid() {
		return nil, nil, nil
	}
	item := it.Item()
	var in Inject
	if err := item.Value(func(b []byte) error { return json.Unmarshal(b, &in) }); err != nil {
		return nil, nil, err
	}
	return &in, bytes.Clone(item.Key()), nil
}

// AckInject consumes the session's in-flight inject (ackMemoryInject);
// ErrNotInFlight for any other delivery id. The content hash is kept, so
// the same text is never enqueued for the session again.
func (s *Store) AckInject(org, session, deliveryID string) error {
	return s.update(func(txn *badger.Txn) error {
		in, key, err := firstInject(txn, org, session)
		if err != nil {
			return err
		}
		if in == nil || in.State != InjectDelivered || in.DeliveryID != deliveryID {
			return ErrNotInFlight
		}
		return txn.Delete(key)
	})
}

// PendingInjects returns org's session's injects not yet acked, oldest
// first.
func (s *Store) PendingInjects(org, session string) ([]Inject, error) {
	var out []Inject
	err := s.kv.Iterate(injectPrefix(org, session), func(_, v []byte) error {
		var in Inject
		if err := json.Unmarshal(v, &in); err != nil {
			return err
		}
		out = append(out, in)
		return nil
	})
	return out, err
}

// Depth counts, over every org, the leases held at now (not expired) and
// the injects not yet acked: the gauges an operator alerts on. It reads
// every lease and inject record (a scrape's cost, not a request's).
func (s *Store) Depth(now time.Time) (leases, injects int, err error) {
	err = s.kv.Iterate([]byte{engine.PrefixLease}, func(_, v []byte) error {
		var l Lease
		if err := json.Unmarshal(v, &l); err != nil {
			return err
		}
		if l.ExpiresAt.After(now) {
			leases++
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	err = s.kv.Iterate([]byte{engine.PrefixInject}, func(_, _ []byte) error {
		injects++
		return nil
	})
	return leases, injects, err
}
