package engine

import (
	"context"
	"testing"
)

// TestNodeWeightMirror: View.NodeWeight answers a default weight from the
// plainW bit and any other from nodeW; it equals the node record's weight
// through a move away from the default, a move back onto it exactly, a
// delete, and a reopen (the oracle is View.Node, which reads the record).
// View.Live, read from liveW, follows the delete.
func TestNodeWeightMirror(t *testing.T) {
	s, dir := openTest(t, nil)
	ctx := context.Background()
	tn := Tenant{Org: "org_a", Project: "p"}
	mustImport(t, s, tn, tr("A", "calls", "B"), tr("B", "calls", "C"))
	check := func(when string, want map[string]float64) {
		t.Helper()
		s.View(func(v *View) error {
			for name, w := range want {
				n, ok := v.Lookup(tn, name)
				if !ok {
					t.Fatalf("%s: %s not found", when, name)
				}
				if !v.Live(n) {
					t.Errorf("%s: %s is not live", when, name)
				}
				if got, rec := v.NodeWeight(n), v.Node(n).Weight; got != w || rec != w {
					t.Errorf("%s: %s weighs %v (record %v), want %v", when, name, got, rec, w)
				}
			}
			return nil
		})
		if err := s.Check(); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
	}
	check("imported", map[string]float64{"A": DefaultWeight, "B": DefaultWeight, "C": DefaultWeight})
	b, _ := lookupID(s, tn, "B")
	if _, err := s.MoveWeights(ctx, []WeightRefs{{Scope: tn, NodeIDs: []string{b}}}, 0.5, 1); err != nil {
		t.Fatal(err)
	}
	check("moved up", map[string]float64{"A": DefaultWeight, "B": 0.75, "C": DefaultWeight})
	if _, err := s.MoveWeights(ctx, []WeightRefs{{Scope: tn, NodeIDs: []string{b}}}, 1, DefaultWeight); err != nil {
		t.Fatal(err)
	}
	check("moved back", map[string]float64{"B": DefaultWeight})
	c, _ := lookupID(s, tn, "C")
	if _, err := s.MoveWeights(ctx, []WeightRefs{{Scope: tn, NodeIDs: []string{c}}}, 0.5, 0); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, dir, nil)
	check("reopened", map[string]float64{"A": DefaultWeight, "B": DefaultWeight, "C": 0.25})
	var cn uint32
	s.View(func(v *View) error { cn, _ = v.Lookup(tn, "C"); return nil })
	if err := s.DeleteNode(ctx, tn, c); err != nil {
		t.Fatal(err)
	}
	s.View(func(v *View) error {
		if w := v.NodeWeight(cn); w != 0 || v.Live(cn) {
			t.Errorf("deleted node weighs %v, live %v; want 0, false", w, v.Live(cn))
		}
		if v.Live(uint32(v.NodeCap())) {
			t.Error("an id past the nodes is live")
		}
		return nil
	})
	check("deleted", map[string]float64{"A": DefaultWeight})
}
