package tripletio

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine"
)

func TestEncoder_RoundTrip(t *testing.T) {
	in := []engine.TripletInput{
		{Source: "a", Relationship: "r", Target: "b"},
		{Source: "Auth <Service> & co", Relationship: "depends_on", Target: "Postgres \"DB\"\n2",
			SourceType: "service", TargetType: "database", SourceDescription: "é 東京", TargetDescription: "🚀",
			Weight:       ptr(0.1 + 0.2), // not exactly representable in short decimal
			Provenance:   &engine.Provenance{ObservationID: "obs_1", SessionID: "ses_1", Timestamp: time.Date(2026, 11, 20, 10, 0, 0, 123456789, time.UTC)},
			SourceVector: []float32{0.1, -3.4028235e38, 1e-45}, TargetVector: []float32{float32(math.Pi)},
			SourceProjectID: "p1", TargetProjectID: "p2", TargetOrgID: "o"},
		{Source: "x", Relationship: "r", Target: "y", Weight: ptr(0.0), Provenance: &engine.Provenance{}},
	}
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	for i := range in {
		if err := enc.Encode(&in[i]); err != nil {
			t.Fatal(err)
		}
	}
	out := buf.String()
	if n := strings.Count(out, "\n"); n != len(in) {
		t.Fatalf("%d lines for %d triplets:\n%s", n, len(in), out)
	}
	first := strings.SplitN(out, "\n", 2)[0]
	if first != `{"source":"a","relationship":"r","target":"b"}` {
		t.Fatalf("empty fields not omitted: %s", first)
	}
	if !strings.Contains(out, "<Service> & co") {
		t.Fatalf("HTML escaped: %s", out)
	}
	for _, f := range []Format{JSONL, Auto} {
		res := readAll(t, buf.Bytes(), f, nil)
		if len(res.errs) > 0 || res.format != JSONL || !reflect.DeepEqual(res.triplets, in) {
			t.Fatalf("round trip (%v): errs %v\ngot  %+v\nwant %+v", f, res.errs, res.triplets, in)
		}
	}
}

func TestEncoder_Errors(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	if err := enc.Encode(nil); err == nil {
		t.Error("nil accepted")
	}
	if err := enc.Encode(&engine.TripletInput{Source: "a", Relationship: "r", Target: "b", Weight: ptr(math.NaN())}); err == nil {
		t.Error("NaN weight encoded")
	}
	if buf.Len() != 0 {
		t.Errorf("partial output on error: %q", buf.String())
	}
}
