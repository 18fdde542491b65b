package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	badger "github.com/dgraph-io/badger/v4"
)

// setStoreVersion overwrites the version record of an open store, as a
// store written by another build would hold it.
func setStoreVersion(t testing.TB, s *Store, v uint64) {
	t.Helper()
	if err := s.db.Update(func(txn *badger.Txn) error {
		return txn.Set([]byte(keyMetaVer), binary.BigEndian.AppendUint64(nil, v))
	}); err != nil {
		t.Fatal(err)
	}
}

func storedVersion(t testing.TB, s *Store) uint64 {
	t.Helper()
	var v uint64
	if err := s.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get([]byte(keyMetaVer))
		if err != nil {
			return err
		}
		return it.Value(func(b []byte) error { v = binary.BigEndian.Uint64(b); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

func countLegacyKeys(t testing.TB, s *Store) int {
	t.Helper()
	n := 0
	if err := s.iterate([]byte{pfxLegacy}, func(k, v []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// v2Fixture writes into s, per tenant, the records a version-2 build made
// from importing ts in order: the old rule (normalizeNameV2) merged every
// surface form into the node first named with the same old key, and kept
// the later forms as aliases. Node records hold the name as sent, never a
// key, so importing the first form with the later ones as explicit aliases
// writes byte-identical records. It returns, per tenant, each surface form's
// node name.
func v2Fixture(t testing.TB, s *Store, ts map[Tenant][][3]string) map[Tenant]map[string]string {
	t.Helper()
	owner := map[Tenant]map[string]string{}
	for ten, rows := range ts {
		first := map[string]string{} // old key -> first surface form
		owner[ten] = map[string]string{}
		canon := func(name string) (string, []string) {
			k := normalizeNameV2(name)
			if _, ok := first[k]; !ok {
				first[k] = name
			}
			owner[ten][name] = first[k]
			if first[k] == name {
				return name, nil
			}
			return first[k], []string{name}
		}
		for _, r := range rows {
			in := TripletInput{Relationship: r[1]}
			in.Source, in.SourceAliases = canon(r[0])
			in.Target, in.TargetAliases = canon(r[2])
			mustImport(t, s, ten, in)
		}
		if got := len(s.Tenants()); got == 0 {
			t.Fatal("no tenant written")
		}
		if st, err := s.Stats(ten); err != nil || st.Nodes != len(first) {
			t.Fatalf("fixture of %v holds %d nodes for %d old keys (%v)", ten, st.Nodes, len(first), err)
		}
	}
	setStoreVersion(t, s, 2)
	return owner
}

var v2Rows = [][3]string{
	{"AuthService", "calls", "TokenStore"},
	{"auth_service", "depends_on", "kill_src_2_10"},
	{"authservice", "calls", "kill_src_21_0"}, // old rule: same node as AuthService and kill_src_2_10
	{"Auth-Service", "calls", "token store"},
	{"kill_src_21_0", "follows", "/m/015g_7"},
	{"/m/015g7", "related_to", "v1_2"},
	{"v12", "related_to", "TokenStore"},
}

// TestMigrateV2 opens a store that version 2 wrote (defect 12): nodes the
// old rule merged stay one node and every surface form they were imported
// under still finds them, although the new rule gives some of those forms
// different keys.
func TestMigrateV2(t *testing.T) {
	s, dir := openTest(t, nil)
	fixture := map[Tenant][][3]string{tenA: v2Rows, tenB: v2Rows[:3]}
	owner := v2Fixture(t, s, fixture)
	for _, form := range []string{"authservice", "kill_src_21_0", "/m/015g7", "v12"} {
		if NormalizeName(form) == NormalizeName(owner[tenA][form]) {
			t.Fatalf("fixture: %q and %q share a new key; the test would prove nothing", form, owner[tenA][form])
		}
	}
	s = reopen(t, s, dir, nil)
	if v := storedVersion(t, s); v != storeVersion {
		t.Fatalf("version after migration %d, want %d", v, storeVersion)
	}
	lookups := func(s *Store) {
		t.Helper()
		for ten, forms := range owner {
			for form, name := range forms {
				err := s.View(func(v *View) error {
					id, ok := v.Lookup(ten, form)
					if !ok {
						return errors.New("not found")
					}
					if got := v.Node(id).Name; got != name {
						return errors.New("found " + got)
					}
					return nil
				})
				if err != nil {
					t.Errorf("%v: lookup %q (node %q): %v", ten, form, name, err)
				}
			}
		}
	}
	lookups(s)
	// tenA: authservice, kill_src_21_0, /m/015g7 and v12; tenB: authservice, kill_src_21_0.
	if n := countLegacyKeys(t, s); n != 6 {
		t.Errorf("%d legacy keys stored, want 6", n)
	}
	// Check sees a legacy key that no alias of its node has, and one that
	// is not on disk.
	s.mu.Lock()
	bogus := nameKey{s.g.tenantIndex[tenA], "bogus"}
	s.g.legacy[bogus] = 0
	s.mu.Unlock()
	if err := s.Check(); !errors.Is(err, ErrInvariant) || !strings.Contains(err.Error(), `legacy name key "bogus"`) || !strings.Contains(err.Error(), "stored, 7 in memory") {
		t.Errorf("Check with a bogus legacy key: %v", err)
	}
	s.mu.Lock()
	delete(s.g.legacy, bogus)
	s.mu.Unlock()
	// A query by a merged form reaches the merged node's edges.
	if got, err := s.QueryTriplets(tenA, TripletQuery{Subject: "kill_src_21_0"}); err != nil || len(got) != 1 || got[0].Target != "/m/015g_7" {
		t.Errorf("query by merged form: %v, %v", got, err)
	}

	var id string
	// Importing known forms again creates nothing; a form the old rule
	// would have merged but the store never saw is a new node.
	res := mustImport(t, s, tenA, tr("authservice", "calls", "kill_src_21_0"), tr("AUTHSERVICE", "calls", "token store"))
	if res.NodesCreated != 0 || res.EdgesCreated != 0 {
		t.Errorf("re-import of merged forms: %+v", res)
	}
	// One batch naming the node by its own key and by a legacy key stages
	// it once: both rows' changes land.
	mustImport(t, s, tenA,
		TripletInput{Source: "AuthService", Relationship: "calls", Target: "v12", SourceDescription: "issues tokens"},
		TripletInput{Source: "authservice", Relationship: "calls", Target: "v12", SourceAliases: []string{"auth svc"}})
	s.View(func(v *View) error {
		n, _ := v.Lookup(tenA, "authservice")
		id = v.Node(n).ID
		return nil
	})
	if n, err := s.Node(tenA, id); err != nil || n.Description != "issues tokens" || !slices.Contains(n.Aliases, "auth svc") {
		t.Errorf("node named twice in a batch: %+v, %v", n, err)
	}
	if res := mustImport(t, s, tenA, tr("Auth_Serv-ice", "calls", "v12")); res.NodesCreated != 1 {
		t.Errorf("unseen form: %+v, want one new node", res)
	}

	// Reopening a migrated store runs nothing and keeps the lookups.
	s = reopen(t, s, dir, nil)
	lookups(s)

	// An interrupted migration (keys written, version not) runs again to
	// the same state.
	setStoreVersion(t, s, 2)
	s = reopen(t, s, dir, nil)
	lookups(s)
	if n := countLegacyKeys(t, s); n != 6 {
		t.Errorf("after a rerun %d legacy keys, want 6", n)
	}

	// Deleting a merged node drops its legacy keys, on disk and in memory:
	// the form is free for a new node.
	s.View(func(v *View) error {
		n, _ := v.Lookup(tenA, "kill_src_2_10")
		id = v.Node(n).ID
		return nil
	})
	if err := s.DeleteNode(context.Background(), tenA, id); err != nil {
		t.Fatal(err)
	}
	if n := countLegacyKeys(t, s); n != 5 {
		t.Errorf("after delete %d legacy keys, want 5", n)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if res := mustImport(t, s, tenA, tr("kill_src_21_0", "follows", "x")); res.NodesCreated != 2 {
		t.Errorf("form of a deleted node: %+v, want a new node (and x)", res)
	}
	s.View(func(v *View) error {
		if n, ok := v.Lookup(tenA, "kill_src_21_0"); !ok || v.Node(n).Name != "kill_src_21_0" {
			t.Errorf("kill_src_21_0 does not name its own node")
		}
		if _, ok := v.Lookup(tenA, "kill_src_2_10"); ok {
			t.Errorf("kill_src_2_10 still found")
		}
		return nil
	})
	s = reopen(t, s, dir, nil)
	if n := countLegacyKeys(t, s); n != 5 {
		t.Errorf("after reopen %d legacy keys, want 5", n)
	}

	// A legacy key left behind by a crash inside a delete (its node gone)
	// is dropped at Open.
	if err := s.db.Update(func(txn *badger.Txn) error {
		return txn.Set(legacyKey(nameKey{0, "orphan"}), binary.BigEndian.AppendUint32(nil, 9999))
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := countLegacyKeys(t, s); n != 5 {
		t.Errorf("orphan legacy key kept: %d keys, want 5", n)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusesUnknownVersions: a version this build cannot read or
// upgrade is refused, naming the version, and the store is left as it was.
func TestOpenRefusesUnknownVersions(t *testing.T) {
	for _, v := range []uint64{1, storeVersion + 1} {
		s, dir := openTest(t, nil)
		mustImport(t, s, tenA, tr("a", "calls", "b"))
		setStoreVersion(t, s, v)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		_, err := Open(dir, nil)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "version") {
			t.Fatalf("version %d: Open = %v, want ErrCorrupt naming the version", v, err)
		}
		db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
		if err != nil {
			t.Fatal(err)
		}
		raw := &Store{db: db}
		if got := storedVersion(t, raw); got != v {
			t.Errorf("refused store's version became %d", got)
		}
		db.Close()
	}
}

// TestMigrationsOrdered: every version below storeVersion down to the
// oldest readable one has exactly one step.
func TestMigrationsOrdered(t *testing.T) {
	for i, m := range migrations {
		if m.from != oldestVersion+uint64(i) || m.run == nil || m.what == "" {
			t.Errorf("step %d upgrades from %d; the list must run from %d to %d without gaps", i, m.from, oldestVersion, storeVersion-1)
		}
	}
	if oldestVersion+uint64(len(migrations)) != storeVersion {
		t.Errorf("%d steps from version %d do not reach %d", len(migrations), oldestVersion, storeVersion)
	}
}
