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
