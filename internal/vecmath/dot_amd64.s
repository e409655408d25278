//go:build amd64 && !purego

#include "textflag.h"

// func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eaxArg+0(FP), AX
	MOVL ecxArg+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv0() (eax uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-4
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	RET

// func dotBatchAVX2Asm(dst, q, m *float32, n, d int)
//
// For each of the n rows of d float32s at m, in turn, it stores the dot
// product of q and the row in the next float32 at dst.
//
// Registers: DI dst, SI q, DX current row, CX rows left, BX d,
// R8 d rounded down to a multiple of 32, R9 d rounded down to a multiple
// of 8, AX index of the current float32 within q and the row.
//
// Per row: four 8-lane accumulators (Y0-Y3) take 32 products per step;
// a step of 8 products goes to Y0; the lanes are summed pairwise into
// one; the last d%8 products are added one by one with scalar FMAs.
// The order of operations depends only on d, never on addresses, so
// equal rows give equal scores.
TEXT ·dotBatchAVX2Asm(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ d+32(FP), BX
	TESTQ CX, CX
	JLE  done
	MOVQ BX, R8
	ANDQ $-32, R8
	MOVQ BX, R9
	ANDQ $-8, R9

row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   AX, AX
	TESTQ  R8, R8
	JZ     check8

loop32:
	VMOVUPS     (SI)(AX*4), Y4
	VMOVUPS     32(SI)(AX*4), Y5
	VMOVUPS     64(SI)(AX*4), Y6
	VMOVUPS     96(SI)(AX*4), Y7
	VFMADD231PS (DX)(AX*4), Y4, Y0
	VFMADD231PS 32(DX)(AX*4), Y5, Y1
	VFMADD231PS 64(DX)(AX*4), Y6, Y2
	VFMADD231PS 96(DX)(AX*4), Y7, Y3
	ADDQ        $32, AX
	CMPQ        AX, R8
	JLT         loop32

check8:
	CMPQ AX, R9
	JGE  reduce

loop8:
	VMOVUPS     (SI)(AX*4), Y4
	VFMADD231PS (DX)(AX*4), Y4, Y0
	ADDQ        $8, AX
	CMPQ        AX, R9
	JLT         loop8

reduce:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	CMPQ         AX, BX
	JGE          store

loop1:
	VMOVSS      (SI)(AX*4), X1
	VFMADD231SS (DX)(AX*4), X1, X0
	INCQ        AX
	CMPQ        AX, BX
	JLT         loop1

store:
	VMOVSS X0, (DI)
	ADDQ   $4, DI
	LEAQ   (DX)(BX*4), DX
	DECQ   CX
	JNZ    row
	VZEROUPPER

done:
	RET

// func dotU8I8BatchAVX2Asm(dst *int32, q *int8, m *uint8, n, d int)
//
// For each of the n rows of d uint8s at m, in turn, it stores the dot
// product of q (d int8s, each in [-64, 64]) and the row in the next int32
// at dst.
//
// Registers: DI dst, SI q, DX current row, CX rows left, BX d,
// R8 d rounded down to a multiple of 128, R9 d rounded down to a multiple
// of 32, AX index of the current element, R10 the scalar tail's sum,
// R11 and R12 scratch, Y15 sixteen int16 ones.
//
// VPMADDUBSW multiplies 32 unsigned row bytes by 32 signed query bytes
// and adds adjacent products into int16 lanes; with |q| <= 64 a lane is
// at most 2*255*64 = 32640, so its saturation never comes into play and
// the lane is exact. VPMADDWD by ones widens pairs of lanes into int32,
// and four accumulators (Y0-Y3) take 128 elements per step; the last
// d%32 elements are added one by one. Each 128-element step also asks for
// the two cache lines 1 KiB ahead, which keeps more reads in flight than
// the hardware prefetcher alone when the rows stream from memory (a
// prefetch beyond the end of m is harmless: it never faults).
TEXT ·dotU8I8BatchAVX2Asm(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ d+32(FP), BX
	TESTQ CX, CX
	JLE  udone
	MOVQ BX, R8
	ANDQ $-128, R8
	MOVQ BX, R9
	ANDQ $-32, R9
	MOVL $0x00010001, R11
	VMOVD R11, X15
	VPBROADCASTD X15, Y15

urow:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	XORQ  AX, AX
	TESTQ R8, R8
	JZ    ucheck32

uloop128:
	PREFETCHT0 1024(DX)(AX*1)
	PREFETCHT0 1088(DX)(AX*1)
	VMOVDQU    (DX)(AX*1), Y4
	VMOVDQU    32(DX)(AX*1), Y5
	VMOVDQU    64(DX)(AX*1), Y6
	VMOVDQU    96(DX)(AX*1), Y7
	VPMADDUBSW (SI)(AX*1), Y4, Y4
	VPMADDUBSW 32(SI)(AX*1), Y5, Y5
	VPMADDUBSW 64(SI)(AX*1), Y6, Y6
	VPMADDUBSW 96(SI)(AX*1), Y7, Y7
	VPMADDWD   Y15, Y4, Y4
	VPMADDWD   Y15, Y5, Y5
	VPMADDWD   Y15, Y6, Y6
	VPMADDWD   Y15, Y7, Y7
	VPADDD     Y4, Y0, Y0
	VPADDD     Y5, Y1, Y1
	VPADDD     Y6, Y2, Y2
	VPADDD     Y7, Y3, Y3
	ADDQ       $128, AX
	CMPQ       AX, R8
	JLT        uloop128

ucheck32:
	CMPQ AX, R9
	JGE  ureduce

uloop32:
	VMOVDQU    (DX)(AX*1), Y4
	VPMADDUBSW (SI)(AX*1), Y4, Y4
	VPMADDWD   Y15, Y4, Y4
	VPADDD     Y4, Y0, Y0
	ADDQ       $32, AX
	CMPQ       AX, R9
	JLT        uloop32

ureduce:
	VPADDD       Y1, Y0, Y0
	VPADDD       Y3, Y2, Y2
	VPADDD       Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, R10
	CMPQ         AX, BX
	JGE          ustore

uloop1:
	MOVBLZX (DX)(AX*1), R11
	MOVBLSX (SI)(AX*1), R12
	IMULL   R12, R11
	ADDL    R11, R10
	INCQ    AX
	CMPQ    AX, BX
	JLT     uloop1

ustore:
	MOVL R10, (DI)
	ADDQ $4, DI
	ADDQ BX, DX
	DECQ CX
	JNZ  urow
	VZEROUPPER

udone:
	RET

