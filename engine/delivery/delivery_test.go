package delivery

import (
	"errors"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/enginetest"
)

// open opens a store for the test (checked when it ends) and returns its
// delivery store.
func open(t *testing.T) (*Store, *engine.Store, string) {
	t.Helper()
	st, dir := enginetest.OpenDir(t, nil)
	return mustNew(t, st), st, dir
}

// reopen closes st and opens its directory again, as a restart does.
func reopen(t *testing.T, st *engine.Store, dir string) (*Store, *engine.Store) {
	t.Helper()
	st = enginetest.Reopen(t, st, dir, nil)
	return mustNew(t, st), st
}

func mustNew(t *testing.T, st *engine.Store) *Store {
	t.Helper()
	s, err := New(st)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLeases(t *testing.T) {
	s, st, dir := open(t)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	l := Lease{SessionID: "ses_1", WorkerID: "w1", OrgID: "org_a"}
	if _, err := s.ClaimLease(l, 30*time.Second, now); err != nil {
		t.Fatal(err)
	}
	l2 := l
	l2.WorkerID = "w2"
	if _, err := s.ClaimLease(l2, 30*time.Second, now.Add(10*time.Second)); !errors.Is(err, ErrLeaseHeld) || !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("second worker while live: %v", err)
	}
	if _, err := s.RefreshLease("org_a", "ses_1", "w2", time.Minute, now); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("non-holder refresh: %v", err)
	}
	got, err := s.RefreshLease("org_a", "ses_1", "w1", time.Minute, now.Add(20*time.Second))
	if err != nil || !got.ExpiresAt.Equal(now.Add(80*time.Second)) {
		t.Fatalf("refresh: %+v %v", got, err)
	}
	for _, d := range []time.Duration{0, -time.Second, time.Hour + time.Second} {
		if _, err := s.ClaimLease(l, d, now); !errors.Is(err, engine.ErrInvalidInput) {
			t.Fatalf("lease %s: %v", d, err)
		}
	}
	// Session ids are scoped by org: org_b's ses_1 is another session,
	// which org_a's live lease does not block and which holds no lease of
	// org_a's.
	other := l
	other.OrgID, other.WorkerID = "org_b", "w9"
	if _, err := s.ClaimLease(other, time.Minute, now.Add(10*time.Second)); err != nil {
		t.Fatalf("another org's session of the same id: %v", err)
	}
	if _, err := s.RefreshLease("org_b", "ses_1", "w1", 0, now); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("org_a's worker refreshed org_b's session: %v", err)
	}
	if orgs, err := st.KV().SessionOrgs("ses_1"); err != nil || len(orgs) != 2 || orgs[0] != "org_a" || orgs[1] != "org_b" {
		t.Fatalf("SessionOrgs: %v %v", orgs, err)
	}
	// Durable across a restart; a lapsed lease can be taken over.
	s, _ = reopen(t, st, dir)
	if cur, err := s.LeaseOf("org_a", "ses_1"); err != nil || cur.WorkerID != "w1" {
		t.Fatalf("after reopen: %+v %v", cur, err)
	}
	if got, err := s.ClaimLease(l2, 30*time.Second, now.Add(2*time.Minute)); err != nil || got.WorkerID != "w2" {
		t.Fatalf("takeover of a lapsed lease: %+v %v", got, err)
	}
}

