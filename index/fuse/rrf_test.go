package fuse

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

func ids(xs ...uint32) []Ranked {
	out := make([]Ranked, len(xs))
	for i, x := range xs {
		out[i] = Ranked{ID: x, Score: 1000 - float64(i)} // scores must be ignored
	}
	return out
}

func idsOf(r []Ranked) []uint32 {
	out := make([]uint32, len(r))
	for i, x := range r {
		out[i] = x.ID
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-15 }

func TestRRFHandComputed(t *testing.T) {
	got := RRF(nil, 60, 10, ids(1, 2, 3), ids(3, 1, 4))
	want := []Ranked{
		{1, 1.0/61 + 1.0/62},
		{3, 1.0/63 + 1.0/61},
		{2, 1.0 / 62},
		{4, 1.0 / 63},
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].ID != want[i].ID || !near(got[i].Score, want[i].Score) {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	// k <= 0 and non-finite k mean DefaultK.
	for _, k := range []float64{0, -5, math.NaN(), math.Inf(1)} {
		d := RRF(nil, k, 10, ids(1, 2, 3), ids(3, 1, 4))
		if !slices.Equal(d, got) {
			t.Errorf("k=%v: %v, want %v", k, d, got)
		}
	}
	// Another k.
	got = RRF(nil, 1, 0, ids(7), ids(8, 7))
	if got[0].ID != 7 || !near(got[0].Score, 0.5+1.0/3) || got[1].ID != 8 || !near(got[1].Score, 0.5) {
		t.Fatalf("k=1: %v", got)
	}
}

func TestRRFTiesByID(t *testing.T) {
	got := RRF(nil, 60, 0, ids(5, 7), ids(7, 5))
	if !slices.Equal(idsOf(got), []uint32{5, 7}) || got[0].Score != got[1].Score {
		t.Fatalf("two-list tie: %v", got)
	}
	// Three lists, each ID gets ranks {1,2,3} in a different order; in
	// float64 the sums could differ in the last bit by summation order.
	got = RRF(nil, 60, 0, ids(9, 8, 7), ids(8, 7, 9), ids(7, 9, 8))
	if !slices.Equal(idsOf(got), []uint32{7, 8, 9}) || got[0].Score != got[1].Score || got[1].Score != got[2].Score {
		t.Fatalf("three-list tie: %v", got)
	}
	// Lone items at the same rank in different lists tie too.
	got = RRF(nil, 60, 0, ids(30), ids(10), ids(20))
	if !slices.Equal(idsOf(got), []uint32{10, 20, 30}) {
		t.Fatalf("rank-1 ties: %v", got)
	}
}

func TestRRFDuplicatesWithinList(t *testing.T) {
	got := RRF(nil, 60, 0, ids(1, 1, 2, 1))
	if len(got) != 2 || got[0].ID != 1 || !near(got[0].Score, 1.0/61) || got[1].ID != 2 || !near(got[1].Score, 1.0/63) {
		t.Fatalf("got %v: want 1 once at rank 1, 2 at position 3", got)
	}
	// Across lists duplicates still add up.
	got = RRF(nil, 60, 0, ids(1, 1), ids(1))
	if len(got) != 1 || !near(got[0].Score, 2.0/61) {
		t.Fatalf("got %v", got)
	}
}

func TestRRFEmptyAndLimits(t *testing.T) {
	dst := make([]Ranked, 3, 8)
	if got := RRF(dst, 60, 5); len(got) != 0 || cap(got) != 8 {
		t.Fatalf("no lists: %v", got)
	}
	if got := RRF(dst, 60, 5, nil, ids()); len(got) != 0 {
		t.Fatalf("empty lists: %v", got)
	}
	if got := RRF(nil, 60, 5, nil); got != nil {
		t.Fatalf("nil dst, empty input: %v", got)
	}
	got := RRF(nil, 60, 100, ids(1, 2), nil, ids(3))
	if !slices.Equal(idsOf(got), []uint32{1, 3, 2}) {
		t.Fatalf("n > union: %v", got)
	}
	got = RRF(nil, 60, 2, ids(1, 2), ids(3))
	if !slices.Equal(idsOf(got), []uint32{1, 3}) {
		t.Fatalf("n = 2: %v", got)
	}
	got = RRF(nil, 60, -1, ids(1, 2), ids(3))
	if len(got) != 3 {
		t.Fatalf("n < 0: %v", got)
	}
	// Extreme IDs.
	got = RRF(nil, 60, 0, ids(math.MaxUint32, 0), ids(0))
	if !slices.Equal(idsOf(got), []uint32{0, math.MaxUint32}) {
		t.Fatalf("extreme IDs: %v", got)
	}
}

func TestRRFReusesDstAndDoesNotModifyInput(t *testing.T) {
	a, b := ids(4, 3, 2, 1), ids(1, 2, 3, 4)
	ac, bc := slices.Clone(a), slices.Clone(b)
	dst := make([]Ranked, 0, 16)
	got := RRF(dst, 60, 2, a, b)
	if &got[:1][0] != &dst[:1][0] {
		t.Fatal("dst not reused")
	}
	if !slices.Equal(a, ac) || !slices.Equal(b, bc) {
		t.Fatal("input modified")
	}
}

// reference computes RRF exactly with rationals: the ground truth for order
// and, rounded, for scores.
func reference(k int64, n int, lists ...[]Ranked) []Ranked {
	sums := map[uint32]*big.Rat{}
	for _, l := range lists {
		seen := map[uint32]bool{}
		for pos, r := range l {
			if seen[r.ID] {
				continue
			}
			seen[r.ID] = true
			if sums[r.ID] == nil {
				sums[r.ID] = new(big.Rat)
			}
			sums[r.ID].Add(sums[r.ID], big.NewRat(1, k+int64(pos)+1))
		}
	}
	type kv struct {
		id uint32
		r  *big.Rat
	}
	var all []kv
	for id, r := range sums {
		all = append(all, kv{id, r})
	}
	slices.SortFunc(all, func(a, b kv) int {
		if c := b.r.Cmp(a.r); c != 0 {
			return c
		}
		if a.id < b.id {
			return -1
		}
		return 1
	})
	if n <= 0 || n > len(all) {
		n = len(all)
	}
	out := make([]Ranked, n)
	for i := range out {
		f, _ := all[i].r.Float64()
		out[i] = Ranked{all[i].id, f}
	}
	return out
}

func TestRRFMatchesExactReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var dst []Ranked
	for iter := range 300 {
		nl := rng.IntN(5)
		lists := make([][]Ranked, nl)
		universe := 1 + rng.IntN(60)
		for i := range lists {
			l := make([]Ranked, rng.IntN(40))
			for j := range l {
				l[j].ID = uint32(rng.IntN(universe)) // duplicates likely
			}
			lists[i] = l
		}
		k := int64(1 + rng.IntN(100))
		n := rng.IntN(30) - 5
		dst = RRF(dst, float64(k), n, lists...)
		want := reference(k, n, lists...)
		if !slices.Equal(idsOf(dst), idsOf(want)) {
			t.Fatalf("iter %d: order %v, want %v", iter, idsOf(dst), idsOf(want))
		}
		for i := range want {
			if math.Abs(dst[i].Score-want[i].Score) > 1e-15 {
				t.Fatalf("iter %d: score %v, want %v", iter, dst[i].Score, want[i].Score)
			}
		}
		// Fusion is symmetric in its lists, bit for bit.
		slices.Reverse(lists)
		rev := RRF(nil, float64(k), n, lists...)
		if !slices.Equal(rev, dst) {
			t.Fatalf("iter %d: list order changed the result", iter)
		}
	}
}

func TestRRFZeroAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under -race")
	}
	a, b, c := make([]Ranked, 200), make([]Ranked, 200), make([]Ranked, 50)
	for i := range a {
		a[i].ID = uint32(i * 3)
		b[i].ID = uint32(600 - i*2)
	}
	for i := range c {
		c[i].ID = uint32(i * 7)
	}
	dst := make([]Ranked, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		dst = RRF(dst, 60, 50, a, b, c)
	})
	if allocs != 0 {
		t.Fatalf("RRF allocs = %v, want 0", allocs)
	}
}

