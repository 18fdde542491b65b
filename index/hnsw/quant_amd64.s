//go:build amd64 && !purego

#include "textflag.h"

// func distBatchCosAVX2(q unsafe.Pointer, n int, ptrs []unsafe.Pointer, out []float32, stop float32) int
// Cosine record distances (see quant.go): for each record p of ptrs,
// out[j] = 1 - float(I)/sqrt(float(Nq)*float(Np)) with I the int8 dot
// product of the n components and Nq, Np the squared norms; n is a positive
// multiple of 32. Stops after the first distance below stop; returns the
// number scored. Records are scored two at a time (the query loads are
// shared and the two dependency chains overlap), the last odd one alone.
//
// Per 32 components: maddubs(|a|, b·sign(a)) gives a·b and
// maddubs(|b|, |b|) gives b·b as 16 int16 pair sums, widened to int32 by
// madd with ones. Components are in [-127, 127], so no pair sum saturates.
//
// Only VEX-encoded instructions: a legacy-SSE instruction while the upper
// YMM halves are dirty costs a state transition (~100 ns on the CI machine).
TEXT ·distBatchCosAVX2(SB), NOSPLIT, $0-80
	MOVQ   q+0(FP), SI
	MOVQ   n+8(FP), CX
	MOVQ   ptrs_base+16(FP), R8
	MOVQ   ptrs_len+24(FP), R9
	MOVQ   out_base+40(FP), R10
	MOVQ   out_len+48(FP), DX
	CMPQ   DX, R9
	CMOVQLT DX, R9 // never write past out
	VMOVSS stop+64(FP), X13
	MOVL   $0x3f800000, AX
	VMOVQ  AX, X11
	VBROADCASTSS X11, X11 // 1.0 in every lane
	MOVL   $0x00010001, AX
	VMOVQ  AX, X15
	VPBROADCASTD X15, Y15 // int16 ones

	// X12 = float(Nq) in every lane
	VPXOR Y0, Y0, Y0
	XORQ  BX, BX

cnorm:
	VMOVDQU    (SI)(BX*1), Y2
	VPABSB     Y2, Y2
	VPMADDUBSW Y2, Y2, Y2
	VPMADDWD   Y15, Y2, Y2
	VPADDD     Y2, Y0, Y0
	ADDQ       $32, BX
	CMPQ       BX, CX
	JLT        cnorm
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPHADDD      X0, X0, X0
	VPHADDD      X0, X0, X0
	VCVTDQ2PS    X0, X12
	XORQ         R11, R11

cpair:
	LEAQ 1(R11), AX
	CMPQ AX, R9
	JGE  csingle
	MOVQ (R8)(R11*8), DI
	MOVQ 8(R8)(R11*8), DX
	VPXOR Y0, Y0, Y0 // dot 1
	VPXOR Y1, Y1, Y1 // norm 1
	VPXOR Y2, Y2, Y2 // dot 2
	VPXOR Y3, Y3, Y3 // norm 2
	XORQ BX, BX

cpinner:
	VMOVDQU    (SI)(BX*1), Y4
	VPABSB     Y4, Y5
	VMOVDQU    (DI)(BX*1), Y6
	VMOVDQU    (DX)(BX*1), Y8
	VPSIGNB    Y4, Y6, Y7
	VPSIGNB    Y4, Y8, Y9
	VPMADDUBSW Y7, Y5, Y7
	VPMADDUBSW Y9, Y5, Y9
	VPABSB     Y6, Y6
	VPABSB     Y8, Y8
	VPMADDUBSW Y6, Y6, Y6
	VPMADDUBSW Y8, Y8, Y8
	VPMADDWD   Y15, Y7, Y7
	VPMADDWD   Y15, Y9, Y9
	VPMADDWD   Y15, Y6, Y6
	VPMADDWD   Y15, Y8, Y8
	VPADDD     Y7, Y0, Y0
	VPADDD     Y9, Y2, Y2
	VPADDD     Y6, Y1, Y1
	VPADDD     Y8, Y3, Y3
	ADDQ       $32, BX
	CMPQ       BX, CX
	JLT        cpinner

	VEXTRACTI128 $1, Y0, X4
	VPADDD       X4, X0, X0
	VEXTRACTI128 $1, Y1, X5
	VPADDD       X5, X1, X1
	VEXTRACTI128 $1, Y2, X6
	VPADDD       X6, X2, X2
	VEXTRACTI128 $1, Y3, X7
	VPADDD       X7, X3, X3
	VPHADDD      X1, X0, X0 // [dot1 01, dot1 23, n1 01, n1 23]
	VPHADDD      X3, X2, X2 // [dot2 01, dot2 23, n2 01, n2 23]
	VPHADDD      X2, X0, X0 // [dot1, n1, dot2, n2]
	VCVTDQ2PS    X0, X0
	VMOVSHDUP    X0, X1     // [n1, n1, n2, n2]
	VMULPS       X12, X1, X1
	VSQRTPS      X1, X1
	VDIVPS       X1, X0, X0
	VSUBPS       X0, X11, X2 // lanes 0 and 2: the two distances
	VMOVSS       X2, (R10)(R11*4)
	VEXTRACTPS   $2, X2, 4(R10)(R11*4)
	INCQ         R11
	VUCOMISS     X13, X2
	JCS          cdone // d < stop (or NaN)
	VMOVHLPS     X2, X2, X2 // lane 0: the second distance
	INCQ         R11
	VUCOMISS     X13, X2
	JCS          cdone
	JMP          cpair

