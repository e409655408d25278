//go:build !amd64 || purego

package vecmath

// Kernel names the implementation of the kernels in use: "generic" for
// the pure-Go loops, "avx2+fma" for the amd64 assembly.
func Kernel() string { return "generic" }

// hasAVX2FMA reports whether the assembly kernel can run; never here.
const hasAVX2FMA = false

func dot(a, b []float32) float32 { return dotGeneric(a, b) }

func dotBatch(dst, q, m []float32) { dotBatchGeneric(dst, q, m) }

func dotU8I8Batch(dst []int32, q []int8, m []uint8) { dotU8I8BatchGeneric(dst, q, m) }

// dotAVX2, dotBatchAVX2 and dotU8I8BatchAVX2 stand in for the assembly
// so that the tests compile everywhere; the tests call them only when
// hasAVX2FMA is true.
func dotAVX2(a, b []float32) float32 { return dotGeneric(a, b) }

func dotBatchAVX2(dst, q, m []float32) { dotBatchGeneric(dst, q, m) }

func dotU8I8BatchAVX2(dst []int32, q []int8, m []uint8) { dotU8I8BatchGeneric(dst, q, m) }
