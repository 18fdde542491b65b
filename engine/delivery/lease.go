package delivery

import (
	"fmt"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/kgctx/kgctx/engine"
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

// ClaimLease gives worker the session's lease for d: a new lease, the same
// worker claiming again, or a takeover of a lapsed lease. ErrLeaseHeld
// when another worker's lease is live.
func (s *Store) ClaimLease(l Lease, d time.Duration, now time.Time) (Lease, error) {
	if d <= 0 || d > MaxLease {
		return l, fmt.Errorf("%w: lease of %s: must be more than 0 and at most %s", engine.ErrInvalidInput, d, MaxLease)
	}
	for _, f := range []struct{ name, v string }{{"sessionId", l.SessionID}, {"workerId", l.WorkerID}, {"orgId", l.OrgID}} {
		if err := engine.ValidateID(f.v); err != nil {
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
		if err := engine.MarkSession(txn, l.OrgID, l.SessionID); err != nil {
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
		return l, fmt.Errorf("%w: lease of %s: must be more than 0 and at most %s", engine.ErrInvalidInput, d, MaxLease)
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

// LeaseOf returns org's session's lease (engine.ErrNotFound if never
// claimed).
func (s *Store) LeaseOf(org, session string) (Lease, error) {
	var l Lease
	err := s.kv.View(func(txn *badger.Txn) error {
		found, err := getJSON(txn, leaseKey(org, session), &l)
		if err == nil && !found {
			return engine.ErrNotFound
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
