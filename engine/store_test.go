package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestImportMergesIdentityAndEdges(t *testing.T) {
	s, dir := openTest(t, nil)
	res := mustImport(t, s, tenA,
		tr("AuthService", "depends_on", "PostgresDB"),
		tr("auth_service", "Depends On", "postgres-db"),
		tr("UserController", "calls", "AuthService"),
	)
	if res.NodesCreated != 3 || res.EdgesCreated != 2 || res.EdgesMerged != 1 || res.Accepted != 3 {
		t.Fatalf("first import: %+v", res)
	}
	res = mustImport(t, s, tenA, tr("AuthService", "depends_on", "PostgresDB"), tr("UserController", "calls", "AuthService"))
	if res.NodesCreated != 0 || res.EdgesCreated != 0 || res.EdgesMerged != 2 {
		t.Fatalf("re-import created something: %+v", res)
	}
	st, _ := s.Stats(tenA)
	if st.Nodes != 3 || st.Triplets != 2 || st.Predicates["depends_on"] != 1 || st.Predicates["calls"] != 1 || st.Predicates["implements"] != 0 {
		t.Fatalf("stats: %+v", st)
	}
	ts, _ := s.QueryTriplets(tenA, TripletQuery{Subject: "authService"})
	if len(ts) != 1 || ts[0].Target != "PostgresDB" || ts[0].Relationship != "depends_on" || ts[0].Weight != DefaultWeight {
		t.Fatalf("query: %+v", ts)
	}
	n, err := s.Node(tenA, ts[0].SourceNodeID)
	if err != nil || n.Name != "AuthService" || !slices.Equal(n.Aliases, []string{"auth_service"}) {
		t.Fatalf("node: %+v %v", n, err)
	}
	// Same names in another org and project are other nodes.
	mustImport(t, s, tenB, tr("AuthService", "depends_on", "PostgresDB"))
	mustImport(t, s, tenA2, tr("AuthService", "depends_on", "PostgresDB"))
	if st, _ := s.Stats(tenA); st.Nodes != 3 {
		t.Fatalf("tenant leak in stats: %+v", st)
	}
	s = reopen(t, s, dir, nil)
	ts2, _ := s.QueryTriplets(tenA, TripletQuery{Subject: "authService"})
	if !slices.EqualFunc(ts, ts2, func(a, b Triplet) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Fatalf("reopen changed query: %+v vs %+v", ts, ts2)
	}
	n2, _ := s.Node(tenA, ts[0].SourceNodeID)
	if !slices.Equal(n2.Aliases, n.Aliases) || n2.Name != n.Name || !n2.CreatedAt.Equal(n.CreatedAt) {
		t.Fatalf("reopen changed node: %+v vs %+v", n2, n)
	}
}

func TestImportFieldsWeightsProvenance(t *testing.T) {
	s, dir := openTest(t, &Options{Dim: 3})
	ts := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	in := TripletInput{Source: "AuthService", Relationship: "depends_on", Target: "PostgresDB",
		SourceType: "service", TargetType: "database", SourceDescription: "Issues tokens.", Weight: f64(0.7),
		Provenance:   &Provenance{ObservationID: "obs_1", SessionID: "ses_1", Timestamp: ts},
		SourceVector: []float32{1, 0, 0}}
	mustImport(t, s, tenA, in)
	in2 := tr("AuthService", "depends_on", "PostgresDB")
	in2.Provenance = &Provenance{ObservationID: "obs_2"}
	in2.SourceDescription = "Issues and refreshes tokens."
	mustImport(t, s, tenA, in2)
	s = reopen(t, s, dir, &Options{Dim: 3})
	got, _ := s.QueryTriplets(tenA, TripletQuery{Predicate: "depends_on"})
	if len(got) != 1 || got[0].Weight != 0.7 {
		t.Fatalf("weight not kept on merge without weight: %+v", got)
	}
	prov, err := s.EdgeProvenance([]uint32{got[0].EdgeID})
	if err != nil || len(prov[0]) != 2 || prov[0][0].ObservationID != "obs_1" || !prov[0][0].Timestamp.Equal(ts) || prov[0][1].ObservationID != "obs_2" {
		t.Fatalf("provenance: %+v %v", prov, err)
	}
	n, _ := s.Node(tenA, got[0].SourceNodeID)
	if n.Type != "service" || n.Description != "Issues and refreshes tokens." {
		t.Fatalf("node fields: %+v", n)
	}
	v, err := s.Vector(got[0].Src)
	if err != nil || !slices.Equal(v, []float32{1, 0, 0}) {
		t.Fatalf("vector: %v %v", v, err)
	}
	w := tr("AuthService", "depends_on", "PostgresDB")
	w.Weight = f64(0.2)
	mustImport(t, s, tenA, w)
	got, _ = s.QueryTriplets(tenA, TripletQuery{})
	if got[0].Weight != 0.2 {
		t.Fatalf("explicit weight not applied: %v", got[0].Weight)
	}
}

