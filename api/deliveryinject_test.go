package api

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine/delivery"
)

// TestDeliveryInjectJSON pins the HTTP body of an inject (the enqueue and
// claim answers): every field of the queue's record reaches it, under the
// names and in the order API.md documents, whatever the record becomes.
func TestDeliveryInjectJSON(t *testing.T) {
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	in := delivery.Inject{DeliveryID: "d1", OrgID: "o", SessionID: "s", AgentID: "a", Text: "hello",
		ContentHash: "h", ObservationIDs: []string{"obs_1"}, State: delivery.InjectPending,
		EnqueuedAt: at, DeliveredAt: at.Add(time.Second), Attempts: 2, Seq: 7}
	got := toDeliveryInjectJSON(in)
	v := reflect.ValueOf(got)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("field %s not carried", v.Type().Field(i).Name)
		}
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"deliveryId":"d1","orgId":"o","sessionId":"s","agentId":"a","text":"hello","contentHash":"h",` +
		`"observationIds":["obs_1"],"state":"` + delivery.InjectPending + `","enqueuedAt":"2026-11-25T10:00:00Z",` +
		`"deliveredAt":"2026-11-25T10:00:01Z","attempts":2,"seq":7}`
	if string(b) != want {
		t.Errorf("body\n got %s\nwant %s", b, want)
	}
	// A pending inject has no delivery time and no agent: both are left
	// out, as they always were.
	in.DeliveredAt, in.AgentID = time.Time{}, ""
	b, _ = json.Marshal(toDeliveryInjectJSON(in))
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"deliveredAt", "agentId"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s present when zero: %s", k, b)
		}
	}
}
