package service

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/delivery"
	"github.com/kgctx/kgctx/engine/enginetest"
	"github.com/kgctx/kgctx/engine/sessionlog"
	"github.com/kgctx/kgctx/policy"
)

func open(t *testing.T) *App {
	t.Helper()
	a, err := Open(context.Background(), Config{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		enginetest.Check(t, a.Store)
		a.Close()
	})
	return a
}

// A claim leases, composes and logs the block, enqueues it only when the
// project's runtimeInjectEnabled is on, and binds the session to its
// project.
func TestClaim(t *testing.T) {
	a := open(t)
	ctx := context.Background()
	ten := engine.Tenant{Org: "org_a", Project: "p1"}
	if _, err := a.Store.AddObservations(ctx, ten, []engine.ObservationInput{{Content: "auth middleware rejects expired tokens"}}, engine.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	id := policy.Identity{AgentID: "agent", OrgID: "org_a", Role: policy.RoleAgent}
	claim := func(session string) ClaimResult {
		r, err := a.Claim(ctx, ClaimRequest{Session: session, Duration: time.Minute, Identity: id, Scope: ten, WorkType: compose.WorkBugFix,
			Query: "auth middleware", Lease: delivery.Lease{WorkerID: "w", OrgID: "org_a", ProjectID: "p1"}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	inject := func(on bool) {
		mem, err := a.Settings.MemoryConfig(ten)
		if err != nil {
			t.Fatal(err)
		}
		mem.RuntimeInjectEnabled = on
		if err := a.Settings.SetMemoryConfig(ten, mem); err != nil {
			t.Fatal(err)
		}
	}
	inject(false)
	r := claim("ses_1")
	if r.Lease.WorkerID != "w" || r.Block == nil || r.Block.Block == "" || r.Block.LogID == "" || r.Enqueued || r.Inject != nil {
		t.Fatalf("claim with runtime injection off: %+v", r)
	}
	inject(true)
	r = claim("ses_2")
	if !r.Enqueued || r.Inject == nil || r.Inject.Text != r.Block.Block {
		t.Fatalf("claim with runtime injection on: %+v", r)
	}
	b, err := a.SessionBinding("org_a", "ses_2")
	if err != nil || !slices.Equal(b.Projects, []string{"p1"}) || b.Lease == nil || b.Lease.WorkerID != "w" {
		t.Fatalf("SessionBinding = %+v, %v", b, err)
	}
	if b, err := a.SessionBinding("org_a", "ses_none"); err != nil || len(b.Projects) != 0 || b.Lease != nil {
		t.Fatalf("an unknown session is bound to %+v (%v)", b, err)
	}
	res, err := a.Feedback(ctx, "org_a", "ses_2", sessionlog.OutcomeHelpful)
	if err != nil || res.Observations == 0 {
		t.Fatalf("feedback: %+v, %v", res, err)
	}
}