func TestInjectQueue(t *testing.T) {
	s, st, dir := open(t)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	if _, err := s.ClaimLease(Lease{SessionID: "ses_1", WorkerID: "w1", OrgID: "org_a"}, time.Minute, now); err != nil {
		t.Fatal(err)
	}
	a, dup, err := s.Enqueue(Inject{SessionID: "ses_1", OrgID: "org_a", Text: "block A", ObservationIDs: []string{"obs_1"}}, now)
	if err != nil || dup || a.State != InjectPending {
		t.Fatalf("enqueue: %+v %v %v", a, dup, err)
	}
	if _, dup, _ := s.Enqueue(Inject{SessionID: "ses_1", OrgID: "org_a", Text: "block A"}, now); !dup {
		t.Fatal("duplicate inserted")
	}
	s.Enqueue(Inject{SessionID: "ses_1", OrgID: "org_a", Text: "block B"}, now)
	// org_b's ses_1 is another queue: its text never reaches org_a's.
	if _, dup, err := s.Enqueue(Inject{SessionID: "ses_1", OrgID: "org_b", Text: "block A"}, now); err != nil || dup {
		t.Fatalf("another org's session of the same id: %v dup=%v", err, dup)
	}
	if q, _ := s.PendingInjects("org_b", "ses_1"); len(q) != 1 {
		t.Fatalf("org_b's queue: %+v", q)
	}
	if in, err := s.ClaimInject("org_a", "ses_1", "w2", now); !errors.Is(err, ErrNotHolder) || in != nil {
		t.Fatalf("non-holder claimed: %v", err)
	}
	d1, err := s.ClaimInject("org_a", "ses_1", "w1", now)
	if err != nil || d1 == nil || d1.Text != "block A" || d1.Attempts != 1 || d1.DeliveryID == "" {
		t.Fatalf("claim: %+v %v", d1, err)
	}
	// Unacked: the same one again (at most one in flight), across a restart.
	s, _ = reopen(t, st, dir)
	d2, _ := s.ClaimInject("org_a", "ses_1", "w1", now.Add(time.Second))
	if d2.DeliveryID != d1.DeliveryID || d2.Attempts != 2 {
		t.Fatalf("re-delivery: %+v", d2)
	}
	if err := s.AckInject("org_a", "ses_1", "dlv_wrong"); !errors.Is(err, ErrNotInFlight) {
		t.Fatalf("wrong ack: %v", err)
	}
	if err := s.AckInject("org_a", "ses_1", d1.DeliveryID); err != nil {
		t.Fatal(err)
	}
	if err := s.AckInject("org_a", "ses_1", d1.DeliveryID); !errors.Is(err, ErrNotInFlight) {
		t.Fatalf("double ack: %v", err)
	}
	d3, _ := s.ClaimInject("org_a", "ses_1", "w1", now)
	if d3 == nil || d3.Text != "block B" {
		t.Fatalf("FIFO: %+v", d3)
	}
	s.AckInject("org_a", "ses_1", d3.DeliveryID)
	if d4, err := s.ClaimInject("org_a", "ses_1", "w1", now); d4 != nil || err != nil {
		t.Fatalf("empty queue: %+v %v", d4, err)
	}
	// An acked text stays a duplicate.
	if _, dup, _ := s.Enqueue(Inject{SessionID: "ses_1", OrgID: "org_a", Text: "block A"}, now); !dup {
		t.Fatal("acked text enqueued again")
	}
	// A lapsed lease receives nothing.
	s.Enqueue(Inject{SessionID: "ses_1", OrgID: "org_a", Text: "block C"}, now)
	if _, err := s.ClaimInject("org_a", "ses_1", "w1", now.Add(2*time.Minute)); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("lapsed holder claimed: %v", err)
	}
}

// A refresh without a length renews for the length the lease was claimed
// with, not a fixed 30 s; a refresh with one renews for it, and later
// refreshes keep that.
func TestRefreshKeepsLeaseLength(t *testing.T) {
	s, st, dir := open(t)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	l := Lease{SessionID: "ses_1", WorkerID: "w1", OrgID: "org_a"}
	if _, err := s.ClaimLease(l, 120*time.Second, now); err != nil {
		t.Fatal(err)
	}
	got, err := s.RefreshLease("org_a", "ses_1", "w1", 0, now.Add(10*time.Second))
	if err != nil || !got.ExpiresAt.Equal(now.Add(130*time.Second)) {
		t.Fatalf("refresh without a length: %+v %v", got, err)
	}
	got, err = s.RefreshLease("org_a", "ses_1", "w1", 45*time.Second, now.Add(20*time.Second))
	if err != nil || !got.ExpiresAt.Equal(now.Add(65*time.Second)) {
		t.Fatalf("refresh with a length: %+v %v", got, err)
	}
	s, _ = reopen(t, st, dir)
	got, err = s.RefreshLease("org_a", "ses_1", "w1", 0, now.Add(30*time.Second))
	if err != nil || !got.ExpiresAt.Equal(now.Add(75*time.Second)) {
		t.Fatalf("refresh after a restart keeps the last length: %+v %v", got, err)
	}
	if _, err := s.RefreshLease("org_a", "ses_1", "w1", -time.Second, now); !errors.Is(err, engine.ErrInvalidInput) {
		t.Fatalf("negative length: %v", err)
	}
}

