//go:build amd64 && !purego

package vecmath

// hasAVX2FMA reports whether the CPU has AVX2 and FMA and the operating
// system saves the YMM registers across context switches, so that the
// assembly kernel can run.
var hasAVX2FMA = detectAVX2FMA()

// Kernel names the implementation of the kernels in use: "generic" for
// the pure-Go loops, "avx2+fma" for the amd64 assembly.
func Kernel() string {
	if hasAVX2FMA {
		return "avx2+fma"
	}
	return "generic"
}

// cpuid executes the CPUID instruction for leaf eaxArg and sub-leaf
// ecxArg.
func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

// xgetbv0 returns the low half of extended control register XCR0, which
// tells which register states the operating system saves. Call it only
// when CPUID reports OSXSAVE.
func xgetbv0() (eax uint32)

// detectAVX2FMA reads CPUID and XCR0 to decide whether the AVX2+FMA kernel
// may run. It checks, as Intel's and AMD's manuals prescribe: FMA, AVX and
// OSXSAVE in leaf 1 ECX; XMM and YMM state enabled in XCR0; AVX2 in leaf
// 7 EBX.
func detectAVX2FMA() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
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
	const xmmYMMState = 1<<1 | 1<<2
	if xgetbv0()&xmmYMMState != xmmYMMState {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const avx2 = 1 << 5
	return ebx7&avx2 != 0
}

// dotBatchAVX2Asm stores in dst[i], for i < n, the dot product of the d
// float32s at q with the i-th run of d float32s at m; n > 0, d > 0.
//
//go:noescape
func dotBatchAVX2Asm(dst, q, m *float32, n, d int)

// dotAVX2 is the assembly dot product of a and b, which have the same,
// non-zero length. It runs the batch kernel on a single row, so a score
// from Dot and one from DotBatch agree to the bit.
func dotAVX2(a, b []float32) float32 {
	var r [1]float32
	dotBatchAVX2Asm(&r[0], &a[0], &b[0], 1, len(a))
	return r[0]
}

// dotBatchAVX2 is DotBatch in assembly; len(m) is len(dst)*len(q), and
// neither dst nor q is empty.
func dotBatchAVX2(dst, q, m []float32) {
	dotBatchAVX2Asm(&dst[0], &q[0], &m[0], len(dst), len(q))
}

// dotU8I8BatchAVX2Asm stores in dst[i], for i < n, the dot product of
// the d int8s at q, each in [-64, 64], with the i-th run of d uint8s at m;
// n > 0, d > 0.
//
//go:noescape
func dotU8I8BatchAVX2Asm(dst *int32, q *int8, m *uint8, n, d int)

// dotU8I8BatchAVX2 is DotU8I8Batch in assembly; len(m) is len(dst)*len(q),
// and neither dst nor q is empty.
func dotU8I8BatchAVX2(dst []int32, q []int8, m []uint8) {
	dotU8I8BatchAVX2Asm(&dst[0], &q[0], &m[0], len(dst), len(q))
}

func dotU8I8Batch(dst []int32, q []int8, m []uint8) {
	if hasAVX2FMA {
		dotU8I8BatchAVX2(dst, q, m)
		return
	}
	dotU8I8BatchGeneric(dst, q, m)
}

func dot(a, b []float32) float32 {
	if hasAVX2FMA {
		return dotAVX2(a, b)
	}
	return dotGeneric(a, b)
}

func dotBatch(dst, q, m []float32) {
	if hasAVX2FMA {
		dotBatchAVX2(dst, q, m)
		return
	}
	dotBatchGeneric(dst, q, m)
}
