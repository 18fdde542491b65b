package engine

import (
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

// TestMigrateSessionKeys opens a store whose session records use the
// version-3 layout (a global session namespace: 's' session, 'q' session
// 0 seq, 'h' session 0 hash, 'l' session 0 ns id) and checks that every
// record is found under its org afterwards, nothing under another org, and
// that running the step again changes nothing.
func TestMigrateSessionKeys(t *testing.T) {
	s, dir := openTest(t, nil)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	lease := Lease{SessionID: "ses_1", WorkerID: "w1", OrgID: "org_a", ClaimedAt: now, ExpiresAt: now.Add(time.Hour)}
	pending := Inject{SessionID: "ses_1", OrgID: "org_a", Text: "block", ContentHash: ContentHash("block"), State: InjectPending,
		ObservationIDs: []string{}, Seq: 7}
	log := InjectionLog{ID: "log_x", SessionID: "ses_1", OrgID: "org_a", ProjectID: "p", WorkType: "bug_fix", Timestamp: now,
		ObservationIDs: []string{}, SessionSummaryIDs: []string{}, GraphNodeIDs: []string{}, GraphEdgeKeys: []EdgeKey{}}
	logB := log
	logB.ID, logB.SessionID, logB.OrgID = "log_y", "ses_2", "org_b"
	raw := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	seq := binary.BigEndian.AppendUint64(nil, 7)
	oldLog := func(l InjectionLog) []byte {
		k := append(append([]byte{pfxLog}, l.SessionID...), 0)
		k = binary.BigEndian.AppendUint64(k, uint64(l.Timestamp.UnixNano()))
		return append(k, l.ID...)
	}
	if err := s.db.Update(func(txn *badger.Txn) error {
		for _, kv := range []struct{ k, v []byte }{
			{append([]byte{pfxLease}, "ses_1"...), raw(lease)},
			{append(append([]byte{pfxInject}, "ses_1\x00"...), seq...), raw(pending)},
			{append([]byte{pfxInjectHash}, "ses_1\x00"+pending.ContentHash...), seq},
			{append([]byte{pfxInjectHash}, "ses_gone\x00"+ContentHash("x")...), seq}, // nothing left to name its org
			{oldLog(log), raw(log)},
			{oldLog(logB), raw(logB)},
		} {
			if err := txn.Set(kv.k, kv.v); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	setStoreVersion(t, s, 3)
	check := func(s *Store) {
		t.Helper()
		if l, err := s.LeaseOf("org_a", "ses_1"); err != nil || l.WorkerID != "w1" {
			t.Fatalf("lease: %+v %v", l, err)
		}
		if _, err := s.LeaseOf("org_b", "ses_1"); err == nil {
			t.Fatal("org_b sees org_a's lease")
		}
		if q, err := s.PendingInjects("org_a", "ses_1"); err != nil || len(q) != 1 || q[0].Text != "block" {
			t.Fatalf("injects: %+v %v", q, err)
		}
		if _, dup, err := s.Enqueue(Inject{SessionID: "ses_1", OrgID: "org_a", Text: "block"}, now); err != nil || !dup {
			t.Fatalf("dedupe hash lost: dup=%v %v", dup, err)
		}
		for _, c := range []struct{ org, session, id string }{{"org_a", "ses_1", "log_x"}, {"org_b", "ses_2", "log_y"}} {
			if ls, err := s.InjectionLogs(c.org, c.session); err != nil || len(ls) != 1 || ls[0].ID != c.id {
				t.Fatalf("logs of %s/%s: %+v %v", c.org, c.session, ls, err)
			}
		}
		if ls, _ := s.InjectionLogs("org_b", "ses_1"); len(ls) != 0 {
			t.Fatalf("org_b sees org_a's logs: %+v", ls)
		}
		if orgs, _ := s.SessionOrgs("ses_1"); len(orgs) != 1 || orgs[0] != "org_a" {
			t.Fatalf("SessionOrgs: %v", orgs)
		}
		n := 0
		s.iterate([]byte{pfxInjectHash}, func(k, _ []byte) error { n++; return nil })
		if n != 1 {
			t.Fatalf("%d dedupe hashes, want 1 (the orphan dropped)", n)
		}
	}
	s = reopen(t, s, dir, nil)
	if v := storedVersion(t, s); v != storeVersion {
		t.Fatalf("version %d, want %d", v, storeVersion)
	}
	check(s)
	// Interrupted and run again over its own output: the same store.
	if err := migrateSessionKeys(s.db); err != nil {
		t.Fatal(err)
	}
	check(s)
}
