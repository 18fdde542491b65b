package relevance

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func sampleReport() *Report {
	return &Report{Date: "2026-01-02", Machine: "2 cores", Questions: 20, Seed: 1, Sets: []SetResult{
		{Name: "fb15k-1hop", Family: "fb15k", Metrics: []string{"triplet hit", "answer hit"}, Rows: []Row{
			{System: "kgctx graph", Block: "graph", Budget: 500, N: 20, Metrics: map[string]float64{"triplet hit": 0.5, "answer hit": 0.75}, MeanTokens: 490},
			{System: "bm25 triplets", Block: "graph", Budget: 500, N: 20, Metrics: map[string]float64{"triplet hit": 0.9, "answer hit": 0.75}, Duplicates: 2},
		}},
		{Name: "fb15k-2hop", Family: "fb15k", Metrics: []string{"path hit", "answer hit"}, Rows: []Row{
			{System: "kgctx graph", Block: "graph", Budget: 500, N: 20, Metrics: map[string]float64{"answer hit": 0}},
		}},
	}}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"| set | budget | system | triplet hit / path hit | answer hit | tokens | p50 ms | p99 ms | n |",
		"| fb15k-1hop | 500 | kgctx graph | 0.500 | **0.750** | 490 |", // ties are both best
		"| fb15k-1hop | 500 | bm25 triplets (2 repeated lines) | **0.900** | **0.750** |",
		"| fb15k-2hop | 500 | kgctx graph | - | 0.000 |", // a missing metric, and no bold zero
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "| fb15k-1hop | triplet hit | 500 | 0.500 | 0.900 | - | - | - | - |") ||
		!strings.Contains(out, "| fb15k-2hop | path hit | 500 | - | - |") {
		t.Errorf("summary rows missing:\n%s", out)
	}
	if strings.Count(out, "| set | budget |") != 1 {
		t.Errorf("one table per family wanted:\n%s", out)
	}
}

func TestWriteTextAndJSON(t *testing.T) {
	var b bytes.Buffer
	if err := sampleReport().WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "bm25 triplets") || !strings.Contains(b.String(), "2 repeated lines") {
		t.Fatalf("text:\n%s", b.String())
	}
	b.Reset()
	if err := sampleReport().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Sets[0].Rows[1].Metrics["triplet hit"] != 0.9 {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}
