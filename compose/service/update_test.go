package service

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/policy"
)

// An observation update is a Write of one org's data, replayed alike: two
// Apps applying the same logged writes (through JSON, as a cluster's log
// carries them) hold the same observation, and a search on either finds
// the new words and not the old.
func TestUpdateObservationWrite(t *testing.T) {
	ctx := context.Background()
	ten := engine.Tenant{Org: "org_a", Project: "p1"}
	content, weight := "quokka habitats changed", 0.9
	writes := []Write{
		{Kind: WriteObservations, Org: ten.Org, Project: ten.Project, Observations: []engine.ObservationInput{{Content: "wombat burrows collapse",
			Metadata: engine.ObservationMeta{Tags: []string{"old"}}}}},
		{Kind: WriteUpdateObservation, Org: ten.Org, Project: ten.Project, ObservationPatch: &engine.ObservationPatch{Content: &content}},
		{Kind: WriteUpdateObservation, Org: ten.Org, Project: ten.Project, ObservationPatch: &engine.ObservationPatch{Weight: &weight}},
	}
	if (Write{Kind: WriteUpdateObservation}).Global() {
		t.Fatal("an observation update is global")
	}
	var got []engine.Observation
	for range 2 {
		a := open(t)
		var id string
		for i, w := range writes {
			raw, err := json.Marshal(w)
			if err != nil {
				t.Fatal(err)
			}
			var logged Write
			if err := json.Unmarshal(raw, &logged); err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				logged.ID = id
			}
			res, err := a.Apply(ctx, logged, ApplyOptions{Now: time.Unix(1_800_000_000, 0), IDs: engine.NewIDSource([]byte("seed"))})
			if err != nil {
				t.Fatalf("apply %s: %v", w.Kind, err)
			}
			if i == 0 {
				id = res.IDs[0]
			}
		}
		o, err := a.Store.Observation(ten, id)
		if err != nil || o.Content != content || o.Weight != weight || len(o.Metadata.Tags) != 1 {
			t.Fatalf("after the updates: %+v %v", o, err)
		}
		got = append(got, o)
		for q, want := range map[string]int{"quokka": 1, "wombat": 0} {
			l, err := a.Composer.Observations(ctx, policy.Identity{AgentID: "op", OrgID: ten.Org, Role: policy.RoleOperator}, ten, compose.ObservationListRequest{Query: q})
			if err != nil || len(l.Observations) != want {
				t.Fatalf("search %q: %d hits, want %d (%v)", q, len(l.Observations), want, err)
			}
		}
		// Refused alike on every replica: no patch, another project's id.
		if _, err := a.Apply(ctx, Write{Kind: WriteUpdateObservation, Org: ten.Org, Project: ten.Project, ID: id}, ApplyOptions{}); !Refused(err) {
			t.Fatalf("no patch: %v", err)
		}
		_, err = a.Apply(ctx, Write{Kind: WriteUpdateObservation, Org: ten.Org, Project: "p2", ID: id, ObservationPatch: &engine.ObservationPatch{Weight: &weight}}, ApplyOptions{})
		if !Refused(err) || !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("another project's id: %v", err)
		}
	}
	if got[0].ID != got[1].ID || got[0].Content != got[1].Content || !got[0].CreatedAt.Equal(got[1].CreatedAt) {
		t.Fatalf("replicas differ: %+v %+v", got[0], got[1])
	}
}
