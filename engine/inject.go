package engine

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
)

// Lease is a worker's claim on a session (the session lock): only the
// holder of a live lease receives the session's injects.
type Lease struct {
	SessionID  string          `json:"sessionId"`
	WorkerID   string          `json:"workerId"`
	OrgID      string          `json:"orgId"`
	ProjectID  string          `json:"projectId,omitempty"`
	AgentID    string          `json:"agentId,omitempty"`
	WorkType   string          `json:"workType,omitempty"`
	Capability LeaseCapability `json:"capability"`
	ClaimedAt  time.Time       `json:"claimedAt"`
	ExpiresAt  time.Time       `json:"expiresAt"`
	// LeaseSeconds is the length the lease was claimed (or last
	// refreshed) with; a refresh that names none renews for as long.
	LeaseSeconds int `json:"leaseSeconds,omitempty"`
}

// LeaseCapability is what the worker's agent runtime can do.
type LeaseCapability struct {
	SupportsMessageInjection bool `json:"supportsMessageInjection"`
}

// Live reports whether the lease has not expired at now.
func (l *Lease) Live(now time.Time) bool { return now.Before(l.ExpiresAt) }

// Length is the lease's length: what it was claimed or last refreshed
// for. A refresh without a length of its own renews for this long.
func (l *Lease) Length() time.Duration {
	if l.LeaseSeconds > 0 {
		return time.Duration(l.LeaseSeconds) * time.Second
	}
	// Leases written before LeaseSeconds was kept: their first term.
	if d := l.ExpiresAt.Sub(l.ClaimedAt); d > 0 && d <= MaxLease {
		return d.Round(time.Second)
	}
	return 30 * time.Second
}

// MaxLease bounds a lease's duration.
const MaxLease = time.Hour

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

// Delivery errors.
var (
	// ErrLeaseHeld: another worker holds a live lease on the session.
	ErrLeaseHeld = fmt.Errorf("%w: the session is leased by another worker", ErrConflict)
	// ErrNotHolder: the worker does not hold the session's live lease.
	ErrNotHolder = fmt.Errorf("%w: the worker does not hold the session's lease", ErrConflict)
	// ErrNotInFlight: the delivery id is not the session's in-flight inject.
	ErrNotInFlight = fmt.Errorf("%w: not the in-flight inject of the session", ErrConflict)
)

// Keys (sessionKey): 's' org 0 session 0 -> lease; 'q' org 0 session 0
// seq -> inject; 'h' org 0 session 0 content hash -> seq (dedupe, kept
// after ack). A session id is scoped by its org: two orgs using the same id
// have two sessions that never meet.
func leaseKey(org, session string) []byte { return sessionKey(pfxLease, org, session) }

func injectPrefix(org, session string) []byte { return sessionKey(pfxInject, org, session) }

func injectKey(org, session string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(injectPrefix(org, session), seq)
}

func hashKey(org, session, hash string) []byte {
	return append(sessionKey(pfxInjectHash, org, session), hash...)
}

// ContentHash is the dedupe key of an inject's text.
func ContentHash(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:])
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

// update runs fn in one Badger transaction under the delivery lock, so
// lease and queue transitions are serialised and atomic.
func (s *Store) update(fn func(txn *badger.Txn) error) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	s.dmu.Lock()
	defer s.dmu.Unlock()
	return s.db.Update(fn)
}

