package workload

import (
	"math"
	"slices"
	"testing"
)

func TestLoadSIFT(t *testing.T) {
	dir := datasets(t)
	s, err := LoadSIFT(dir, 500)
	skipIfMissing(t, err)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Base) != 4500 || len(s.Queries) != 500 {
		t.Fatalf("base %d queries %d, want 4500/500", len(s.Base), len(s.Queries))
	}
	for _, v := range append(slices.Clone(s.Base), s.Queries...) {
		if len(v) != SIFTDim {
			t.Fatalf("dim %d", len(v))
		}
	}
	if s.Base[0][8] != 13 || s.Base[0][127] != 17 {
		t.Errorf("first row parsed wrong: %v", s.Base[0][:16])
	}
	if _, err := LoadSIFT(dir, 5000); err == nil {
		t.Error("holdOut = all rows should fail")
	}
	// Brute force over the real data: every query's nearest neighbour
	// must be at a distance no larger than the 10th.
	gt := GroundTruth(s.Base, s.Queries[:20], 10, false)
	for qi, ids := range gt {
		if len(ids) != 10 {
			t.Fatalf("query %d: %d ids", qi, len(ids))
		}
		if l2sq64(s.Queries[qi], s.Base[ids[0]]) > l2sq64(s.Queries[qi], s.Base[ids[9]]) {
			t.Errorf("query %d: results not sorted", qi)
		}
	}
}

func TestClustered(t *testing.T) {
	a := Clustered(2000, 32, 10, 7)
	if len(a) != 2000 || len(a[0]) != 32 {
		t.Fatalf("shape %d x %d", len(a), len(a[0]))
	}
	b := Clustered(2000, 32, 10, 7)
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Fatal("same seed gave different vectors")
		}
	}
	if c := Clustered(2000, 32, 10, 8); slices.Equal(a[0], c[0]) {
		t.Error("different seeds gave the same vectors")
	}
	for _, v := range a {
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.Abs(float64(x)) > 4 {
				t.Fatalf("component %v out of range", x)
			}
		}
	}
	// Clustered: a point's nearest neighbour is much closer than a random
	// point is.
	gt := GroundTruth(a, a[:50], 2, false)
	near, far := 0.0, 0.0
	for i, ids := range gt {
		near += l2sq64(a[i], a[ids[1]])
		far += l2sq64(a[i], a[(i*7919+13)%len(a)])
	}
	if near*3 > far {
		t.Errorf("not clustered: mean NN distance %.2f vs random %.2f", near/50, far/50)
	}
	if Clustered(0, 8, 2, 1) != nil || Clustered(10, 0, 2, 1) != nil {
		t.Error("want nil for empty shapes")
	}
}

func TestGroundTruth(t *testing.T) {
	base := [][]float32{{0, 0}, {1, 0}, {0, 2}, {3, 3}, {1, 0}, {0, 0}}
	queries := [][]float32{{0.9, 0}, {0, 0}}
	got := GroundTruth(base, queries, 3, false)
	want := [][]uint32{{1, 4, 0}, {0, 5, 1}} // ties broken by index
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("L2 query %d = %v, want %v", i, got[i], want[i])
		}
	}
	// Cosine ignores length: {3,3} points the same way as {1,1}; the zero
	// vectors are at distance 1 and come last.
	cos := GroundTruth(base, [][]float32{{1, 1}}, 6, true)
	if cos[0][0] != 3 || !slices.Equal(cos[0][4:], []uint32{0, 5}) {
		t.Errorf("cosine = %v", cos[0])
	}
	if g := GroundTruth(base, queries, 100, false); len(g[0]) != len(base) {
		t.Errorf("k clamps to len(base): got %d", len(g[0]))
	}
	if g := GroundTruth(nil, queries, 5, true); len(g) != 2 || len(g[0]) != 0 {
		t.Errorf("empty base: %v", g)
	}

	// Against a naive sort on random data.
	vs := Clustered(1500, 16, 5, 3)
	qs := vs[:40]
	gt := GroundTruth(vs[40:], qs, 10, true)
	for qi, q := range qs {
		ids := make([]uint32, len(vs)-40)
		for i := range ids {
			ids[i] = uint32(i)
		}
		dist := func(i uint32) float64 {
			b := vs[40+int(i)]
			return 1 - dot64(q, b)/math.Sqrt(dot64(q, q)*dot64(b, b))
		}
		slices.SortStableFunc(ids, func(a, b uint32) int {
			da, db := dist(a), dist(b)
			switch {
			case da < db:
				return -1
			case da > db:
				return 1
			}
			return 0
		})
		for j := range 10 {
			if math.Abs(dist(ids[j])-dist(gt[qi][j])) > 1e-12 {
				t.Fatalf("query %d rank %d: got id %d, naive %d", qi, j, gt[qi][j], ids[j])
			}
		}
	}
}
