package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

func TestWriteNDJSON(t *testing.T) {
	w := 0.75
	in := []engine.TripletInput{
		{Source: "Tom & Jerry", Relationship: "calls", Target: "b", Weight: &w},
		{Source: "c", Relationship: "contains", Target: "d", SourceType: "service", TargetDescription: "x"},
	}
	var buf bytes.Buffer
	if err := WriteNDJSON(&buf, in); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte(`\u0026`)) {
		t.Errorf("HTML escaping should be off: %s", buf.Bytes())
	}
	sc := bufio.NewScanner(&buf)
	var got []engine.TripletInput
	for sc.Scan() {
		var tr engine.TripletInput
		if err := json.Unmarshal(sc.Bytes(), &tr); err != nil {
			t.Fatal(err)
		}
		got = append(got, tr)
	}
	if len(got) != 2 || got[0].Source != "Tom & Jerry" || *got[0].Weight != 0.75 || got[1].SourceType != "service" {
		t.Errorf("round trip = %+v", got)
	}
}

func TestNDJSONReaderSynthetic(t *testing.T) {
	s := NewSynthetic(SyntheticOptions{Nodes: 1000, Edges: 5000})
	rc := NDJSONReader(s)
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if n := bytes.Count(data, []byte("\n")); n != 5000 {
		t.Errorf("lines = %d, want 5000", n)
	}
	// Closing early must stop the producer without error or leak.
	rc = NDJSONReader(NewSynthetic(SyntheticOptions{Nodes: 100_000, Edges: 500_000}))
	if _, err := io.ReadFull(rc, make([]byte, 4096)); err != nil {
		t.Fatal(err)
	}
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	// Invalid options surface as a read error.
	rc = NDJSONReader(NewSynthetic(SyntheticOptions{Nodes: 1}))
	if _, err := io.ReadAll(rc); err == nil {
		t.Error("want an error for invalid options")
	}
}