func TestQueryShapes(t *testing.T) {
	s, _ := openTest(t, nil)
	mustImport(t, s, tenA,
		tr("error:timeout", "caused_by", "tool:http_client"),
		tr("error:timeout", "resolved_by", "fix:retry"),
		tr("error:auth", "resolved_by", "fix:retry"),
		tr("error:auth", "caused_by", "tool:login"),
	)
	check := func(q TripletQuery, want ...string) {
		t.Helper()
		got, err := s.QueryTriplets(tenA, q)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, g := range got {
			lines = append(lines, g.Source+" "+g.Relationship+" "+g.Target)
		}
		if !slices.Equal(lines, want) {
			t.Errorf("%+v: got %q want %q", q, lines, want)
		}
	}
	check(TripletQuery{Subject: "error:timeout"}, "error:timeout caused_by tool:http_client", "error:timeout resolved_by fix:retry")
	check(TripletQuery{Subject: "error:timeout", Predicate: "resolved_by"}, "error:timeout resolved_by fix:retry")
	check(TripletQuery{Object: "fix:retry"}, "error:timeout resolved_by fix:retry", "error:auth resolved_by fix:retry")
	check(TripletQuery{Predicate: "caused by", Object: "tool:login"}, "error:auth caused_by tool:login")
	check(TripletQuery{Predicate: "caused_by"}, "error:timeout caused_by tool:http_client", "error:auth caused_by tool:login")
	check(TripletQuery{Subject: "error:auth", Object: "tool:login"}, "error:auth caused_by tool:login")
	check(TripletQuery{Limit: 1}, "error:timeout caused_by tool:http_client")
	check(TripletQuery{Subject: "nobody"})
	check(TripletQuery{Predicate: "unknown_rel"})
	if got, _ := s.QueryTriplets(tenB, TripletQuery{}); len(got) != 0 {
		t.Fatalf("other org sees triplets: %v", got)
	}
}

