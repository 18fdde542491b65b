//go:build amd64 && !purego

package hnsw

// AVX2+FMA kernels (distance_amd64.s), used when the CPU and OS support them.
// They read min(len(a), len(b)) elements, so they are memory-safe even when
// called directly (Graph.dist does, to save a call).

//go:noescape
func l2sqAVX2(a, b []float32) float32

//go:noescape
func dotAVX2(a, b []float32) float32

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

func xgetbv() (eax, edx uint32)

func init() {
	if hasAVX2FMA() {
		l2sq = l2sqAVX2
		dot = dotAVX2
		cosineDist = cosineDistAVX2
		useAVX2 = true
		simdKernel = "avx2"
	}
}

func cosineDistAVX2(a, b []float32) float32 { return 1 - dotAVX2(a, b) }

func hasAVX2FMA() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const (
		fma     = 1 << 12
		osxsave = 1 << 27
		avx     = 1 << 28
	)
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	// The OS must save the XMM and YMM registers on context switches.
	if xcr0, _ := xgetbv(); xcr0&6 != 6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const avx2 = 1 << 5
	return ebx7&avx2 != 0
}
