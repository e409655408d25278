package vecindex

import "math"

// The search rules most rows out without reading their float32 vectors.
// Each row x (unit length, float32) is also stored quantised:
//
//	x = sx*c + ex,  c in int8^d, |c[i]| <= 127, |ex| <= errs[row]
//
// with c kept as the bytes c+128, and the query q (unit length, float32)
// is quantised once per search, in two digits:
//
//	q = 64*sf*p1 + eq1,      p1 in int8^d, |p1[i]| <= 64, |eq1| <= eq1Norm
//	q = sf*(64*p1 + p2) + eq2,  p2 in int8^d, |p2[i]| <= 32, |eq2| <= eq2Norm
//
// where |.| is the Euclidean length. vecmath.DotU8I8Batch computes
// (c+128).p exactly, 32 bytes per instruction (which is what limits the
// digits to [-64, 64]), and c.p is that less 128*sum(p). For either
// quantisation, q = s*P + e,
//
//	x.q = sx*s*(c.P) + (sx*c).e + ex.q
//
// so, by the Cauchy-Schwarz inequality, with |q| and |x| at most 1.001
// (they are unit vectors up to float32 rounding) and |sx*c| <= |x| + |ex|,
//
//	|x.q - sx*s*(c.P)| <= errs[row]*(1.001+|e|) + 1.001*|e|.
//
// The score the search reports is x.q computed by the float32 kernel,
// which differs from the real x.q by at most about (d/4+19) float32
// rounding units (vecmath's error bound for its kernels, both of which
// sum no more than d/4+19 roundings deep), and computing the bound itself
// in float32 adds a few units more: the bounds' offsets cover both with
// room to spare.
//
// The scan (see scan.go) computes the coarse bound, from p1 alone, for
// every row, in one kernel call per block of rows; for the few rows it
// does not rule out, it computes c.p2 too, from codes still in the CPU's
// cache, for the fine bounds, about four times tighter. Reading d bytes
// per row instead of the 4d of the float32 vector is what makes the
// search fast: a scan of many rows is bound by memory bandwidth.

// quantizeRow writes to codes the quantisation of the unit vector x, as
// bytes c+128, and returns its scale and an upper bound on the length of
// the quantisation error: x is approximately scale*c.
func quantizeRow(codes []uint8, x []float32) (scale, errBound float32) {
	m := 0.0
	for _, v := range x {
		m = max(m, math.Abs(float64(v)))
	}
	// x has unit length, so m >= 1/sqrt(len(x)): the scale is a normal,
	// non-zero float32.
	scale = float32(m / 127)
	s := float64(scale)
	// Any integer codes give a valid bound, since the error is measured
	// after rounding: multiplying by the reciprocal, and rounding half to
	// even (one instruction on most CPUs), may only move a code by one
	// where a value lies within an ulp of halfway.
	inv := 1 / s
	codes = codes[:len(x)]
	e2 := 0.0
	for i, v := range x {
		c := min(max(math.RoundToEven(float64(v)*inv), -127), 127)
		codes[i] = uint8(int(c) + 128)
		// s*c is exact in float64 (24 bits times 8), and so, within an
		// ulp of float64, is the difference.
		e := float64(v) - s*c
		e2 += e * e
	}
	return scale, roundUp(math.Sqrt(e2))
}

// bound holds a query prepared for the search: the query normalised, its
// quantisation in two digits, and the constants of the two bounds on a
// row's score.
type bound struct {
	q []float32
	// p1 and p2 are the digits; corr1 and corr2 are 128 times their
	// sums, to subtract from the kernel's sums, which see the row codes
	// offset by 128.
	p1, p2       []int8
	corr1, corr2 int32
	// s1 is 64*sf, the scale of p1 alone; sf that of 64*p1 + p2.
	s1, sf float32
	// err1, off1 and err2, off2 make the coarse and the fine bound:
	// sx*s*(c.P) + errs[row]*err + off.
	err1, off1, err2, off2 float32
}

// prepare returns the query q, already normalised, prepared for the
// search.
func prepare(q []float32) *bound {
	d := len(q)
	b := &bound{q: q, p1: make([]int8, d), p2: make([]int8, d)}
	m := 0.0
	for _, v := range q {
		m = max(m, math.Abs(float64(v)))
	}
	// q has unit length and at most MaxDims dimensions, so m >= 1/256
	// and sf is a normal float32.
	b.sf = float32(m / 4096)
	b.s1 = 64 * b.sf
	sf, s1 := float64(b.sf), float64(b.s1)
	inv1, invf := 1/s1, 1/sf
	var e1, e2 float64
	for i, v := range q {
		// As in quantizeRow, any integer digits give valid bounds.
		c1 := min(max(math.RoundToEven(float64(v)*inv1), -64), 64)
		r := float64(v) - s1*c1
		c2 := min(max(math.RoundToEven(r*invf), -32), 32)
		e := r - sf*c2
		b.p1[i], b.p2[i] = int8(c1), int8(c2)
		b.corr1 += 128 * int32(c1)
		b.corr2 += 128 * int32(c2)
		e1 += r * r
		e2 += e * e
	}
	// Twice (d/4+19) rounding units for the kernel's error, which also
	// leaves far more than the few units that computing a bound in
	// float32 can lose.
	const unit = 1.0 / (1 << 24)
	margin := float64(d/2+64) * unit
	eq1, eq2 := float64(roundUp(math.Sqrt(e1))), float64(roundUp(math.Sqrt(e2)))
	b.err1, b.off1 = roundUp(1.001+eq1), roundUp(1.001*eq1+margin)
	b.err2, b.off2 = roundUp(1.001+eq2), roundUp(1.001*eq2+margin)
	return b
}

// coarse returns the bound on the score of a row whose codes' dot product
// with p1 is sum1, quantised with scale and errBound.
func (b *bound) coarse(sum1 int32, scale, errBound float32) float32 {
	return float32(sum1-b.corr1)*b.s1*scale + errBound*b.err1 + b.off1
}

// fine returns the tighter bounds, from above and below, on the score of
// a row whose codes' dot products with p1 and p2 are sum1 and sum2.
// c.(64*p1 + p2) can exceed the int32 range for the largest Sets'
// dimensions, so it is summed in int64.
func (b *bound) fine(sum1, sum2 int32, scale, errBound float32) (upper, lower float32) {
	cp := 64*int64(sum1-b.corr1) + int64(sum2-b.corr2)
	approx := float32(cp) * b.sf * scale
	width := errBound*b.err2 + b.off2
	return approx + width, approx - width
}

// roundUp returns the smallest float32 at least x, for x >= 0, give or
// take the last bit of a float64: x is enlarged by a part in 10^9 first,
// which covers the rounding of the float64 sums that produce it.
func roundUp(x float64) float32 {
	x *= 1 + 1e-9
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}
