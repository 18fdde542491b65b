package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	badger "github.com/dgraph-io/badger/v4"
)

// TestClearObservations deletes every observation of one org (in chunks
// smaller than the org's observations), or of one project, and nothing of
// another org; the store's invariants hold after it, and after a reopen.
func TestClearObservations(t *testing.T) {
	s, dir := openTest(t, nil)
	s.chunks = chunking{triplets: 10, nodes: 4}
	ctx := context.Background()
	add := func(ten Tenant, n int) {
		t.Helper()
		var in []ObservationInput
		for i := range n {
			in = append(in, ObservationInput{Content: fmt.Sprintf("%s/%s note %d", ten.Org, ten.Project, i)})
		}
		if _, err := s.AddObservations(ctx, ten, in, ImportOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	add(tenA, 9)
	add(tenA2, 3)
	add(tenB, 5)
	count := func(ten Tenant) int {
		page, err := s.ListObservations(ten, ObservationQuery{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Observations)
	}
	if n, err := s.ClearObservations(ctx, tenA2); err != nil || n != 3 {
		t.Fatalf("clear a project: %d %v, want 3", n, err)
	}
	if count(tenA) != 9 || count(tenA2) != 0 || count(tenB) != 5 {
		t.Fatalf("after clearing %v: %d %d %d", tenA2, count(tenA), count(tenA2), count(tenB))
	}
	if n, err := s.ClearObservations(ctx, Tenant{Org: tenA.Org}); err != nil || n != 9 {
		t.Fatalf("clear an org: %d %v, want 9", n, err)
	}
	if n, err := s.ClearObservations(ctx, Tenant{Org: tenA.Org}); err != nil || n != 0 {
		t.Fatalf("clear an org again: %d %v, want 0", n, err)
	}
	s = reopen(t, s, dir, nil)
	if count(tenA) != 0 || count(tenB) != 5 {
		t.Fatalf("reopened: org_a %d, org_b %d; want 0 and 5", count(tenA), count(tenB))
	}
	var live int
	s.View(func(v *View) error { live = v.ObservationCount(); return nil })
	if live != 5 {
		t.Fatalf("%d live observations, want 5", live)
	}
}

// TestDeleteWhereAndSessionOrgs: DeleteWhere deletes the keys of a prefix
// that keep refuses, in batches larger than one transaction's, and leaves
// other prefixes alone; ForgetSessionOrg deletes one org from the session
// index, an org whose id ends with the same letters staying.
func TestDeleteWhereAndSessionOrgs(t *testing.T) {
	s, _ := openTest(t, nil)
	kv := s.KV()
	if ok, err := kv.HasPrefix([]byte{PrefixLease}); ok || err != nil {
		t.Fatalf("HasPrefix of an empty space: %v %v", ok, err)
	}
	n := 2*deleteBatch + 7
	err := kv.Update(func(txn *badger.Txn) error {
		for i := range n {
			if err := txn.Set(SessionKey(PrefixLease, fmt.Sprintf("org_%d", i%2), fmt.Sprintf("ses_%d", i)), []byte{1}); err != nil {
				return err
			}
		}
		for _, so := range [][2]string{{"ses_1", "org_a"}, {"ses_1", "borg_a"}, {"ses_2", "org_a"}, {"ses_2", "org_b"}} {
			if err := MarkSession(txn, so[1], so[0]); err != nil {
				return err
			}
		}
		return txn.Set([]byte{PrefixInject, 'x'}, []byte{2})
	})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := kv.HasPrefix(SessionKey(PrefixLease, "org_1", "")[:len("org_1")+2]); !ok || err != nil {
		t.Fatalf("HasPrefix of org_1's leases: %v %v", ok, err)
	}
	prefix := append([]byte{PrefixLease}, "org_0\x00"...)
	deleted, err := kv.DeleteWhere(prefix, nil)
	if err != nil || deleted != (n+1)/2 {
		t.Fatalf("DeleteWhere: %d %v, want %d", deleted, err, (n+1)/2)
	}
	left := 0
	if err := kv.Iterate([]byte{PrefixLease}, func(k, _ []byte) error {
		if bytes.HasPrefix(k, prefix) {
			return errors.New("a deleted key is still there")
		}
		left++
		return nil
	}); err != nil || left != n/2 {
		t.Fatalf("after DeleteWhere: %d keys left (%v), want %d", left, err, n/2)
	}
	if ok, _ := kv.HasPrefix([]byte{PrefixInject}); !ok {
		t.Fatal("DeleteWhere touched another key space")
	}
	if _, err := kv.ForgetSessionOrg("org_a"); err != nil {
		t.Fatal(err)
	}
	for ses, want := range map[string][]string{"ses_1": {"borg_a"}, "ses_2": {"org_b"}} {
		if got, err := kv.SessionOrgs(ses); err != nil || !slices.Equal(got, want) {
			t.Errorf("SessionOrgs(%s) after forgetting org_a: %v %v, want %v", ses, got, err, want)
		}
	}
}

// TestAppliedLogStagesOtherLogs: a keyed record of another log staged by
// Record commits with the sequence, and Put stores records without one.
func TestAppliedLogStagesOtherLogs(t *testing.T) {
	s, dir := openTest(t, nil)
	a, _ := s.KV().AppliedLog("stream_a")
	shared, _ := s.KV().AppliedLog("shared")
	if err := a.Record(4, nil, AppliedKeyed{ID: "k", Value: []byte("own")}, AppliedKeyed{ID: "org_x", Value: []byte("s"), Log: shared}); err != nil {
		t.Fatal(err)
	}
	if err := shared.Put(AppliedKeyed{ID: "org_y", Value: []byte("t")}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, dir, nil)
	a, _ = s.KV().AppliedLog("stream_a")
	shared, _ = s.KV().AppliedLog("shared")
	if v, err := shared.Keyed("org_x"); err != nil || string(v) != "s" {
		t.Fatalf("the other log's record: %q %v", v, err)
	}
	if _, err := a.Keyed("org_x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the record landed in the recording log: %v", err)
	}
	if v, err := shared.Keyed("org_y"); err != nil || string(v) != "t" {
		t.Fatalf("Put: %q %v", v, err)
	}
	if seq, _, _ := shared.Applied(); seq != 0 {
		t.Fatalf("Put recorded a sequence: %d", seq)
	}
	var ids []string
	if err := shared.EachKeyedPrefix("org_", func(id string, _ []byte) error { ids = append(ids, id); return nil }); err != nil || !slices.Equal(ids, []string{"org_x", "org_y"}) {
		t.Fatalf("EachKeyedPrefix(org_): %v %v", ids, err)
	}
	ids = nil
	if err := shared.EachKeyedPrefix("org_y", func(id string, _ []byte) error { ids = append(ids, id); return nil }); err != nil || !slices.Equal(ids, []string{"org_y"}) {
		t.Fatalf("EachKeyedPrefix(org_y): %v %v", ids, err)
	}
	if seq, _, _ := a.Applied(); seq != 4 {
		t.Fatalf("Record: %d", seq)
	}
	other, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	foreign, _ := other.KV().AppliedLog("x")
	if err := a.Record(5, nil, AppliedKeyed{ID: "z", Log: foreign}); err == nil {
		t.Fatal("a record of another store's log staged")
	}
}