func TestNormalize(t *testing.T) {
	r := RRF(nil, 60, 0, ids(1, 2, 3), ids(2, 3))
	Normalize(r)
	if r[0].Score != 1 {
		t.Fatalf("top = %v, want exactly 1", r[0].Score)
	}
	for _, x := range r {
		if !(x.Score > 0 && x.Score <= 1) {
			t.Fatalf("score %v outside (0,1]", x.Score)
		}
	}
	// The maximum need not be first.
	r = []Ranked{{1, 0.25}, {2, 0.5}, {3, 0.125}}
	Normalize(r)
	if r[0].Score != 0.5 || r[1].Score != 1 || r[2].Score != 0.25 {
		t.Fatalf("%v", r)
	}
	// Awkward maxima are exactly 1 too.
	r = []Ranked{{1, 1.0/61 + 1.0/62 + 1.0/67}, {2, 0.001}}
	Normalize(r)
	if r[0].Score != 1 {
		t.Fatalf("%v", r)
	}
	// No meaningful scale: unchanged.
	for _, in := range [][]Ranked{nil, {{1, 0}, {2, 0}}, {{1, -1}}, {{1, math.Inf(1)}}, {{1, math.NaN()}}} {
		c := slices.Clone(in)
		Normalize(c)
		for i := range c {
			if c[i] != in[i] && !(math.IsNaN(c[i].Score) && math.IsNaN(in[i].Score)) {
				t.Fatalf("Normalize(%v) changed it to %v", in, c)
			}
		}
	}
}

func BenchmarkRRF(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	lists := make([][]Ranked, 2)
	for i := range lists {
		lists[i] = make([]Ranked, 200)
		for j := range lists[i] {
			lists[i][j].ID = uint32(rng.IntN(1000))
		}
	}
	dst := make([]Ranked, 0, 50)
	b.ReportAllocs()
	for b.Loop() {
		dst = RRF(dst, 60, 50, lists...)
	}
}