// ClaimLease gives worker the session's lease for d: a new lease, the same
// worker claiming again, or a takeover of a lapsed lease. ErrLeaseHeld
// when another worker's lease is live.
func (s *Store) ClaimLease(l Lease, d time.Duration, now time.Time) (Lease, error) {
	if d <= 0 || d > MaxLease {
		return l, fmt.Errorf("%w: lease of %s: must be more than 0 and at most %s", ErrInvalidInput, d, MaxLease)
	}
	for _, f := range []struct{ name, v string }{{"sessionId", l.SessionID}, {"workerId", l.WorkerID}, {"orgId", l.OrgID}} {
		if err := ValidateID(f.v); err != nil {
			return l, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	err := s.update(func(txn *badger.Txn) error {
		var cur Lease
		found, err := getJSON(txn, leaseKey(l.OrgID, l.SessionID), &cur)
		if err != nil {
			return err
		}
		if found && cur.WorkerID != l.WorkerID && cur.Live(now) {
			return ErrLeaseHeld
		}
		l.ClaimedAt, l.ExpiresAt, l.LeaseSeconds = now.UTC(), now.Add(d).UTC(), int(d/time.Second)
		if err := markSession(txn, l.OrgID, l.SessionID); err != nil {
			return err
		}
		return setJSON(txn, leaseKey(l.OrgID, l.SessionID), &l)
	})
	return l, err
}

// RefreshLease extends worker's lease on org's session (the lock-refresh
// beat) and returns it. d is the new lease length; 0 keeps the length the
// lease was claimed (or last refreshed) with. ErrNotHolder when the worker
// does not hold the lease (a lapsed lease nobody took over may still be
// refreshed by its holder).
func (s *Store) RefreshLease(org, session, worker string, d time.Duration, now time.Time) (Lease, error) {
	var l Lease
	if d < 0 || d > MaxLease {
		return l, fmt.Errorf("%w: lease of %s: must be more than 0 and at most %s", ErrInvalidInput, d, MaxLease)
	}
	err := s.update(func(txn *badger.Txn) error {
		found, err := getJSON(txn, leaseKey(org, session), &l)
		if err != nil {
			return err
		}
		if !found || l.WorkerID != worker {
			return ErrNotHolder
		}
		if d == 0 {
			d = l.Length()
		}
		l.ExpiresAt = now.Add(d).UTC()
		l.LeaseSeconds = int(d / time.Second)
		return setJSON(txn, leaseKey(org, session), &l)
	})
	return l, err
}

// LeaseOf returns org's session's lease (ErrNotFound if never claimed).
func (s *Store) LeaseOf(org, session string) (Lease, error) {
	var l Lease
	if err := s.checkOpen(); err != nil {
		return l, err
	}
	err := s.db.View(func(txn *badger.Txn) error {
		found, err := getJSON(txn, leaseKey(org, session), &l)
		if err == nil && !found {
			return ErrNotFound
		}
		return err
	})
	return l, err
}

// DeleteLease removes org's session's lease (forgetting a finished
// session).
func (s *Store) DeleteLease(org, session string) error {
	return s.update(func(txn *badger.Txn) error { return txn.Delete(leaseKey(org, session)) })
}

// MaxInjectBytes bounds an inject's text.
const MaxInjectBytes = 256 << 10

// Enqueue adds in to its session's queue (enqueueMemoryInject). It is
// idempotent on (sessionId, contentHash): a text already enqueued for the
// session returns (row, true) with nothing inserted.
func (s *Store) Enqueue(in Inject, now time.Time) (Inject, bool, error) {
	if err := ValidateID(in.SessionID); err != nil {
		return in, false, fmt.Errorf("sessionId: %w", err)
	}
	if err := ValidateID(in.OrgID); err != nil {
		return in, false, fmt.Errorf("orgId: %w", err)
	}
	switch {
	case strings.TrimSpace(in.Text) == "":
		return in, false, fmt.Errorf("%w: text is empty", ErrInvalidInput)
	case len(in.Text) > MaxInjectBytes:
		return in, false, fmt.Errorf("%w: text is over %d bytes", ErrInvalidInput, MaxInjectBytes)
	case !utf8.ValidString(in.Text):
		return in, false, fmt.Errorf("%w: text is not valid UTF-8", ErrInvalidInput)
	case len(in.ObservationIDs) > maxLogIDs:
		return in, false, fmt.Errorf("%w: too many observationIds", ErrInvalidInput)
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
		s.injectSeq++
		in.Seq, in.State, in.EnqueuedAt, in.Attempts, in.DeliveryID = s.injectSeq, InjectPending, now.UTC(), 0, ""
		if err := setJSON(txn, injectKey(in.OrgID, in.SessionID, in.Seq), &in); err != nil {
			return err
		}
		if err := markSession(txn, in.OrgID, in.SessionID); err != nil {
			return err
		}
		if err := txn.Set([]byte(keyMetaInjectSeq), binary.BigEndian.AppendUint64(nil, s.injectSeq)); err != nil {
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
		if in.State == InjectPending {
			in.State = InjectDelivered
			in.DeliveryID = newDeliveryID()
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
	err := s.iterate(injectPrefix(org, session), func(_, v []byte) error {
		var in Inject
		if err := json.Unmarshal(v, &in); err != nil {
			return err
		}
		out = append(out, in)
		return nil
	})
	return out, err
}

func newDeliveryID() string {
	u := newUUID()
	return "dlv_" + obsIDEncoding.EncodeToString(u[:10])
}