func TestDepth(t *testing.T) {
	st := enginetest.Open(t, nil)
	s, err := New(st)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := s.ClaimLease(Lease{SessionID: "s1", WorkerID: "w", OrgID: "o1"}, time.Minute, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimLease(Lease{SessionID: "s2", WorkerID: "w", OrgID: "o2"}, time.Second, now); err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"a", "b", "c"} {
		if _, _, err := s.Enqueue(Inject{SessionID: "s1", OrgID: "o1", Text: text}, now.Add(time.Duration(i))); err != nil {
			t.Fatal(err)
		}
	}
	in, err := s.ClaimInject("o1", "s1", "w", now)
	if err != nil || in == nil {
		t.Fatal(in, err)
	}
	if err := s.AckInject("o1", "s1", in.DeliveryID); err != nil {
		t.Fatal(err)
	}
	leases, injects, err := s.Depth(now.Add(2 * time.Second))
	if err != nil || leases != 1 || injects != 2 {
		t.Fatalf("Depth = %d leases, %d injects, %v; want 1 (one expired), 2 (one acked)", leases, injects, err)
	}
}

// A replica applying the same logged inject claim twice (it crashed before
// recording it) hands out the same delivery and counts one attempt; a
// later claim is a new attempt.
func TestClaimInjectIDsReplays(t *testing.T) {
	s, _, _ := open(t)
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	if _, err := s.ClaimLease(Lease{SessionID: "ses_1", WorkerID: "w1", OrgID: "org_a"}, time.Minute, now); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Enqueue(Inject{SessionID: "ses_1", OrgID: "org_a", Text: "x"}, now); err != nil {
		t.Fatal(err)
	}
	at := now.Add(time.Second)
	a, err := s.ClaimInjectIDs("org_a", "ses_1", "w1", at, engine.NewIDSource([]byte("stream/7")))
	if err != nil || a == nil {
		t.Fatal(a, err)
	}
	b, err := s.ClaimInjectIDs("org_a", "ses_1", "w1", at, engine.NewIDSource([]byte("stream/7")))
	if err != nil || b == nil || b.DeliveryID != a.DeliveryID || b.Attempts != 1 {
		t.Fatalf("the claim applied again: %+v %v, first %+v", b, err, a)
	}
	c, err := s.ClaimInjectIDs("org_a", "ses_1", "w1", at.Add(time.Second), engine.NewIDSource([]byte("stream/8")))
	if err != nil || c == nil || c.DeliveryID != a.DeliveryID || c.Attempts != 2 {
		t.Fatalf("a later claim: %+v %v", c, err)
	}
}

// TestDropOrg deletes an org's leases, queued injects and dedupe hashes,
// and nothing of an org whose id starts with the same letters.
func TestDropOrg(t *testing.T) {
	s, _, _ := open(t)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for _, org := range []string{"org_a", "org_ab"} {
		for _, ses := range []string{"ses_1", "ses_2"} {
			if _, err := s.ClaimLease(Lease{SessionID: ses, WorkerID: "w1", OrgID: org}, time.Minute, now); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Enqueue(Inject{SessionID: ses, OrgID: org, Text: "block of " + org}, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	n, err := s.DropOrg("org_a")
	if err != nil || n != 6 { // two leases, two injects, two hashes
		t.Fatalf("DropOrg: %d %v, want 6 records", n, err)
	}
	for _, ses := range []string{"ses_1", "ses_2"} {
		if _, err := s.LeaseOf("org_a", ses); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("org_a's lease of %s: %v", ses, err)
		}
		if ins, err := s.PendingInjects("org_a", ses); err != nil || len(ins) != 0 {
			t.Errorf("org_a's injects of %s: %v %v", ses, ins, err)
		}
		if _, err := s.LeaseOf("org_ab", ses); err != nil {
			t.Errorf("org_ab's lease of %s: %v", ses, err)
		}
		if ins, err := s.PendingInjects("org_ab", ses); err != nil || len(ins) != 1 {
			t.Errorf("org_ab's injects of %s: %v %v", ses, ins, err)
		}
	}
	// The same block queued again is new: its hash went with the org.
	if _, dup, err := s.Enqueue(Inject{SessionID: "ses_1", OrgID: "org_a", Text: "block of org_a"}, now); err != nil || dup {
		t.Fatalf("enqueue after the drop: duplicate %v, %v", dup, err)
	}
}
