package engine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// exact is a triplet whose names are both exact.
func exact(src, rel, dst string) TripletInput {
	return TripletInput{Source: src, Relationship: rel, Target: dst, SourceExact: true, TargetExact: true}
}

// TestExactNames: an exact name is its own identity, case kept and
// nothing folded: Conn.close and Conn.Close are two nodes, and neither
// merges with a folded name spelt the same; re-importing finds them again.
func TestExactNames(t *testing.T) {
	s, _ := openTest(t, nil)
	res := mustImport(t, s, tenA,
		exact("nats.Conn.Close", "calls", "nats.Conn.close"),
		exact("nats.Conn.close", "calls", "nats.Conn.flush_pending"),
		exact("nats.Conn.flushPending", "calls", "nats.Conn.close"),
		exact("nats.Conn.Close", "calls", "nats.Msg.Respond"),
		tr("nats.Conn.Close", "related_to", "Closing"), // folded: a node of its own
	)
	if res.NodesCreated != 7 {
		t.Fatalf("created %d nodes, want 7 (two exact Closes, two exact flushes, Respond, a folded Close, Closing)", res.NodesCreated)
	}
	if res := mustImport(t, s, tenA, exact("nats.Conn.Close", "calls", "nats.Conn.close")); res.NodesCreated != 0 || res.EdgesCreated != 0 {
		t.Fatalf("re-import created %+v", res)
	}
	err := s.View(func(v *View) error {
		var names []string
		it := v.ScopeNodes(tenA).Iterator()
		for it.HasNext() {
			n := it.Next()
			name := v.NodeName(n)
			if v.NodeExact(n) {
				name += " exact"
			}
			names = append(names, name)
		}
		slices.Sort(names)
		if want := []string{"Closing", "nats.Conn.Close", "nats.Conn.Close exact", "nats.Conn.close exact", "nats.Conn.flushPending exact",
			"nats.Conn.flush_pending exact", "nats.Msg.Respond exact"}; !slices.Equal(names, want) {
			t.Errorf("nodes %q, want %q", names, want)
		}
		// Lookups: the exact name finds its node; a folded spelling finds
		// the folded node when there is one, else the one exact node that
		// folds so; an ambiguous folded spelling finds none.
		for q, want := range map[string]string{
			"nats.Conn.Close":         "nats.Conn.Close exact",
			"nats.Conn.close":         "nats.Conn.close exact",
			"NATS.CONN.CLOSE":         "nats.Conn.Close", // the folded node
			"nats.conn.close":         "nats.Conn.Close", // a folded node wins over an exact one that folds so
			"closing":                 "Closing",
			"nats.msg.respond":        "nats.Msg.Respond exact", // the only exact name that folds so
			"nats.Conn.flush_pending": "nats.Conn.flush_pending exact",
			"nats.conn.flush-pending": "", // flush_pending and flushPending both fold so: ambiguous
			"nats.conn.flushpending":  "",
		} {
			got := ""
			if n, ok := v.Lookup(tenA, q); ok {
				got = v.NodeName(n)
				if v.NodeExact(n) {
					got += " exact"
				}
			}
			if got != want {
				t.Errorf("Lookup(%q) = %q, want %q", q, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Triplet queries name exact nodes by their exact names.
	if ts, err := s.QueryTriplets(tenA, TripletQuery{Subject: "nats.Conn.close"}); err != nil || len(ts) != 1 || ts[0].Target != "nats.Conn.flush_pending" {
		t.Errorf("subject=nats.Conn.close: %+v %v", ts, err)
	}
	if ts, err := s.QueryTriplets(tenA, TripletQuery{Object: "nats.Conn.close"}); err != nil || len(ts) != 2 {
		t.Errorf("object=nats.Conn.close: %+v %v", ts, err)
	}
	// Deleting by exact name deletes that edge only.
	if err := s.DeleteTriplet(context.Background(), tenA, "nats.Conn.flushPending", "calls", "nats.Conn.close"); err != nil {
		t.Fatal(err)
	}
	if ts, _ := s.QueryTriplets(tenA, TripletQuery{Object: "nats.Conn.close"}); len(ts) != 1 || ts[0].Source != "nats.Conn.Close" {
		t.Errorf("after the delete: %+v", ts)
	}
}

// TestExactNamesSurviveReopen: exactness, locations and signatures are
// stored: a reopened store finds the same nodes with the same fields.
func TestExactNamesSurviveReopen(t *testing.T) {
	s, dir := openTest(t, nil)
	in := exact("nats.Conn.Close", "calls", "nats.Conn.close")
	in.SourceLocation = &Location{File: "nats.go", Line: 120, EndLine: 180}
	in.SourceSignature = "func (nc *Conn) Close()"
	in.TargetLocation = &Location{File: "nats.go", Line: 200}
	mustImport(t, s, tenA, in, tr("nats.conn.close", "related_to", "x"))
	s = reopen(t, s, dir, nil)
	if res := mustImport(t, s, tenA, in); res.NodesCreated != 0 || res.NodesUpdated != 0 {
		t.Errorf("re-import after reopen: %+v", res)
	}
	err := s.View(func(v *View) error {
		n, ok := v.Lookup(tenA, "nats.Conn.Close")
		if !ok || !v.NodeExact(n) {
			t.Fatalf("exact node lost: %v", ok)
		}
		if l, ok := v.NodeLocation(n); !ok || l != (Location{File: "nats.go", Line: 120, EndLine: 180}) {
			t.Errorf("location %+v %v", l, ok)
		}
		if sig := v.NodeSignature(n); sig != "func (nc *Conn) Close()" {
			t.Errorf("signature %q", sig)
		}
		n, _ = v.Lookup(tenA, "nats.Conn.close")
		if l, ok := v.NodeLocation(n); !ok || l != (Location{File: "nats.go", Line: 200, EndLine: 200}) || v.NodeSignature(n) != "" {
			t.Errorf("target location %+v %v, signature %q", l, ok, v.NodeSignature(n))
		}
		// The folded node of the same spelling is another node, plain.
		f, ok := v.Lookup(tenA, "x")
		if !ok {
			t.Fatal("no x")
		}
		for _, e := range v.Ranked(f) {
			src := e.Other()
			if v.NodeExact(src) || v.NodeName(src) != "nats.conn.close" {
				t.Errorf("the folded node: %q exact %v", v.NodeName(src), v.NodeExact(src))
			}
			if _, ok := v.NodeLocation(src); ok {
				t.Error("the folded node has a location")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCodeFields: locations and signatures round trip through an import,
// the node's JSON and an export; an import that omits them keeps them; a
// new one replaces them.
func TestCodeFields(t *testing.T) {
	s, _ := openTest(t, nil)
	in := exact("nats.Conn.doReconnect", "calls", "nats.Conn.close")
	in.SourceLocation = &Location{File: "nats.go", Line: 120, EndLine: 180}
	in.SourceSignature = "func (nc *Conn) doReconnect(err error, forceReconnect bool)"
	in.SourceDescription = "doReconnect reconnects."
	mustImport(t, s, tenA, in)
	node := func(name string) Node {
		t.Helper()
		var id string
		s.View(func(v *View) error {
			if n, ok := v.Lookup(tenA, name); ok {
				id = v.NodeID(n)
			}
			return nil
		})
		n, err := s.Node(tenA, id)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := node("nats.Conn.doReconnect")
	b, _ := json.Marshal(n)
	for _, want := range []string{`"exact":true`, `"location":{"file":"nats.go","line":120,"endLine":180}`,
		`"signature":"func (nc *Conn) doReconnect(err error, forceReconnect bool)"`, `"description":"doReconnect reconnects."`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("node JSON %s lacks %s", b, want)
		}
	}
	if n := node("nats.Conn.close"); n.Location != nil || n.Signature != "" || !n.Exact {
		t.Errorf("target: %+v", n)
	}
	// Omitted: kept. Given: replaced.
	mustImport(t, s, tenA, exact("nats.Conn.doReconnect", "calls", "nats.Conn.flush"))
	if n := node("nats.Conn.doReconnect"); n.Location == nil || n.Location.Line != 120 || n.Signature == "" {
		t.Errorf("after an import without code fields: %+v", n)
	}
	moved := exact("nats.Conn.doReconnect", "calls", "nats.Conn.flush")
	moved.SourceLocation = &Location{File: "nats.go", Line: 130, EndLine: 190}
	if res := mustImport(t, s, tenA, moved); res.NodesUpdated != 1 {
		t.Errorf("a moved symbol: %+v", res)
	}
	if n := node("nats.Conn.doReconnect"); n.Location == nil || n.Location.Line != 130 || n.Location.EndLine != 190 || n.Signature != in.SourceSignature {
		t.Errorf("after the move: %+v", n)
	}
	// The export carries them, and imports back into the same graph.
	var out []TripletInput
	if err := s.ExportTriplets(tenA, func(in *TripletInput) error { out = append(out, *in); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || !out[0].SourceExact || !out[0].TargetExact || out[0].SourceLocation == nil || out[0].SourceLocation.Line != 130 || out[0].SourceSignature == "" {
		t.Fatalf("export: %+v", out)
	}
	s2, _ := openTest(t, nil)
	mustImport(t, s2, tenA, out...)
	var back []TripletInput
	if err := s2.ExportTriplets(tenA, func(in *TripletInput) error { back = append(back, *in); return nil }); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(out)
	c, _ := json.Marshal(back)
	if string(a) != string(c) {
		t.Errorf("export, import, export differ:\n%s\n%s", a, c)
	}
}

// TestCodeFieldsValidation: malformed locations and signatures are
// refused, naming the line and the field, and nothing is written.
func TestCodeFieldsValidation(t *testing.T) {
	s, _ := openTest(t, nil)
	ok := exact("a.F", "calls", "a.G")
	for name, c := range map[string]struct {
		mod  func(*TripletInput)
		want string
	}{
		"empty file":     {func(in *TripletInput) { in.SourceLocation = &Location{Line: 1} }, "sourceLocation.file is empty"},
		"long file":      {func(in *TripletInput) { in.TargetLocation = &Location{File: strings.Repeat("a", 1025), Line: 1} }, "targetLocation.file is 1025 bytes"},
		"control":        {func(in *TripletInput) { in.SourceLocation = &Location{File: "a\nb.go", Line: 1} }, "sourceLocation.file contains a control character"},
		"line 0":         {func(in *TripletInput) { in.SourceLocation = &Location{File: "a.go"} }, "sourceLocation.line 0"},
		"negative line":  {func(in *TripletInput) { in.SourceLocation = &Location{File: "a.go", Line: -3} }, "sourceLocation.line -3"},
		"end before":     {func(in *TripletInput) { in.TargetLocation = &Location{File: "a.go", Line: 9, EndLine: 3} }, "targetLocation.endLine 3"},
		"long signature": {func(in *TripletInput) { in.SourceSignature = "func F(" + strings.Repeat("x", 256) + ")" }, "sourceSignature is 264 bytes, over the limit of 256"},
		"two lines":      {func(in *TripletInput) { in.TargetSignature = "func F()\nfunc G()" }, "targetSignature contains a control character"},
		"bad utf-8":      {func(in *TripletInput) { in.TargetSignature = "func \xff()" }, "targetSignature is not valid UTF-8"},
	} {
		in := ok
		c.mod(&in)
		_, err := s.Import(context.Background(), tenA, []TripletInput{ok, in}, ImportOptions{})
		var ve *ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidInput) || len(ve.Lines) != 1 || ve.Lines[0].Line != 2 || !strings.Contains(ve.Lines[0].Err, c.want) {
			t.Errorf("%s: %v, want line 2: %q", name, err, c.want)
		}
	}
	if st, err := s.Stats(tenA); err != nil || st.Nodes != 0 {
		t.Errorf("something was written: %+v %v", st, err)
	}
	// The bounds themselves are accepted.
	in := ok
	in.SourceLocation = &Location{File: strings.Repeat("a", 1024), Line: 1, EndLine: 1}
	in.SourceSignature = strings.Repeat("x", 256)
	in.TargetLocation = &Location{File: "a.go", Line: 5} // no endLine: the line alone
	mustImport(t, s, tenA, in)
}

// TestImportGrowthExact: the quota's count resolves names as Import does:
// an exact name and a folded one spelt the same are two new nodes, an
// exact name already stored none, and two exact names that differ only in
// case two.
func TestImportGrowthExact(t *testing.T) {
	s, _ := openTest(t, nil)
	mustImport(t, s, tenA, exact("nats.Conn.Close", "calls", "nats.Conn.flush"), tr("Closing", "related_to", "nats.Conn.flush"))
	in := []TripletInput{
		exact("nats.Conn.Close", "calls", "nats.Conn.close"), // Close exists; close is new
		tr("nats.Conn.Close", "related_to", "closing"),       // a folded Close is new; closing is Closing
		exact("nats.Conn.Close", "calls", "nats.Conn.flush"), // exists, edge too
		exact("nats.Conn.CLOSE", "calls", "nats.Conn.flush"), // new
	}
	g, err := s.ImportGrowth(tenA, in)
	if err != nil {
		t.Fatal(err)
	}
	if got := g[tenA]; got.Nodes != 3 || got.Edges != 3 {
		t.Errorf("growth %+v, want 3 nodes and 3 edges", got)
	}
	res := mustImport(t, s, tenA, in...)
	if res.NodesCreated != g[tenA].Nodes || res.EdgesCreated != g[tenA].Edges {
		t.Errorf("import created %d nodes and %d edges, growth said %+v", res.NodesCreated, res.EdgesCreated, g[tenA])
	}
}

// TestStoreV4OpensAsBefore: a store written before exact names (version
// 4) opens, is upgraded, and behaves as before: folded identity, the same
// nodes and edges; exact names can then be added beside its nodes.
func TestStoreV4OpensAsBefore(t *testing.T) {
	s, dir := openTest(t, nil)
	// A version-4 build wrote version 1 node records only, which this
	// build writes for nodes with neither an exact name nor code fields.
	mustImport(t, s, tenA, tr("AuthService", "calls", "TokenStore"), tr("auth_service", "depends_on", "nats.Conn.Close"))
	before := dumpTriplets(t, s, tenA)
	setStoreVersion(t, s, 4)
	s = reopen(t, s, dir, nil)
	if v := storedVersion(t, s); v != storeVersion {
		t.Fatalf("version %d after the upgrade", v)
	}
	if got := dumpTriplets(t, s, tenA); got != before {
		t.Errorf("the triplets changed:\n%s\n%s", before, got)
	}
	if res := mustImport(t, s, tenA, tr("Auth-Service", "calls", "token store")); res.NodesCreated != 0 || res.EdgesCreated != 0 {
		t.Errorf("folding after the upgrade: %+v", res)
	}
	if res := mustImport(t, s, tenA, exact("nats.Conn.Close", "calls", "nats.Conn.close")); res.NodesCreated != 2 {
		t.Errorf("exact names beside the old nodes: %+v", res)
	}
	if ts, err := s.QueryTriplets(tenA, TripletQuery{Subject: "AUTH SERVICE"}); err != nil || len(ts) != 2 {
		t.Errorf("folded lookup after the upgrade: %+v %v", ts, err)
	}
}

func dumpTriplets(t *testing.T, s *Store, ten Tenant) string {
	t.Helper()
	var b strings.Builder
	if err := s.ExportTriplets(ten, func(in *TripletInput) error {
		j, _ := json.Marshal(in)
		b.Write(j)
		b.WriteByte('\n')
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestExactBitFollowsDeletes: NodeExact reads a bitset beside the
// records; deleting an exact node clears its bit (Check compares every
// bit with its record), nodes added later and a reopened store keep the
// bits right.
func TestExactBitFollowsDeletes(t *testing.T) {
	s, dir := openTest(t, nil)
	mustImport(t, s, tenA, exact("pkg.A", "calls", "pkg.B"), tr("plain one", "related_to", "plain two"))
	var a uint32
	var aID string
	if err := s.View(func(v *View) error {
		n, ok := v.Lookup(tenA, "pkg.A")
		if !ok || !v.NodeExact(n) {
			t.Fatalf("pkg.A: found %v", ok)
		}
		a, aID = n, v.NodeID(n)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteNode(context.Background(), tenA, aID); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil {
		t.Fatalf("after the delete: %v", err)
	}
	mustImport(t, s, tenA, tr("plain three", "related_to", "plain four"))
	if err := s.Check(); err != nil {
		t.Fatalf("after a new plain node: %v", err)
	}
	s = reopen(t, s, dir, nil)
	if err := s.Check(); err != nil {
		t.Fatalf("after reopening: %v", err)
	}
	if err := s.View(func(v *View) error {
		if v.Live(a) || v.NodeExact(a) {
			t.Errorf("deleted pkg.A (%d): live %v, exact %v", a, v.Live(a), v.NodeExact(a))
		}
		it := v.ScopeNodes(tenA).Iterator()
		for it.HasNext() {
			n := it.Next()
			if want := v.NodeName(n) == "pkg.B"; v.NodeExact(n) != want {
				t.Errorf("%q exact %v, want %v", v.NodeName(n), v.NodeExact(n), want)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
