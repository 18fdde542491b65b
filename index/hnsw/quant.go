package hnsw

import (
	"math"
	"unsafe"
)

// Quantised traversal records.
//
// The graph walk is bound by memory latency, not arithmetic: every
// neighbour it scores is a random access into hundreds of megabytes. So
// besides the exact float32 vector, every slot keeps a compact record that
// the walk (searches, inserts, neighbour selection, delete repair) scores
// instead. Its components are the vector scaled so that its largest
// component is ±127 and rounded to int8 (symmetric per-vector scalar
// quantisation), zero-padded to a multiple of 32 (qdim):
//
//	Cosine: int8 × qdim                          (128 bytes for 128-d)
//	L2:     float32 scale | float32 bias | int8 × qdim
//
// The cosine record is exactly two cache lines for 128-d instead of the
// eight of the float32 vector: the walk fetches a quarter of the memory and
// its working set is four times smaller. It needs no header because the
// cosine of the integer vectors is scale-free: the kernel computes the
// integer dot product I and the integer norms N together,
//
//	Cosine: d = 1 - I / sqrt(N_a · N_b)
//	L2:     d = bias_a + bias_b - 2·I·scale_a·scale_b,
//	        scale = max|x|/127, bias = scale²·N
//
// Both are the exact distances between the quantised vectors, so they form
// a true metric and comparisons between them (the neighbour-selection
// heuristic) stay consistent. Searches quantise the query the same way and
// re-rank their candidates with the exact float32 vectors before returning,
// so reported distances and the order of results are exact; only which
// nodes the walk visits depends on the quantisation.

// qquery is a record used as the query side of record distances. For L2, a
// and c are the query's bias and 2·scale: d = a + bias_b - c·scale_b·I.
type qquery struct {
	p    unsafe.Pointer // the record
	a, c float32
}

// l2Header is the size of the L2 record header (scale, bias).
const l2Header = 8

// recordSizes returns the padded component count and the record stride for
// dimension dim under metric m.
func recordSizes(dim int, m Metric) (qdim, stride int) {
	qdim = (dim + 31) &^ 31
	if m == L2 {
		return qdim, l2Header + qdim
	}
	return qdim, qdim
}

// quantize writes the record of v into rec (len = the record stride).
func quantize(rec []byte, v []float32, metric Metric) {
	data := rec
	if metric == L2 {
		data = rec[l2Header:]
	}
	var maxAbs float64
	for _, x := range v {
		maxAbs = max(maxAbs, math.Abs(float64(x)))
	}
	clear(data)
	var sq int64
	if maxAbs > 0 {
		inv := 127 / maxAbs
		for i, x := range v {
			q := int64(math.Round(float64(x) * inv))
			q = min(max(q, -127), 127)
			data[i] = byte(int8(q))
			sq += q * q
		}
	}
	if metric == L2 {
		s := maxAbs / 127
		*(*float32)(unsafe.Pointer(&rec[0])) = float32(s)
		*(*float32)(unsafe.Pointer(&rec[4])) = float32(s * s * float64(sq))
	}
}

// queryOf returns the query form of the record at p.
func (g *Graph) queryOf(p unsafe.Pointer) qquery {
	if g.opts.Metric != L2 {
		return qquery{p: p}
	}
	return qquery{p: p, a: *(*float32)(unsafe.Add(p, 4)), c: 2 * *(*float32)(p)}
}

// rec returns the record of slot in ch.
func (g *Graph) rec(ch *chunk, slot uint32) unsafe.Pointer {
	return unsafe.Pointer(&ch.qv[int(slot)*g.rstride])
}

// recBytes returns the record of slot in ch as a byte slice, for writing.
func (g *Graph) recBytes(ch *chunk, slot uint32) []byte {
	o := int(slot) * g.rstride
	return ch.qv[o : o+g.rstride : o+g.rstride]
}

var (
	posInf = float32(math.Inf(1))
	negInf = float32(math.Inf(-1))
)

// score writes the record distances from q to the records ptrs into
// out[:len(ptrs)] and returns how many it scored: it stops after the first
// distance below stop (pass negInf to score all). It only reads the
// records. The dispatch is branches, not function variables, so that
// escape analysis keeps the arguments on the stack.
func (g *Graph) score(q qquery, ptrs []unsafe.Pointer, out []float32, stop float32) int {
	if g.opts.Metric == L2 {
		if useAVX2 {
			return distBatchL2AVX2(q.p, g.qdim, ptrs, q.a, q.c, out, stop)
		}
		return distBatchL2Go(q.p, g.qdim, ptrs, q.a, q.c, out, stop)
	}
	if useAVX2 {
		return distBatchCosAVX2(q.p, g.qdim, ptrs, out, stop)
	}
	return distBatchCosGo(q.p, g.qdim, ptrs, out, stop)
}

// qdist returns the record distance between q and the record at p.
func (g *Graph) qdist(q qquery, p unsafe.Pointer) float32 {
	ptrs := [1]unsafe.Pointer{p}
	var out [1]float32
	g.score(q, ptrs[:], out[:], negInf)
	return out[0]
}

// useAVX2 is set by init when the AVX2 kernels can run.
var useAVX2 bool

// The portable kernels. Integer sums are exact; the float steps are
// explicitly rounded in the same order as the assembly, so both give the
// same bits.

func dotI8(a, b []int8) (dot, nb int32) {
	var s0, s1, s2, s3, n0, n1, n2, n3 int32
	for i := 0; i+4 <= len(a); i += 4 {
		x := a[i : i+4 : i+4]
		y := b[i : i+4 : i+4]
		s0 += int32(x[0]) * int32(y[0])
		s1 += int32(x[1]) * int32(y[1])
		s2 += int32(x[2]) * int32(y[2])
		s3 += int32(x[3]) * int32(y[3])
		n0 += int32(y[0]) * int32(y[0])
		n1 += int32(y[1]) * int32(y[1])
		n2 += int32(y[2]) * int32(y[2])
		n3 += int32(y[3]) * int32(y[3])
	}
	return s0 + s1 + s2 + s3, n0 + n1 + n2 + n3
}

func distBatchCosGo(q unsafe.Pointer, n int, ptrs []unsafe.Pointer, out []float32, stop float32) int {
	qd := unsafe.Slice((*int8)(q), n)
	_, nq := dotI8(qd, qd)
	fq := float32(nq)
	m := min(len(ptrs), len(out))
	for j := range m {
		dot, nb := dotI8(qd, unsafe.Slice((*int8)(ptrs[j]), n))
		s := float32(math.Sqrt(float64(float32(fq * float32(nb)))))
		d := float32(1 - float32(float32(dot)/s))
		out[j] = d
		if d < stop {
			return j + 1
		}
	}
	return m
}

func distBatchL2Go(q unsafe.Pointer, n int, ptrs []unsafe.Pointer, a, c float32, out []float32, stop float32) int {
	qd := unsafe.Slice((*int8)(unsafe.Add(q, l2Header)), n)
	m := min(len(ptrs), len(out))
	for j := range m {
		p := ptrs[j]
		dot, _ := dotI8(qd, unsafe.Slice((*int8)(unsafe.Add(p, l2Header)), n))
		t := float32(float32(dot) * *(*float32)(p))
		t = float32(t * c)
		d := float32(a+*(*float32)(unsafe.Add(p, 4))) - t
		out[j] = d
		if d < stop {
			return j + 1
		}
	}
	return m
}
