package traverse

import (
	"math/rand/v2"
	"testing"
)

// TestNodeSetMatchesMap: a nodeSet answers as a map does, across epochs
// and growth, with each node's round and reach kept.
func TestNodeSetMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var s nodeSet
	for epoch := range 60 {
		s.reset()
		type state struct {
			round uint32
			reach float64
		}
		want := map[uint32]state{}
		// Small key ranges collide, large ones spread; some epochs grow
		// the table past its first size.
		span := uint32(1) << (4 + rng.IntN(24))
		ops := 1 + rng.IntN(3000)
		if epoch%7 == 0 {
			ops = 10_000
		}
		for range ops {
			n := rng.Uint32N(span)
			i := s.find(n)
			st, ok := want[n]
			if (i >= 0) != ok {
				t.Fatalf("epoch %d: find(%d) = %d, map has it: %v", epoch, n, i, ok)
			}
			if ok {
				if s.round[i] != st.round || s.reach[i] != st.reach {
					t.Fatalf("epoch %d: node %d holds (%d, %v), want (%d, %v)", epoch, n, s.round[i], s.reach[i], st.round, st.reach)
				}
				st = state{round: rng.Uint32(), reach: rng.Float64()}
				s.round[i], s.reach[i] = st.round, st.reach
				want[n] = st
				continue
			}
			i = s.add(n)
			if s.round[i] != 0 || s.reach[i] != 0 {
				t.Fatalf("epoch %d: added node %d holds (%d, %v)", epoch, n, s.round[i], s.reach[i])
			}
			want[n] = state{}
		}
		if s.count() != len(want) {
			t.Fatalf("epoch %d: count %d, want %d", epoch, s.count(), len(want))
		}
		for n, st := range want {
			i := s.find(n)
			if i < 0 || s.round[i] != st.round || s.reach[i] != st.reach {
				t.Fatalf("epoch %d: node %d lost after growth", epoch, n)
			}
		}
	}
}
