package hnsw

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func TestOptionsValidate(t *testing.T) {
	good := []Options{
		{Dim: 1},
		{Dim: 128, M: 16, EfConstruction: 200, EfSearch: 64, Metric: L2, ExactCutoff: 10},
		{Dim: 3, Metric: Cosine, Seed: -5},
	}
	for _, o := range good {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	bad := []Options{
		{},
		{Dim: -1},
		{Dim: maxDim + 1},
		{Dim: 8, M: -1},
		{Dim: 8, M: 1},
		{Dim: 8, M: maxM + 1},
		{Dim: 8, EfConstruction: -1},
		{Dim: 8, EfSearch: -1},
		{Dim: 8, Metric: 7},
		{Dim: 8, Metric: -1},
		{Dim: 8, ExactCutoff: -1},
	}
	for _, o := range bad {
		err := o.Validate()
		if !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%+v: got %v, want ErrInvalidOptions", o, err)
		}
		if _, err := New(o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("New(%+v): got %v", o, err)
		}
	}
	g, err := New(Options{Dim: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Dim: 4, M: 16, EfConstruction: 200, EfSearch: 64, Metric: Cosine, ExactCutoff: 2048}
	if got := g.Options(); got != want {
		t.Errorf("defaults: got %+v, want %+v", got, want)
	}
}

// TestKernels checks the kernels in use (assembly where the CPU has it) and
// the portable Go ones against a float64 oracle, for every tail length and
// unaligned starts.
func TestKernels(t *testing.T) {
	t.Logf("kernels: %q (empty = portable Go)", simdKernel)
	r := rand.New(rand.NewPCG(3, 3))
	buf := make([]float32, 2*300+2)
	for i := range buf {
		buf[i] = float32(r.NormFloat64() * 10)
	}
	for n := range 200 {
		for off := range 2 {
			a, b := buf[off:off+n], buf[300+off:300+off+n]
			var wantDot, wantL2 float64
			for i := range a {
				wantDot += float64(a[i]) * float64(b[i])
				wantL2 += (float64(a[i]) - float64(b[i])) * (float64(a[i]) - float64(b[i]))
			}
			tol := 1e-5 * (1 + float64(n)) * 100
			for name, f := range map[string]func(a, b []float32) float32{"dot": dot, "dotGo": dotGo} {
				if got := f(a, b); math.Abs(float64(got)-wantDot) > tol {
					t.Errorf("%s n=%d off=%d: %v, want %v", name, n, off, got, wantDot)
				}
			}
			for name, f := range map[string]func(a, b []float32) float32{"l2sq": l2sq, "l2sqGo": l2sqGo} {
				if got := f(a, b); math.Abs(float64(got)-wantL2) > tol*(1+wantL2/100) {
					t.Errorf("%s n=%d off=%d: %v, want %v", name, n, off, got, wantL2)
				}
			}
			if got, want := cosineDist(a, b), 1-float64(dot(a, b)); math.Abs(float64(got)-want) > 1e-3 {
				t.Errorf("cosineDist n=%d: %v, want %v", n, got, want)
			}
		}
	}
	// b longer than a is fine; only len(a) elements are read.
	if got := l2sq([]float32{1, 2}, []float32{1, 2, 99}); got != 0 {
		t.Errorf("longer b: %v", got)
	}
	if simdKernel != "" { // the assembly clamps to the shorter slice
		if got := l2sq([]float32{1, 2, 3}, []float32{1, 2}); got != 0 {
			t.Errorf("shorter b: %v", got)
		}
	}
	v := []float32{3, 4}
	normalizeInto(v, v)
	if v[0] != 0.6 || v[1] != 0.8 {
		t.Errorf("normalize: %v", v)
	}
}

func TestAddErrors(t *testing.T) {
	g := newGraph(t, Options{Dim: 3})
	cases := []struct {
		v    []float32
		want error
	}{
		{[]float32{1, 2}, ErrDimensionMismatch},
		{[]float32{1, 2, 3, 4}, ErrDimensionMismatch},
		{[]float32{0, 0, 0}, ErrInvalidVector},
		{[]float32{1, float32(math.NaN()), 0}, ErrInvalidVector},
		{[]float32{1, float32(math.Inf(-1)), 0}, ErrInvalidVector},
	}
	for _, c := range cases {
		if err := g.Add(1, c.v); !errors.Is(err, c.want) {
			t.Errorf("Add(%v): %v, want %v", c.v, err, c.want)
		}
	}
	if err := g.AddBatch([]uint32{1, 2}, [][]float32{{1, 2, 3}}, 1); !errors.Is(err, ErrBatchLength) {
		t.Errorf("AddBatch length: %v", err)
	}
	if err := g.AddBatch([]uint32{1, 2}, [][]float32{{1, 2, 3}, {1}}, 1); !errors.Is(err, ErrDimensionMismatch) {
		t.Errorf("AddBatch dim: %v", err)
	}
	if g.Len() != 0 || g.Contains(1) {
		t.Errorf("failed adds changed the graph: Len %d", g.Len())
	}
	// L2 accepts the zero vector.
	l2 := newGraph(t, Options{Dim: 3, Metric: L2})
	if err := l2.Add(0, []float32{0, 0, 0}); err != nil {
		t.Errorf("L2 zero vector: %v", err)
	}
}

func TestEmptyAndTiny(t *testing.T) {
	g := newGraph(t, Options{Dim: 2, Metric: L2})
	if r := g.Search(nil, []float32{1, 1}, 5, SearchOptions{}); len(r) != 0 {
		t.Errorf("empty graph: %v", r)
	}
	if g.Delete(3) {
		t.Error("Delete of absent id reported true")
	}
	if err := g.Add(7, []float32{1, 1}); err != nil {
		t.Fatal(err)
	}
	r := g.Search(nil, []float32{0, 0}, 5, SearchOptions{})
	if len(r) != 1 || r[0].ID != 7 || r[0].Distance != 2 {
		t.Errorf("one node: %v", r)
	}
	if r := g.Search(nil, []float32{0}, 5, SearchOptions{}); len(r) != 0 {
		t.Errorf("wrong dimension: %v", r)
	}
	if r := g.Search(nil, []float32{0, 0}, 0, SearchOptions{}); len(r) != 0 {
		t.Errorf("k=0: %v", r)
	}
	if !g.Delete(7) || g.Delete(7) {
		t.Error("Delete twice")
	}
	if r := g.Search(nil, []float32{0, 0}, 5, SearchOptions{}); len(r) != 0 {
		t.Errorf("after deleting the only node: %v", r)
	}
	if g.Len() != 0 || g.Contains(7) || g.Vector(7) != nil {
		t.Error("deleted node still visible")
	}
	if err := g.Check(); err != nil {
		t.Fatal(err)
	}
	if err := g.Add(7, []float32{2, 2}); err != nil {
		t.Fatal(err)
	}
	if r := g.Search(nil, []float32{0, 0}, 5, SearchOptions{}); len(r) != 1 || r[0].Distance != 8 {
		t.Errorf("re-added: %v", r)
	}
}

// TestSmallExact: on a graph far smaller than ef, Search must be exact and
// agree with Exact and with the float64 oracle, for both metrics, with and
// without sparse ids.
func TestSmallExact(t *testing.T) {
	for _, metric := range []Metric{L2, Cosine} {
		vecs := clustered(300, 16, 5, 11)
		g := newGraph(t, Options{Dim: 16, Metric: metric, Seed: 2})
		full := make([][]float32, 3000)
		for i, v := range vecs {
			id := uint32(i * 10) // sparse ids
			full[id] = v
			if err := g.Add(id, v); err != nil {
				t.Fatal(err)
			}
		}
		for qi, q := range clustered(20, 16, 5, 12) {
			want := bruteForce(metric, full, q, 10, nil)
			got := g.Search(nil, q, 10, SearchOptions{Ef: 300})
			ex := g.Exact(nil, q, 10, nil)
			if !slices.Equal(ids(got), want) || !slices.Equal(ids(ex), want) {
				t.Errorf("%v q%d: search %v exact %v want %v", metric, qi, ids(got), ids(ex), want)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Distance < got[i-1].Distance {
					t.Errorf("results not ascending: %v", got)
				}
			}
			if d := oracleDist(metric, q, full[got[0].ID]); math.Abs(d-float64(got[0].Distance)) > 1e-4*(1+d) {
				t.Errorf("%v distance %v, oracle %v", metric, got[0].Distance, d)
			}
		}
	}
}

func ids(rs []Result) []uint32 {
	out := make([]uint32, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// TestUpdateAndReAdd: Add of a live id replaces its vector; Add of a deleted
// id inserts it again.
func TestUpdateAndReAdd(t *testing.T) {
	n := 2000
	if raceEnabled {
		n = 600
	}
	vecs := clustered(n, 32, 10, 21)
	g := newGraph(t, Options{Dim: 32, Metric: L2, Seed: 3, EfConstruction: 100})
	if err := g.AddBatch(seqIDs(len(vecs)), vecs, 2); err != nil {
		t.Fatal(err)
	}
	moved := clustered(200, 32, 10, 22)
	for i, v := range moved { // ids 0..199 get new vectors
		if err := g.Add(uint32(i), v); err != nil {
			t.Fatal(err)
		}
		vecs[i] = v
	}
	for i := 200; i < 400; i++ {
		g.Delete(uint32(i))
	}
	for i := 200; i < 300; i++ { // re-add half of the deleted ids
		if err := g.Add(uint32(i), vecs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if g.Len() != n-100 {
		t.Errorf("Len %d, want %d", g.Len(), n-100)
	}
	if err := g.Check(); err != nil {
		t.Fatal(err)
	}
	skip := func(id uint32) bool { return id >= 300 && id < 400 }
	for i := range 400 {
		r := g.Search(nil, vecs[i], 1, SearchOptions{})
		if skip(uint32(i)) {
			if len(r) > 0 && r[0].ID == uint32(i) {
				t.Errorf("deleted id %d returned", i)
			}
			continue
		}
		if len(r) != 1 || r[0].Distance != 0 {
			t.Errorf("id %d: own vector search got %v", i, r)
		}
	}
	gt := groundTruth(L2, vecs, vecs[:300], 10, skip)
	if rec, _, _ := measure(g, vecs[:300], gt, 10, SearchOptions{}); rec < 0.95 {
		t.Errorf("recall after updates %.3f", rec)
	}
}

// TestSearchAllocs pins the zero-allocation contract of Search, filtered and
// exact paths included.
func TestSearchAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	vecs := clustered(3000, 32, 8, 31)
	g := newGraph(t, Options{Dim: 32, ExactCutoff: 100, Seed: 4})
	if err := g.AddBatch(seqIDs(len(vecs)), vecs, 2); err != nil {
		t.Fatal(err)
	}
	g.Delete(5) // exercise the tombstone path too
	q := vecs[17]
	dst := make([]Result, 0, 10)
	half := bitmapOf(3000, 0.5, 1)
	small := bitmapOf(3000, 0.01, 2)
	for name, o := range map[string]SearchOptions{
		"plain":    {},
		"ef200":    {Ef: 200},
		"filtered": {Allow: half},
		"exact":    {Allow: small},
	} {
		g.Search(dst, q, 10, o) // warm the pool
		if n := testing.AllocsPerRun(200, func() { dst = g.Search(dst, q, 10, o) }); n != 0 {
			t.Errorf("%s: %v allocs per Search", name, n)
		}
	}
	if n := testing.AllocsPerRun(50, func() { dst = g.Exact(dst, q, 10, nil) }); n != 0 {
		t.Errorf("Exact: %v allocs", n)
	}
}

func TestExactCutoffRule(t *testing.T) {
	vecs := clustered(4000, 8, 4, 41)
	g := newGraph(t, Options{Dim: 8, Metric: L2, ExactCutoff: 100, Seed: 5, EfConstruction: 32})
	if err := g.AddBatch(seqIDs(len(vecs)), vecs, 1); err != nil {
		t.Fatal(err)
	}
	// 150 ids: above the cutoff but under 1/20 of 4000 -> exact; results must
	// equal brute force exactly, and only allowed ids appear.
	allow := roaring.New()
	for i := range 150 {
		allow.Add(uint32(i * 26))
	}
	for _, q := range vecs[:20] {
		got := ids(g.Search(nil, q, 10, SearchOptions{Allow: allow}))
		want := bruteForce(L2, vecs, q, 10, func(id uint32) bool { return !allow.Contains(id) })
		if !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	}
	if r := g.Search(nil, vecs[0], 10, SearchOptions{Allow: roaring.New()}); len(r) != 0 {
		t.Errorf("empty allow-list: %v", r)
	}
	// Allow ids beyond the graph are ignored.
	far := roaring.BitmapOf(3, 1<<30, 1<<31)
	if r := g.Search(nil, vecs[0], 10, SearchOptions{Allow: far}); len(r) != 1 || r[0].ID != 3 {
		t.Errorf("allow beyond graph: %v", r)
	}
}
