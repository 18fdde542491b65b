package service

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kgctx/kgctx/compose"
	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/enginetest"
	"github.com/kgctx/kgctx/policy"
)

// CloseQuick does not wait for the indexes: what they had not applied,
// an undone import's deletions included, is replayed from the store's
// change log at the next open, and blocks and the store's check agree.
func TestCloseQuickReplaysAtOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: imports tens of thousands of triplets")
	}
	dir := filepath.Join(t.TempDir(), "data")
	ctx := context.Background()
	ten := engine.Tenant{Org: "org_q", Project: "p"}
	triplets := func(prefix string, n int) []engine.TripletInput {
		in := make([]engine.TripletInput, n)
		for i := range in {
			in[i] = engine.TripletInput{Source: fmt.Sprintf("%s_svc_%d", prefix, i), Relationship: "calls", Target: fmt.Sprintf("%s_db_%d", prefix, i)}
		}
		return in
	}
	a, err := Open(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Store.Import(ctx, ten, triplets("kept", 30000), engine.ImportOptions{NoWait: true}); err != nil {
		t.Fatal(err)
	}
	// An import cut short: undone, its deletions queued for the indexes.
	cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	_, ierr := a.Store.Import(cctx, ten, triplets("undone", 60000), engine.ImportOptions{NoWait: true})
	cancel()
	if err := a.CloseQuick(); err != nil {
		t.Fatal(err)
	}

	a, err = Open(ctx, Config{DataDir: dir})
	if err != nil {
		t.Fatalf("reopen after a quick close: %v", err)
	}
	defer a.Close()
	enginetest.Check(t, a.Store)
	block := func(q string) string {
		b, err := a.Composer.GraphBlock(ctx, compose.GraphRequest{Identity: policy.Identity{AgentID: "a", OrgID: "org_q", Role: policy.RoleAgent},
			Scope: ten, QueryText: q, BudgetTokens: 200, TopK: 5, Depth: 1})
		if err != nil {
			t.Fatal(err)
		}
		return b.Block
	}
	if b := block("kept_svc_29999"); !strings.Contains(b, "kept_svc_29999 → calls → kept_db_29999") {
		t.Fatalf("the last triplet of a finished import is not found after the replay:\n%s", b)
	}
	if ierr == nil {
		t.Log("the second import finished within its deadline: its undo was not exercised")
		return
	}
	st, err := a.Store.Stats(ten)
	if err != nil {
		t.Fatal(err)
	}
	if st.Triplets != 30000 {
		t.Fatalf("%d triplets after an undone import, want 30000", st.Triplets)
	}
	if b := block("undone_svc_1"); strings.Contains(b, "undone_") {
		t.Fatalf("an undone import's node is found:\n%s", b)
	}
}
