package engine_test

import (
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/delivery"
	"github.com/kgctx/kgctx/engine/enginetest"
	"github.com/kgctx/kgctx/engine/sessionlog"
)

// TestMigrateSessionKeys opens a store whose session records use the
// version-3 layout (a global session namespace: 's' session, 'q' session
// 0 seq, 'h' session 0 hash, 'l' session 0 ns id) and checks that every
// record is found under its org afterwards, nothing under another org, and
// that running the step again changes nothing.
func TestMigrateSessionKeys(t *testing.T) {
	s, dir := enginetest.OpenDir(t, nil)
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	lease := delivery.Lease{SessionID: "ses_1", WorkerID: "w1", OrgID: "org_a", ClaimedAt: now, ExpiresAt: now.Add(time.Hour)}
	pending := delivery.Inject{SessionID: "ses_1", OrgID: "org_a", Text: "block", ContentHash: delivery.ContentHash("block"), State: delivery.InjectPending,
		ObservationIDs: []string{}, Seq: 7}
	log := sessionlog.InjectionLog{ID: "log_x", SessionID: "ses_1", OrgID: "org_a", ProjectID: "p", WorkType: "bug_fix", Timestamp: now,
		ObservationIDs: []string{}, SessionSummaryIDs: []string{}, GraphNodeIDs: []string{}, GraphEdgeKeys: []engine.EdgeKey{}}
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
	oldLog := func(l sessionlog.InjectionLog) []byte {
		k := append(append([]byte{engine.PrefixLog}, l.SessionID...), 0)
		k = binary.BigEndian.AppendUint64(k, uint64(l.Timestamp.UnixNano()))
		return append(k, l.ID...)
	}
	if err := s.KV().Update(func(txn *badger.Txn) error {
		for _, kv := range []struct{ k, v []byte }{
			{append([]byte{engine.PrefixLease}, "ses_1"...), raw(lease)},
			{append(append([]byte{engine.PrefixInject}, "ses_1\x00"...), seq...), raw(pending)},
			{append([]byte{engine.PrefixInjectHash}, "ses_1\x00"+pending.ContentHash...), seq},
			{append([]byte{engine.PrefixInjectHash}, "ses_gone\x00"+delivery.ContentHash("x")...), seq}, // nothing left to name its org
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
	engine.SetStoreVersion(t, s, 3)
	check := func(s *engine.Store) {
		t.Helper()
		d, err := delivery.New(s)
		if err != nil {
			t.Fatal(err)
		}
		logs, err := sessionlog.New(s)
		if err != nil {
			t.Fatal(err)
		}
		if l, err := d.LeaseOf("org_a", "ses_1"); err != nil || l.WorkerID != "w1" {
			t.Fatalf("lease: %+v %v", l, err)
		}
		if _, err := d.LeaseOf("org_b", "ses_1"); err == nil {
			t.Fatal("org_b sees org_a's lease")
		}
		if q, err := d.PendingInjects("org_a", "ses_1"); err != nil || len(q) != 1 || q[0].Text != "block" {
			t.Fatalf("injects: %+v %v", q, err)
		}
		if _, dup, err := d.Enqueue(delivery.Inject{SessionID: "ses_1", OrgID: "org_a", Text: "block"}, now); err != nil || !dup {
			t.Fatalf("dedupe hash lost: dup=%v %v", dup, err)
		}
		for _, c := range []struct{ org, session, id string }{{"org_a", "ses_1", "log_x"}, {"org_b", "ses_2", "log_y"}} {
			if ls, err := logs.InjectionLogs(c.org, c.session); err != nil || len(ls) != 1 || ls[0].ID != c.id {
				t.Fatalf("logs of %s/%s: %+v %v", c.org, c.session, ls, err)
			}
		}
		if ls, _ := logs.InjectionLogs("org_b", "ses_1"); len(ls) != 0 {
			t.Fatalf("org_b sees org_a's logs: %+v", ls)
		}
		if orgs, _ := s.KV().SessionOrgs("ses_1"); len(orgs) != 1 || orgs[0] != "org_a" {
			t.Fatalf("SessionOrgs: %v", orgs)
		}
		n := 0
		s.KV().Iterate([]byte{engine.PrefixInjectHash}, func(k, _ []byte) error { n++; return nil })
		if n != 1 {
			t.Fatalf("%d dedupe hashes, want 1 (the orphan dropped)", n)
		}
	}
	s = enginetest.Reopen(t, s, dir, nil)
	if v := engine.StoredVersion(t, s); v != engine.StoreVersion {
		t.Fatalf("version %d, want %d", v, engine.StoreVersion)
	}
	check(s)
	// Interrupted and run again over its own output: the same store.
	if err := engine.MigrateSessionKeys(s); err != nil {
		t.Fatal(err)
	}
	check(s)
}
