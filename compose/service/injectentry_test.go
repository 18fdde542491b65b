package service

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine"
	"github.com/kgctx/kgctx/engine/delivery"
)

// TestInjectEntry: an enqueue's log entry carries what the writer gave,
// under the names the log has always used, with its version; the queue's
// fields stay out of it.
func TestInjectEntry(t *testing.T) {
	in := delivery.Inject{OrgID: "o", SessionID: "s", AgentID: "a", Text: "hello", ObservationIDs: []string{"obs_1"},
		DeliveryID: "d", ContentHash: "h", State: delivery.InjectDelivered, Attempts: 3, Seq: 9, EnqueuedAt: time.Unix(1, 0)}
	e := NewInjectEntry(in)
	b, err := json.Marshal(Write{Kind: WriteEnqueue, Org: "o", Inject: e})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"kind":"enqueue","org":"o","inject":{"v":1,"orgId":"o","sessionId":"s","agentId":"a","text":"hello","observationIds":["obs_1"]}}`
	if string(b) != want {
		t.Fatalf("entry\n got %s\nwant %s", b, want)
	}
	var w Write
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	got, err := w.Inject.Inject()
	if err != nil {
		t.Fatal(err)
	}
	wantIn := delivery.Inject{OrgID: "o", SessionID: "s", AgentID: "a", Text: "hello", ObservationIDs: []string{"obs_1"}}
	if got.OrgID != wantIn.OrgID || got.SessionID != wantIn.SessionID || got.AgentID != wantIn.AgentID ||
		got.Text != wantIn.Text || !slices.Equal(got.ObservationIDs, wantIn.ObservationIDs) ||
		got.DeliveryID != "" || got.Seq != 0 || got.State != "" || got.Attempts != 0 || !got.EnqueuedAt.IsZero() {
		t.Fatalf("round trip: %+v", got)
	}

	e.V = InjectEntryVersion + 1
	if _, err := e.Inject(); !errors.Is(err, engine.ErrInvalidInput) {
		t.Fatalf("a later version: %v, want ErrInvalidInput", err)
	}
}

// TestInjectEntryBeforeVersions applies an enqueue as the log carried it
// before it had a type of its own (a whole delivery.Inject, no "v"): the
// queue gets the same inject as from a current entry.
func TestInjectEntryBeforeVersions(t *testing.T) {
	a := open(t)
	ctx := context.Background()
	old := `{"kind":"enqueue","org":"o","inject":{"deliveryId":"","orgId":"o","sessionId":"s1","agentId":"a","text":"hello",` +
		`"contentHash":"","observationIds":["obs_1"],"state":"","enqueuedAt":"0001-01-01T00:00:00Z","attempts":0,"seq":0}}`
	var w Write
	if err := json.Unmarshal([]byte(old), &w); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	res, err := a.Apply(ctx, w, ApplyOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	cur := Write{Kind: WriteEnqueue, Org: "o", Inject: NewInjectEntry(delivery.Inject{OrgID: "o", SessionID: "s2", AgentID: "a",
		Text: "hello", ObservationIDs: []string{"obs_1"}})}
	res2, err := a.Apply(ctx, cur, ApplyOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	got, want := *res.Inject, *res2.Inject
	want.SessionID = "s1"
	if got.OrgID != want.OrgID || got.SessionID != want.SessionID || got.AgentID != want.AgentID || got.Text != want.Text ||
		got.ContentHash != want.ContentHash || !slices.Equal(got.ObservationIDs, want.ObservationIDs) ||
		got.State != want.State || !got.EnqueuedAt.Equal(want.EnqueuedAt) || got.Attempts != want.Attempts {
		t.Fatalf("old entry enqueued %+v, current %+v", got, want)
	}
	if got.State != delivery.InjectPending || got.ContentHash == "" {
		t.Fatalf("not enqueued: %+v", got)
	}
}
