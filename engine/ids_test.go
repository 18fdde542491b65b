package engine_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/enginetest"
)

// TestIDSourceReplays: the same write with the same seed and time gives
// two stores the same node and observation ids (a replica applying a
// replicated write); another seed, or none, gives others.
func TestIDSourceReplays(t *testing.T) {
	ctx := context.Background()
	ten := engine.Tenant{Org: "o", Project: "p"}
	now := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	apply := func(seed []byte) (nodes, obs []string) {
		st := enginetest.Open(t, nil)
		o := engine.ImportOptions{Now: now}
		if seed != nil {
			o.IDs = engine.NewIDSource(seed)
		}
		if _, err := st.Import(ctx, ten, []engine.TripletInput{{Source: "A", Relationship: "calls", Target: "B"}, {Source: "B", Relationship: "uses", Target: "C"}}, o); err != nil {
			t.Fatal(err)
		}
		ids, err := st.AddObservations(ctx, ten, []engine.ObservationInput{{Content: "one"}, {Content: "two"}}, o)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := st.QueryTriplets(ten, engine.TripletQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range ts {
			nodes = append(nodes, tr.Source+"="+tr.SourceNodeID, tr.Target+"="+tr.TargetNodeID)
			n, err := st.Node(ten, tr.SourceNodeID)
			if err != nil || !n.CreatedAt.Equal(now) {
				t.Errorf("node %s created %v %v", tr.Source, n.CreatedAt, err)
			}
		}
		slices.Sort(nodes)
		return nodes, ids
	}
	n1, o1 := apply([]byte("shard0/17"))
	n2, o2 := apply([]byte("shard0/17"))
	if !slices.Equal(n1, n2) || !slices.Equal(o1, o2) {
		t.Fatalf("the same seed gave other ids:\n%v %v\n%v %v", n1, o1, n2, o2)
	}
	n3, o3 := apply([]byte("shard0/18"))
	n4, o4 := apply(nil)
	if slices.Equal(n1, n3) || slices.Equal(o1, o3) || slices.Equal(n1, n4) || slices.Equal(o1, o4) {
		t.Fatal("another seed, or none, gave the same ids")
	}
}
