package workload

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// SIFTDir is the folder of the SIFT-5k descriptors inside the datasets root.
const SIFTDir = "sift5k"

// SIFTDim is the dimension of SIFT descriptors.
const SIFTDim = 128

// SIFT holds real SIFT descriptors split into an index set and held-out
// queries (the shipped query3.tsv has only three rows, too few for recall
// numbers, so queries are carved from the base file instead).
type SIFT struct {
	// Base are the first rows of base.tsv.gz, in file order; their index
	// is the id GroundTruth returns.
	Base [][]float32
	// Queries are the last holdOut rows, in file order.
	Queries [][]float32
}

// LoadSIFT reads sift5k/base.tsv.gz (128 integer components then an id per
// line, tab-separated) from dir (the datasets root, the sift5k folder, or
// "" to use FindDatasets) and holds out the last holdOut rows as queries;
// 500 reproduces the reference setup in the datasets README (4,500 base,
// 500 queries). All vectors share one backing array.
func LoadSIFT(dir string, holdOut int) (*SIFT, error) {
	dir, err := datasetDir(dir, SIFTDir)
	if err != nil {
		return nil, err
	}
	flat := make([]float32, 0, 5000*SIFTDim)
	rows := 0
	err = eachLine(dir, "base.tsv", func(_ int, line string) error {
		fields := strings.Split(line, "\t")
		if len(fields) != SIFTDim+1 {
			return fmt.Errorf("%w: %d columns, want %d values and an id", ErrMalformed, len(fields), SIFTDim)
		}
		for _, f := range fields[:SIFTDim] {
			v, err := strconv.ParseFloat(f, 32)
			if err != nil {
				return fmt.Errorf("%w: %w", ErrMalformed, err)
			}
			flat = append(flat, float32(v))
		}
		rows++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if holdOut < 0 || holdOut >= rows {
		return nil, fmt.Errorf("%w: holdOut=%d with %d rows", ErrInvalidOptions, holdOut, rows)
	}
	all := splitFlat(flat, rows, SIFTDim)
	return &SIFT{Base: all[:rows-holdOut], Queries: all[rows-holdOut:]}, nil
}

func splitFlat(flat []float32, n, dim int) [][]float32 {
	out := make([][]float32, n)
	for i := range out {
		out[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return out
}

// Clustered returns n vectors of dimension dim drawn from a mixture of
// Gaussian clusters: centers uniform in [-1,1]^dim, each cluster with its
// own spread (σ between 0.1 and 0.4 per component) and points assigned to
// clusters uniformly at random. Real embeddings are clustered rather than
// uniform, which is what makes HNSW recall interesting. The normal draws
// use the Irwin–Hall sum of four uniforms, plain arithmetic that is
// bit-identical on every platform, so a seed always gives the same
// vectors. It returns nil when n, dim or clusters is not positive.
// All vectors share one backing array of n*dim float32s.
func Clustered(n, dim, clusters int, seed int64) [][]float32 {
	if n <= 0 || dim <= 0 || clusters <= 0 {
		return nil
	}
	clusters = min(clusters, n)
	r := splitmix(uint64(seed) ^ 0xc1a57e4ed)
	next := func() float64 {
		r = splitmix(r)
		return unit(r)
	}
	centers := make([]float32, clusters*dim)
	for i := range centers {
		centers[i] = float32(2*next() - 1)
	}
	sigma := make([]float64, clusters)
	for i := range sigma {
		sigma[i] = 0.1 + 0.3*next()
	}
	const sqrt3 = 1.7320508075688772
	flat := make([]float32, n*dim)
	for i := range n {
		r = splitmix(r)
		c := int(r % uint64(clusters))
		center := centers[c*dim : (c+1)*dim]
		row := flat[i*dim : (i+1)*dim]
		for j := range row {
			g := float64((next()+next()+next()+next()-2)*sqrt3) * sigma[c]
			row[j] = center[j] + float32(g)
		}
	}
	return splitFlat(flat, n, dim)
}

// GroundTruth returns, for each query, the indexes of its k nearest base
// vectors by brute force, nearest first; equal distances are ordered by
// index so the answer is unique. cosine selects cosine distance
// (1 - cos θ; a zero vector is at distance 1 from everything), otherwise
// squared Euclidean distance. Sums are accumulated in float64 in a fixed
// order, so results do not depend on scheduling. Queries are split over
// GOMAXPROCS goroutines. k is clamped to len(base).
func GroundTruth(base, queries [][]float32, k int, cosine bool) [][]uint32 {
	k = min(k, len(base))
	out := make([][]uint32, len(queries))
	if k <= 0 {
		for i := range out {
			out[i] = []uint32{}
		}
		return out
	}
	var norms []float64
	if cosine {
		norms = make([]float64, len(base))
		for i, b := range base {
			norms[i] = math.Sqrt(dot64(b, b))
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(queries))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			h := make(nnHeap, 0, k)
			for qi := w; qi < len(queries); qi += workers {
				q := queries[qi]
				qn := 0.0
				if cosine {
					qn = math.Sqrt(dot64(q, q))
				}
				h = h[:0]
				for bi, b := range base {
					var d float64
					if cosine {
						if qn == 0 || norms[bi] == 0 {
							d = 1
						} else {
							d = 1 - dot64(q, b)/(qn*norms[bi])
						}
					} else {
						d = l2sq64(q, b)
					}
					h.offer(nn{d: d, id: uint32(bi)}, k)
				}
				out[qi] = h.sorted()
			}
		})
	}
	wg.Wait()
	return out
}

func dot64(a, b []float32) float64 {
	n := min(len(a), len(b))
	var s float64
	for i := range n {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func l2sq64(a, b []float32) float64 {
	n := min(len(a), len(b))
	var s float64
	for i := range n {
		d := float64(a[i]) - float64(b[i])
		s += d * d
	}
	return s
}

type nn struct {
	d  float64
	id uint32
}

// worse orders by distance, then id, so the farthest candidate is on top.
func (a nn) worse(b nn) bool { return a.d > b.d || (a.d == b.d && a.id > b.id) }

// nnHeap is a bounded max-heap of the k best candidates seen so far.
type nnHeap []nn

func (h *nnHeap) offer(x nn, k int) {
	s := *h
	if len(s) < k {
		s = append(s, x)
		for i := len(s) - 1; i > 0; {
			p := (i - 1) / 2
			if !s[i].worse(s[p]) {
				break
			}
			s[i], s[p] = s[p], s[i]
			i = p
		}
		*h = s
		return
	}
	if !s[0].worse(x) {
		return
	}
	s[0] = x
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].worse(s[m]) {
			m = l
		}
		if r < len(s) && s[r].worse(s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}

// sorted returns the ids nearest first.
func (h nnHeap) sorted() []uint32 {
	s := slices.Clone(h)
	slices.SortFunc(s, func(a, b nn) int {
		if a.worse(b) {
			return 1
		}
		if b.worse(a) {
			return -1
		}
		return 0
	})
	ids := make([]uint32, len(s))
	for i, x := range s {
		ids[i] = x.id
	}
	return ids
}