func TestDeleteCascades(t *testing.T) {
	s, dir := openTest(t, nil)
	mustImport(t, s, tenA, tr("A", "calls", "B"), tr("B", "calls", "C"), tr("C", "calls", "A"), tr("A", "calls", "A"))
	cross := tr("A", "depends_on", "X")
	cross.TargetProjectID = tenA2.Project
	mustImport(t, s, tenA, cross)
	mustImport(t, s, tenA2, tr("X", "calls", "A2"))
	b, _ := s.QueryTriplets(tenA, TripletQuery{Subject: "B"})
	if err := s.DeleteNode(context.Background(), tenA2, b[0].SourceNodeID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete from the wrong project: %v", err)
	}
	if err := s.DeleteNode(context.Background(), tenA, b[0].SourceNodeID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Node(tenA, b[0].SourceNodeID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted node still readable: %v", err)
	}
	st, _ := s.Stats(tenA)
	if st.Nodes != 2 || st.Triplets != 3 { // C->A, A->A, A->X
		t.Fatalf("after node delete: %+v", st)
	}
	if err := s.DeleteTriplet(context.Background(), tenA, "a", "calls", "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTriplet(context.Background(), tenA, "a", "calls", "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	// Deleting X (project 2) takes the cross-project edge of project 1 with it.
	x, _ := s.QueryTriplets(tenA2, TripletQuery{Subject: "X"})
	if err := s.DeleteNode(context.Background(), tenA2, x[0].SourceNodeID); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Stats(tenA); st.Triplets != 1 {
		t.Fatalf("cross-project edge survived: %+v", st)
	}
	s = reopen(t, s, dir, nil)
	nodes, edges, err := s.ClearProject(context.Background(), tenA)
	if err != nil || nodes != 2 || edges != 1 {
		t.Fatalf("clear: %d %d %v", nodes, edges, err)
	}
	if st, _ := s.Stats(tenA); st.Nodes != 0 || st.Triplets != 0 {
		t.Fatalf("after clear: %+v", st)
	}
	if st, _ := s.Stats(tenA2); st.Nodes != 1 {
		t.Fatalf("clear touched another project: %+v", st)
	}
	// Re-import after delete creates fresh nodes with new ids.
	mustImport(t, s, tenA, tr("B", "calls", "C"))
	nb, _ := s.QueryTriplets(tenA, TripletQuery{Subject: "B"})
	if nb[0].SourceNodeID == b[0].SourceNodeID {
		t.Fatal("node id reused after delete")
	}
}

func TestImportRejectsBadInputAtomically(t *testing.T) {
	s, _ := openTest(t, &Options{Dim: 4})
	mustImport(t, s, tenA, tr("A", "calls", "B"))
	before, _ := s.Stats(tenA)
	good := func() []TripletInput {
		var ts []TripletInput
		for i := range 100 {
			ts = append(ts, tr(fmt.Sprintf("N%d", i), "calls", fmt.Sprintf("M%d", i)))
		}
		return ts
	}
	cases := map[string]func(ts []TripletInput){
		"missing target on 57":  func(ts []TripletInput) { ts[56].Target = "" },
		"whitespace name":       func(ts []TripletInput) { ts[3].Source = " \t " },
		"name over 1KiB":        func(ts []TripletInput) { ts[0].Source = strings.Repeat("x", 1025) },
		"invalid utf8":          func(ts []TripletInput) { ts[9].Target = "ab\xffcd" },
		"relationship newline":  func(ts []TripletInput) { ts[1].Relationship = "calls\nsecretly" },
		"relationship too long": func(ts []TripletInput) { ts[1].Relationship = strings.Repeat("r", 1025) },
		"weight out of range":   func(ts []TripletInput) { ts[2].Weight = f64(1.5) },
		"vector wrong dim":      func(ts []TripletInput) { ts[2].SourceVector = []float32{1, 2} },
		"bad project id":        func(ts []TripletInput) { ts[2].TargetProjectID = "a b" },
	}
	for name, mutate := range cases {
		ts := good()
		mutate(ts)
		_, err := s.Import(context.Background(), tenA, ts, ImportOptions{})
		var ve *ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: want validation error, got %v", name, err)
			continue
		}
		if name == "missing target on 57" && (len(ve.Lines) != 1 || ve.Lines[0].Line != 57) {
			t.Errorf("line not named: %+v", ve.Lines)
		}
		if after, _ := s.Stats(tenA); after.Nodes != before.Nodes || after.Triplets != before.Triplets {
			t.Errorf("%s: store changed: %+v -> %+v", name, before, after)
		}
	}
	ts := good()
	ts[5].TargetOrgID = "org_other"
	if _, err := s.Import(context.Background(), tenA, ts, ImportOptions{}); !errors.Is(err, ErrForbidden) {
		t.Fatalf("cross-org from non-operator: %v", err)
	}
	if _, err := s.Import(context.Background(), Tenant{Org: "bad org", Project: "p"}, good(), ImportOptions{}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("bad org id: %v", err)
	}
	if after, _ := s.Stats(tenA); after.Nodes != before.Nodes || after.Triplets != before.Triplets {
		t.Fatalf("store changed: %+v -> %+v", before, after)
	}
	// Operators may link across orgs.
	if _, err := s.Import(context.Background(), tenA, ts, ImportOptions{AllowCrossOrg: true}); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Stats(Tenant{Org: "org_other", Project: tenA.Project}); st.Nodes != 1 {
		t.Fatalf("cross-org target: %+v", st)
	}
}

// recIndexer is an Indexer that records what it is told and persists its
// watermark in the store's aux space, as the real indexes do.
type recIndexer struct {
	s       *Store
	docs    map[uint32]string
	obs     map[uint32]string
	applied []uint64
	wm      uint64
	fail    bool
}

func (r *recIndexer) Name() string { return "rec" }
func (r *recIndexer) Apply(_ context.Context, cs *ChangeSet) error {
	if r.fail {
		return errors.New("boom")
	}
	for _, d := range cs.Upserts {
		r.docs[d.Dense] = d.Name + "|" + strings.Join(d.Aliases, ",") + "|" + d.Description
	}
	for _, d := range cs.Deletes {
		delete(r.docs, d)
	}
	if r.obs == nil {
		r.obs = map[uint32]string{}
	}
	for _, d := range cs.ObsUpserts {
		r.obs[d.Dense] = d.Content
	}
	for _, d := range cs.ObsDeletes {
		delete(r.obs, d)
	}
	r.applied = append(r.applied, cs.Seq)
	r.wm = cs.Seq
	return r.s.WriteAux(func(w *AuxWriter) error { w.Set([]byte("rec/wm"), fmt.Append(nil, cs.Seq)); return nil })
}
func (r *recIndexer) Watermark() uint64 { return r.wm }

func TestIndexerReplay(t *testing.T) {
	s, dir := openTest(t, nil)
	ix := &recIndexer{s: s, docs: map[uint32]string{}}
	if err := s.Attach(context.Background(), ix); err != nil {
		t.Fatal(err)
	}
	mustImport(t, s, tenA, tr("A", "calls", "B"))
	mustImport(t, s, tenA, tr("A", "calls", "B")) // nothing changes: no change set
	mustImport(t, s, tenA, TripletInput{Source: "a-", Relationship: "calls", Target: "C", SourceDescription: "desc"})
	if len(ix.docs) != 3 || ix.docs[0] != "A|a-|desc" || !slices.Equal(ix.applied, []uint64{1, 2}) {
		t.Fatalf("indexer saw %v %v", ix.docs, ix.applied)
	}
	// The indexer misses writes (it fails, as after a crash between commit
	// and index update): they succeed, being stored, and the store reports
	// the index as behind.
	ix.fail = true
	s.applyBackoff = time.Microsecond
	if _, err := s.Import(context.Background(), tenA, []TripletInput{tr("D", "calls", "E")}, ImportOptions{}); err != nil {
		t.Fatalf("import the indexer failed: %v", err)
	}
	c, _ := s.QueryTriplets(tenA, TripletQuery{Object: "C"})
	if err := s.DeleteNode(context.Background(), tenA, c[0].TargetNodeID); err != nil {
		t.Fatalf("delete the indexer failed: %v", err)
	}
	if err := s.IndexFailure(); !errors.Is(err, ErrIndexBehind) {
		t.Fatalf("IndexFailure after writes the indexer failed: %v", err)
	}
	if err := s.Sync(context.Background()); !errors.Is(err, ErrIndexBehind) {
		t.Fatalf("Sync after writes the indexer failed: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, dir, nil)
	ix2 := &recIndexer{s: s, docs: map[uint32]string{}, wm: 2}
	for k, v := range ix.docs {
		ix2.docs[k] = v
	}
	if err := s.Attach(context.Background(), ix2); err != nil {
		t.Fatal(err)
	}
	if len(ix2.docs) != 4 || ix2.docs[c[0].Dst] != "" {
		t.Fatalf("replay left %v", ix2.docs)
	}
	if _, ok := ix2.docs[c[0].Dst]; ok {
		t.Fatal("deleted node still indexed after replay")
	}
}

// TestAdjacencyOracle applies random imports and deletes and compares the
// bitmaps with a map oracle after each step and after reopening.
func TestAdjacencyOracle(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	s, dir := openTest(t, nil)
	type key struct{ s, r, d string }
	oracle := map[Tenant]map[key]bool{}
	tenants := []Tenant{tenA, tenA2, tenB}
	names := func() string { return fmt.Sprintf("n%d", rng.IntN(40)) }
	for step := range 60 {
		ten := tenants[rng.IntN(len(tenants))]
		if oracle[ten] == nil {
			oracle[ten] = map[key]bool{}
		}
		switch rng.IntN(5) {
		case 0: // delete a node
			ts, _ := s.QueryTriplets(ten, TripletQuery{Limit: 10000})
			if len(ts) == 0 {
				continue
			}
			victim := ts[rng.IntN(len(ts))]
			if err := s.DeleteNode(context.Background(), ten, victim.SourceNodeID); err != nil {
				t.Fatal(err)
			}
			vn := NormalizeName(victim.Source)
			for k := range oracle[ten] {
				if k.s == vn || k.d == vn {
					delete(oracle[ten], k)
				}
			}
		case 1: // delete a triplet
			ts, _ := s.QueryTriplets(ten, TripletQuery{Limit: 10000})
			if len(ts) == 0 {
				continue
			}
			v := ts[rng.IntN(len(ts))]
			if err := s.DeleteTriplet(context.Background(), ten, v.Source, v.Relationship, v.Target); err != nil {
				t.Fatal(err)
			}
			delete(oracle[ten], key{NormalizeName(v.Source), v.Relationship, NormalizeName(v.Target)})
		default:
			var in []TripletInput
			for range 1 + rng.IntN(30) {
				x := tr(names(), []string{"calls", "depends_on", "contains"}[rng.IntN(3)], names())
				in = append(in, x)
				oracle[ten][key{NormalizeName(x.Source), x.Relationship, NormalizeName(x.Target)}] = true
			}
			mustImport(t, s, ten, in...)
		}
		if step%20 == 19 {
			s = reopen(t, s, dir, nil)
		}
		for _, ten := range tenants {
			ts, _ := s.QueryTriplets(ten, TripletQuery{Limit: 10000})
			got := map[key]bool{}
			for _, x := range ts {
				got[key{NormalizeName(x.Source), x.Relationship, NormalizeName(x.Target)}] = true
			}
			if len(got) != len(oracle[ten]) {
				t.Fatalf("step %d %v: %d triplets, oracle %d", step, ten, len(got), len(oracle[ten]))
			}
			for k := range oracle[ten] {
				if !got[k] {
					t.Fatalf("step %d: missing %v", step, k)
				}
				// Subject and object queries agree with the full list.
				bySubj, _ := s.QueryTriplets(ten, TripletQuery{Subject: k.s, Predicate: k.r, Object: k.d})
				if len(bySubj) != 1 {
					t.Fatalf("step %d: subject+predicate+object query for %v gave %d", step, k, len(bySubj))
				}
			}
		}
		if err := s.Check(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
}

func TestTopEdges(t *testing.T) {
	s, _ := openTest(t, nil)
	var in []TripletInput
	for i := range 200 {
		x := tr("Hub", "calls", fmt.Sprintf("N%03d", i))
		if i%2 == 1 {
			x = tr(fmt.Sprintf("N%03d", i), "calls", "Hub")
		}
		x.Weight = f64(float64(i%17) / 16)
		in = append(in, x)
	}
	loop := tr("Hub", "calls", "Hub")
	loop.Weight = f64(1)
	in = append(in, loop)
	mustImport(t, s, tenA, in...)
	_ = s.View(func(v *View) error {
		hub, _ := v.Lookup(tenA, "hub")
		all := v.TopEdges(nil, hub, 0)
		if len(all) != 201 {
			t.Fatalf("incident edges: %d", len(all))
		}
		for _, limit := range []int{1, 5, 64, 200, 201, 500} {
			got := v.TopEdges(nil, hub, limit)
			want := all[:min(limit, len(all))]
			if !slices.Equal(got, want) {
				t.Fatalf("limit %d: got %v want %v", limit, got, want)
			}
		}
		for i := 1; i < len(all); i++ {
			a, b := v.Edge(all[i-1]), v.Edge(all[i])
			if a.Weight < b.Weight || (a.Weight == b.Weight && all[i-1] > all[i]) {
				t.Fatalf("order broken at %d", i)
			}
		}
		return nil
	})
}

func TestImportManyNewTenantsInOneBatch(t *testing.T) {
	s, dir := openTest(t, nil)
	in := []TripletInput{tr("A", "calls", "B")}
	for _, p := range []string{"p2", "p3", "p4"} {
		x := tr("A", "calls", "X"+p)
		x.TargetProjectID = p
		in = append(in, x)
		y := tr("Y"+p, "calls", "Z")
		y.SourceProjectID = p
		in = append(in, y)
	}
	x := tr("A", "calls", "Far")
	x.TargetOrgID, x.TargetProjectID = "org_z", "p9"
	in = append(in, x)
	if _, err := s.Import(context.Background(), tenA, in, ImportOptions{AllowCrossOrg: true}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"p2", "p3", "p4"} {
		if st, _ := s.Stats(Tenant{Org: "org_a", Project: p}); st.Nodes != 2 {
			t.Fatalf("%s: %+v", p, st)
		}
	}
	if st, _ := s.Stats(Tenant{Org: "org_z", Project: "p9"}); st.Nodes != 1 {
		t.Fatalf("org_z: %+v", st)
	}
	reopen(t, s, dir, nil)
}

// TestRankedCacheFollowsWrites reads TopEdges (filling the cache), then
// changes weights, adds and deletes edges; Check compares the cache with a
// fresh ranking after each step.
func TestRankedCacheFollowsWrites(t *testing.T) {
	s, _ := openTest(t, nil)
	hub := func() []uint32 {
		var out []uint32
		_ = s.View(func(v *View) error {
			n, _ := v.Lookup(tenA, "Hub")
			out = v.TopEdges(nil, n, 0)
			return nil
		})
		return out
	}
	mustImport(t, s, tenA, tr("Hub", "calls", "A"), tr("Hub", "calls", "B"), tr("C", "calls", "Hub"))
	if len(hub()) != 3 {
		t.Fatal("want 3 edges")
	}
	x := tr("Hub", "calls", "B")
	x.Weight = f64(0.9)
	mustImport(t, s, tenA, x)
	if got := hub(); len(got) != 3 {
		t.Fatal(got)
	} else if e, _ := s.Triplet(got[0]); e.Target != "B" {
		t.Fatalf("heaviest edge first: %+v", e)
	}
	mustImport(t, s, tenA, tr("Hub", "calls", "D"))
	if len(hub()) != 4 {
		t.Fatal("new edge missing from the ranking")
	}
	if err := s.DeleteTriplet(context.Background(), tenA, "Hub", "calls", "B"); err != nil {
		t.Fatal(err)
	}
	if len(hub()) != 3 {
		t.Fatal("deleted edge still ranked")
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}
