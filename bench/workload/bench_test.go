package workload

import (
	"testing"

	"github.com/kgctx/kgctx/engine"
)

// BenchmarkSyntheticPlan measures solving the degree plan of a 1M-node /
// 5M-edge graph (done once per Synthetic).
func BenchmarkSyntheticPlan(b *testing.B) {
	for b.Loop() {
		if _, err := NewSynthetic(SyntheticOptions{Nodes: 1_000_000, Edges: 5_000_000}).Layout(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSynthetic1M5M streams the full 1M-node / 5M-edge graph the
// harness uses (plan included) and reports edges per second. It is a
// benchmark rather than a test to keep `go test` fast:
//
//	go test -run X -bench Synthetic1M5M -benchtime 1x ./bench/workload/
func BenchmarkSynthetic1M5M(b *testing.B) {
	for b.Loop() {
		n := 0
		err := NewSynthetic(SyntheticOptions{Nodes: 1_000_000, Edges: 5_000_000}).Each(func(*engine.TripletInput) error {
			n++
			return nil
		})
		if err != nil || n != 5_000_000 {
			b.Fatalf("edges=%d err=%v", n, err)
		}
	}
	b.ReportMetric(float64(5_000_000*b.N)/b.Elapsed().Seconds(), "edges/s")
}

// BenchmarkSyntheticEach measures streaming; ns/op is per edge.
func BenchmarkSyntheticEach(b *testing.B) {
	s := NewSynthetic(SyntheticOptions{Nodes: 200_000, Edges: 1_000_000})
	if _, err := s.Layout(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for n < b.N {
		if err := s.Each(func(*engine.TripletInput) error {
			n++
			if n >= b.N {
				return errStopBench
			}
			return nil
		}); err != nil && err != errStopBench {
			b.Fatal(err)
		}
	}
}

var errStopBench = &benchStop{}

type benchStop struct{}

func (*benchStop) Error() string { return "stop" }