csingle:
	CMPQ R11, R9
	JGE  cdone
	MOVQ (R8)(R11*8), DI
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	XORQ BX, BX

csinner:
	VMOVDQU    (SI)(BX*1), Y2
	VMOVDQU    (DI)(BX*1), Y3
	VPSIGNB    Y2, Y3, Y4
	VPABSB     Y2, Y5
	VPMADDUBSW Y4, Y5, Y4
	VPMADDWD   Y15, Y4, Y4
	VPADDD     Y4, Y0, Y0
	VPABSB     Y3, Y3
	VPMADDUBSW Y3, Y3, Y3
	VPMADDWD   Y15, Y3, Y3
	VPADDD     Y3, Y1, Y1
	ADDQ       $32, BX
	CMPQ       BX, CX
	JLT        csinner

	VEXTRACTI128 $1, Y0, X2
	VPADDD       X2, X0, X0
	VEXTRACTI128 $1, Y1, X3
	VPADDD       X3, X1, X1
	VPHADDD      X1, X0, X0
	VPHADDD      X0, X0, X0 // [dot, n, dot, n]
	VCVTDQ2PS    X0, X0
	VMOVSHDUP    X0, X1
	VMULSS       X12, X1, X1
	VSQRTSS      X1, X1, X1
	VDIVSS       X1, X0, X0
	VSUBSS       X0, X11, X2
	VMOVSS       X2, (R10)(R11*4)
	INCQ         R11

cdone:
	VZEROUPPER
	MOVQ R11, ret+72(FP)
	RET

// func distBatchL2AVX2(q unsafe.Pointer, n int, ptrs []unsafe.Pointer, a, c float32, out []float32, stop float32) int
// L2 record distances (see quant.go): for each record p of ptrs,
// out[j] = (a + bias_p) - float(I)*scale_p*c with I the int8 dot product of
// the n components after the 8-byte headers; n is a multiple of 32. Stops
// after the first distance below stop; returns the number scored.
TEXT ·distBatchL2AVX2(SB), NOSPLIT, $0-88
	MOVQ q+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ ptrs_base+16(FP), R8
	MOVQ ptrs_len+24(FP), R9
	MOVQ out_base+48(FP), R10
	MOVQ out_len+56(FP), DX
	CMPQ DX, R9
	CMOVQLT DX, R9 // never write past out
	VMOVSS a+40(FP), X14
	VMOVSS c+44(FP), X15
	VMOVSS stop+72(FP), X13
	ADDQ $8, SI
	XORQ R11, R11

next:
	CMPQ R11, R9
	JGE  done
	MOVQ (R8)(R11*8), DI
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	XORQ BX, BX

inner:
	CMPQ BX, CX
	JGE  reduce
	VPMOVSXBW (SI)(BX*1), Y2
	VPMOVSXBW 8(DI)(BX*1), Y3
	VPMADDWD  Y2, Y3, Y3
	VPADDD    Y3, Y0, Y0
	VPMOVSXBW 16(SI)(BX*1), Y4
	VPMOVSXBW 24(DI)(BX*1), Y5
	VPMADDWD  Y4, Y5, Y5
	VPADDD    Y5, Y1, Y1
	ADDQ      $32, BX
	JMP       inner

reduce:
	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VCVTDQ2PS    X0, X0
	VMULSS       (DI), X0, X0
	VMULSS       X15, X0, X0
	VADDSS       4(DI), X14, X2
	VSUBSS       X0, X2, X2
	VMOVSS       X2, (R10)(R11*4)
	INCQ         R11
	VUCOMISS     X13, X2
	JCS          done // d < stop (or NaN)
	JMP          next

done:
	VZEROUPPER
	MOVQ R11, ret+80(FP)
	RET

// func prefetchAll(ptrs []unsafe.Pointer, size int)
// Prefetches the size bytes at each pointer into all cache levels.
TEXT ·prefetchAll(SB), NOSPLIT, $0-32
	MOVQ ptrs_base+0(FP), R8
	MOVQ ptrs_len+8(FP), R9
	MOVQ size+24(FP), CX
	DECQ CX
	XORQ R11, R11

pfnext:
	CMPQ R11, R9
	JGE  pfdone
	MOVQ (R8)(R11*8), DI
	XORQ BX, BX

pfline:
	PREFETCHT0 (DI)(BX*1)
	ADDQ       $64, BX
	CMPQ       BX, CX
	JLT        pfline
	PREFETCHT0 (DI)(CX*1)
	INCQ       R11
	JMP        pfnext

pfdone:
	RET

// func prefetchRange(p unsafe.Pointer, size int)
TEXT ·prefetchRange(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), DI
	MOVQ size+8(FP), CX
	DECQ CX
	XORQ BX, BX

prline:
	PREFETCHT0 (DI)(BX*1)
	ADDQ       $64, BX
	CMPQ       BX, CX
	JLT        prline
	PREFETCHT0 (DI)(CX*1)
	RET
