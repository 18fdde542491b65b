package tripletio

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kgctx/kgctx/engine/model"
)

func TestEncoder_RoundTrip(t *testing.T) {
	in := []model.TripletInput{
		{Source: "a", Relationship: "r", Target: "b"},
		{Source: "Auth <Service> & co", Relationship: "depends_on", Target: "Postgres \"DB\"\n2",
			SourceType: "service", TargetType: "database", SourceDescription: "é 東京", TargetDescription: "🚀",
			Weight:       ptr(0.1 + 0.2), // not exactly representable in short decimal
			Provenance:   &model.Provenance{ObservationID: "obs_1", SessionID: "ses_1", Timestamp: time.Date(2026, 11, 20, 10, 0, 0, 123456789, time.UTC)},
			SourceVector: []float32{0.1, -3.4028235e38, 1e-45}, TargetVector: []float32{float32(math.Pi)},
			SourceProjectID: "p1", TargetProjectID: "p2", TargetOrgID: "o",
			SourceExact: true, TargetExact: true, SourceLocation: &model.Location{File: "dir/nats.go", Line: 120, EndLine: 180},
			TargetLocation: &model.Location{File: "ws.go", Line: 7}, SourceSignature: "func (nc *Conn) Close()", TargetSignature: "Put(key string) error"},
		{Source: "x", Relationship: "r", Target: "y", Weight: ptr(0.0), Provenance: &model.Provenance{}},
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
	if err := enc.Encode(&model.TripletInput{Source: "a", Relationship: "r", Target: "b", Weight: ptr(math.NaN())}); err == nil {
		t.Error("NaN weight encoded")
	}
	if buf.Len() != 0 {
		t.Errorf("partial output on error: %q", buf.String())
	}
}

// encodingJSON is the reference AppendNDJSON must match byte for byte.
func encodingJSON(t *model.TripletInput) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(t)
	return buf.Bytes(), err
}

func TestAppendNDJSON_MatchesEncodingJSON(t *testing.T) {
	odd := []string{"", "plain", "q\"uote\\", "ctl\x00\x01\x1f\x7f", "\b\f\n\r\t", "<&>", "é 東京 🚀", "bad\xffutf8\xc3", "\u2028\u2029", "\ufffd"}
	floats := []float64{0, math.Copysign(0, -1), 0.5, 1, 0.1 + 0.2, 1e-7, 1e-6, 123456789, 1e20, 1e21, 1e300, -2.5e-10, 5e-324}
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func() string { return odd[rng.IntN(len(odd))] }
	for i := range 2000 {
		tr := model.TripletInput{Source: pick(), Relationship: pick(), Target: pick(), SourceType: pick(), TargetDescription: pick(),
			SourceProjectID: pick(), TargetOrgID: pick()}
		if i%2 == 0 {
			tr.Weight = ptr(floats[rng.IntN(len(floats))])
			tr.TargetWeight = ptr(floats[rng.IntN(len(floats))])
		}
		if i%3 == 0 {
			tr.SourceVector = []float32{float32(floats[rng.IntN(len(floats))]), float32(rng.NormFloat64()), 3.4028235e38}
			tr.TargetAliases = []string{pick(), pick()}
		}
		if i%7 == 0 {
			tr.Provenance = &model.Provenance{SessionID: pick(), Timestamp: time.Unix(int64(i), 5).UTC()}
		}
		if i%5 == 0 {
			tr.SourceExact, tr.TargetExact = i%10 == 0, true
			tr.SourceLocation = &model.Location{File: pick(), Line: rng.IntN(1000) - 10, EndLine: rng.IntN(3) * 500}
			tr.TargetSignature = pick()
		}
		if i%11 == 0 {
			tr.TargetLocation, tr.SourceSignature = &model.Location{}, pick()
		}
		want, werr := encodingJSON(&tr)
		got, gerr := AppendNDJSON(nil, &tr)
		if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("%+v:\ngot  %s (%v)\nwant %s (%v)", tr, got, gerr, want, werr)
		}
	}
}

func FuzzAppendNDJSON(f *testing.F) {
	f.Add("a", "r\x00", "b\xff", 0.5, float32(1e-7))
	f.Fuzz(func(t *testing.T, s, r, o string, w float64, v float32) {
		tr := model.TripletInput{Source: s, Relationship: r, Target: o, Weight: &w, SourceVector: []float32{v}, SourceAliases: []string{o}}
		want, werr := encodingJSON(&tr)
		got, gerr := AppendNDJSON(nil, &tr)
		if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("got %s (%v), want %s (%v)", got, gerr, want, werr)
		}
	})
}
