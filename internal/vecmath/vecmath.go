package vecmath

import "math"

// Dot returns the dot product of a and b, accumulated in float32.
//
// len(a) must equal len(b); Dot panics otherwise. The result for a given
// pair of slices depends only on their values, not on where they lie in
// memory, and is bit-identical to the score DotBatch computes for the
// same pair.
func Dot(a, b []float32) float32 {
	if len(a) != len(b) {
		panic("vecmath: Dot of slices of different lengths")
	}
	if len(a) == 0 {
		return 0
	}
	return dot(a, b)
}

// DotBatch scores the query q against consecutive rows of m: for each i
// in [0, len(dst)), dst[i] = Dot(q, m[i*len(q):(i+1)*len(q)]). One call
// scores many rows, which amortises the call overhead of the kernel.
//
// len(m) must be at least len(dst)*len(q); DotBatch panics otherwise.
func DotBatch(dst, q, m []float32) {
	n, d := len(dst), len(q)
	if n == 0 {
		return
	}
	if d == 0 {
		clear(dst)
		return
	}
	if len(m)/d < n {
		panic("vecmath: DotBatch matrix has fewer rows than dst")
	}
	dotBatch(dst, q, m[:n*d])
}

// Norm returns the Euclidean length of v. It is computed in float64, so
// it neither overflows for large finite components nor underflows to zero
// for tiny non-zero ones; the result is then rounded to float32 (and may
// be +Inf when the true length exceeds the float32 range).
func Norm(v []float32) float32 {
	return float32(norm64(v))
}

// Normalize writes v scaled to unit length into dst and reports whether
// it could: it returns false, leaving dst untouched, when v is the zero
// vector or holds a NaN or an infinity. dst may be v itself.
//
// len(dst) must equal len(v); Normalize panics otherwise.
func Normalize(dst, v []float32) bool {
	if len(dst) != len(v) {
		panic("vecmath: Normalize into a slice of a different length")
	}
	n := norm64(v)
	if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return false
	}
	inv := 1 / n
	if math.IsInf(inv, 0) {
		// n is subnormal in float64, far below any float32 vector's
		// length; dividing stays exact where multiplying would not.
		for i, x := range v {
			dst[i] = float32(float64(x) / n)
		}
		return true
	}
	for i, x := range v {
		dst[i] = float32(float64(x) * inv)
	}
	return true
}

// norm64 returns the Euclidean length of v in float64. The squares of
// float32 values cannot overflow or underflow in float64, and a sum of
// fewer than 2^900 of them cannot overflow, so no scaling is needed.
func norm64(v []float32) float64 {
	var s0, s1, s2, s3 float64
	for len(v) >= 4 {
		x0, x1, x2, x3 := float64(v[0]), float64(v[1]), float64(v[2]), float64(v[3])
		s0 += x0 * x0
		s1 += x1 * x1
		s2 += x2 * x2
		s3 += x3 * x3
		v = v[4:]
	}
	for _, x := range v {
		s0 += float64(x) * float64(x)
	}
	return math.Sqrt((s0 + s1) + (s2 + s3))
}

// dotGeneric is the pure-Go dot product of a and b, which have the same,
// non-zero length. Eight independent accumulators let the CPU overlap the
// additions; re-slicing by eight each step lets the compiler drop the
// bounds checks inside the loop.
func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(a) >= 8 && len(b) >= 8 {
		s0 += a[0] * b[0]
		s1 += a[1] * b[1]
		s2 += a[2] * b[2]
		s3 += a[3] * b[3]
		s4 += a[4] * b[4]
		s5 += a[5] * b[5]
		s6 += a[6] * b[6]
		s7 += a[7] * b[7]
		a, b = a[8:], b[8:]
	}
	s := ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7))
	for i, x := range a {
		s += x * b[i]
	}
	return s
}

// dotBatchGeneric is DotBatch in pure Go; len(m) is len(dst)*len(q) and
// len(q) is not zero.
func dotBatchGeneric(dst, q, m []float32) {
	d := len(q)
	for i := range dst {
		dst[i] = dotGeneric(q, m[i*d:(i+1)*d:(i+1)*d])
	}
}

// DotU8I8Batch scores a quantised query q against consecutive rows of
// unsigned quantised values m: for each i in [0, len(dst)), dst[i] is the
// sum of int32(q[j])*int32(m[i*len(q)+j]) over j, computed exactly.
//
// Every q[j] must lie in [-64, 64], and len(q) must be below 2^17, for the
// sums to be exact; len(m) must be at least len(dst)*len(q), and
// DotU8I8Batch panics otherwise. The narrow range of q is what lets the
// amd64 kernel multiply 32 bytes per instruction.
func DotU8I8Batch(dst []int32, q []int8, m []uint8) {
	n, d := len(dst), len(q)
	if n == 0 {
		return
	}
	if d == 0 {
		clear(dst)
		return
	}
	if len(m)/d < n {
		panic("vecmath: DotU8I8Batch matrix has fewer rows than dst")
	}
	dotU8I8Batch(dst, q, m[:n*d])
}

// dotU8I8Generic is the pure-Go dot product of q and row, which have the
// same length.
func dotU8I8Generic(q []int8, row []uint8) int32 {
	row = row[:len(q)]
	var s0, s1, s2, s3 int32
	for len(q) >= 4 && len(row) >= 4 {
		s0 += int32(q[0]) * int32(row[0])
		s1 += int32(q[1]) * int32(row[1])
		s2 += int32(q[2]) * int32(row[2])
		s3 += int32(q[3]) * int32(row[3])
		q, row = q[4:], row[4:]
	}
	s := (s0 + s1) + (s2 + s3)
	for i, x := range q {
		s += int32(x) * int32(row[i])
	}
	return s
}

// dotU8I8BatchGeneric is DotU8I8Batch in pure Go; len(m) is
// len(dst)*len(q) and len(q) is not zero.
func dotU8I8BatchGeneric(dst []int32, q []int8, m []uint8) {
	d := len(q)
	for i := range dst {
		dst[i] = dotU8I8Generic(q, m[i*d:(i+1)*d:(i+1)*d])
	}
}

// Cosine returns the cosine similarity of a and b, which have the same
// length, computed in float64: their dot product over the product of
// their lengths, 0 when either is the zero vector.
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
