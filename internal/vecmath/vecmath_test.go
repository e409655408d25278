package vecmath

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
)

// kernel is one implementation of the dot product under test.
type kernel struct {
	name  string
	dot   func(a, b []float32) float32
	batch func(dst, q, m []float32)
	// depth bounds the number of roundings any one product of a length-n
	// dot product passes through; the error of the result is then at most
	// about depth * 2^-24 * sum |a[i]*b[i]|.
	depth func(n int) int
}

var (
	genericKernel = kernel{"generic", dotGeneric, dotBatchGeneric, func(n int) int {
		// n/8 products per accumulator, each rounded when multiplied and
		// when added, a three-level reduction, up to seven tail terms.
		return 2*(n/8) + 3 + 2*7 + 1
	}}
	avx2Kernel = kernel{"avx2+fma", dotAVX2, dotBatchAVX2, func(n int) int {
		// n/32 fused steps per lane, up to three 8-wide steps, a
		// five-level reduction, up to seven scalar fused steps.
		return n/32 + 3 + 5 + 7 + 1
	}}
)

// kernels returns the kernels this machine can run, logging when the
// assembly one is not among them.
func kernels(t testing.TB) []kernel {
	t.Helper()
	if !hasAVX2FMA {
		t.Logf("this CPU (or build) lacks AVX2+FMA: only the generic kernel is tested (GOARCH=%s)", runtime.GOARCH)
		return []kernel{genericKernel}
	}
	return []kernel{genericKernel, avx2Kernel}
}

// ref64 returns the dot product of a and b computed in float64, which is
// exact to far better than float32 precision for these lengths, and the
// sum of the magnitudes of the products, which scales the error bound.
func ref64(a, b []float32) (dot, mag float64) {
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		dot += p
		mag += math.Abs(p)
	}
	return dot, mag
}

// tolerance is the error bound for a float32 dot product of n terms whose
// products' magnitudes sum to mag, through depth roundings.
func tolerance(depth, n int, mag float64) float64 {
	const u = 1.0 / (1 << 24)
	// The relative part, plus an absolute part for products that fall
	// into the subnormal range, where rounding errors are absolute.
	return float64(depth)*u*mag*1.0001 + float64(2*n+8)*math.SmallestNonzeroFloat32
}

// testLengths lists the vector lengths the kernels are checked at: every
// length up to 70, which covers each tail of the unrolled loops, and the
// common embedding sizes with their neighbours.
func testLengths() []int {
	var ls []int
	for n := 0; n <= 70; n++ {
		ls = append(ls, n)
	}
	return append(ls, 95, 96, 97, 127, 128, 129, 255, 383, 384, 385, 767, 768, 1023, 1024, 1535, 1536, 1537, 3072, 4099)
}

// randVec returns n values drawn from r, uniform in [-scale, scale).
func randVec(r *rand.Rand, n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = (r.Float32()*2 - 1) * scale
	}
	return v
}

// unaligned returns a copy of v that starts off float32s into a fresh
// allocation, so that it is not aligned to 32 bytes when off%8 != 0.
func unaligned(v []float32, off int) []float32 {
	buf := make([]float32, len(v)+off)
	u := buf[off : off+len(v) : off+len(v)]
	copy(u, v)
	return u
}

func TestKernelInUse(t *testing.T) {
	t.Logf("kernel in use: %s (GOARCH=%s)", Kernel(), runtime.GOARCH)
	if hasAVX2FMA != (Kernel() == "avx2+fma") {
		t.Errorf("Kernel() = %q but hasAVX2FMA = %v", Kernel(), hasAVX2FMA)
	}
	if !hasAVX2FMA {
		t.Logf("AVX2+FMA kernel not in use here: only the generic kernel is tested")
	}
}

// cpuinfoHas reports whether /proc/cpuinfo lists all the given flags; it
// reports false where there is no /proc/cpuinfo.
func cpuinfoHas(t *testing.T, flags ...string) bool {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Logf("no /proc/cpuinfo to cross-check the detection: %v", err)
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) != "flags" {
			continue
		}
		have := map[string]bool{}
		for _, f := range strings.Fields(value) {
			have[f] = true
		}
		for _, f := range flags {
			if !have[f] {
				return false
			}
		}
		return true
	}
	return false
}

func TestDotAgainstFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range kernels(t) {
		worst := 0.0
		for _, n := range testLengths() {
			for trial := 0; trial < 8; trial++ {
				scale := []float32{1, 1e-3, 1e3, 1e-20, 1e15}[trial%5]
				a := unaligned(randVec(r, n, scale), trial%8)
				b := unaligned(randVec(r, n, 1), (trial+3)%8)
				want, mag := ref64(a, b)
				got := 0.0
				if n > 0 {
					got = float64(k.dot(a, b))
				}
				err := math.Abs(got - want)
				if tol := tolerance(k.depth(n), n, mag); err > tol {
					t.Errorf("%s: n=%d trial %d: got %g, want %g (error %g > tolerance %g)", k.name, n, trial, got, want, err, tol)
				}
				if mag > 0 {
					worst = max(worst, err/mag)
				}
			}
		}
		t.Logf("%s: worst error relative to sum|a*b|: %.3g", k.name, worst)
	}
}

func TestDotUsesKernelInUse(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	k := genericKernel
	if hasAVX2FMA {
		k = avx2Kernel
	}
	for _, n := range testLengths() {
		a, b := randVec(r, n, 1), randVec(r, n, 1)
		want := float32(0)
		if n > 0 {
			want = k.dot(a, b)
		}
		if got := Dot(a, b); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("n=%d: Dot = %v, %s kernel = %v", n, got, k.name, want)
		}
	}
}

func TestDotBatchMatchesDot(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, k := range kernels(t) {
		for _, d := range []int{1, 3, 7, 8, 9, 31, 32, 33, 100, 384, 385, 1536} {
			for _, rows := range []int{1, 2, 5, 64} {
				q := unaligned(randVec(r, d, 1), 1)
				m := unaligned(randVec(r, rows*d, 1), 3)
				dst := make([]float32, rows)
				k.batch(dst, q, m)
				for i := range dst {
					if want := k.dot(q, m[i*d:(i+1)*d]); math.Float32bits(dst[i]) != math.Float32bits(want) {
						t.Errorf("%s: d=%d row %d of %d: batch %v, single %v", k.name, d, i, rows, dst[i], want)
					}
				}
			}
		}
	}
	// The exported function, including the extra rows of m it must leave
	// alone and an empty query.
	q := randVec(r, 10, 1)
	m := randVec(r, 55, 1)
	dst := make([]float32, 5)
	DotBatch(dst, q, m)
	for i := range dst {
		if want := Dot(q, m[i*10:(i+1)*10]); dst[i] != want {
			t.Errorf("DotBatch row %d = %v, Dot = %v", i, dst[i], want)
		}
	}
	dst = []float32{1, 2}
	DotBatch(dst, nil, nil)
	if dst[0] != 0 || dst[1] != 0 {
		t.Errorf("DotBatch with an empty query = %v, want zeros", dst)
	}
	DotBatch(nil, q, nil)
}

func TestIdenticalRowsScoreEqually(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, k := range kernels(t) {
		for _, d := range []int{5, 384, 389} {
			q, row := randVec(r, d, 1), randVec(r, d, 1)
			base := k.dot(q, row)
			for off := 0; off < 8; off++ {
				if got := k.dot(unaligned(q, 7-off), unaligned(row, off)); math.Float32bits(got) != math.Float32bits(base) {
					t.Errorf("%s: d=%d offset %d: %v, at offset 0: %v", k.name, d, off, got, base)
				}
			}
		}
	}
}

func TestPanicsOnMismatch(t *testing.T) {
	for name, f := range map[string]func(){
		"Dot":       func() { Dot(make([]float32, 3), make([]float32, 4)) },
		"DotBatch":  func() { DotBatch(make([]float32, 3), make([]float32, 4), make([]float32, 11)) },
		"Normalize": func() { Normalize(make([]float32, 3), make([]float32, 4)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with mismatched lengths did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestNormalize(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	check := func(name string, v []float32) {
		t.Helper()
		dst := make([]float32, len(v))
		if !Normalize(dst, v) {
			t.Errorf("%s: Normalize returned false", name)
			return
		}
		n := 0.0
		for _, x := range dst {
			n += float64(x) * float64(x)
		}
		if math.Abs(math.Sqrt(n)-1) > 1e-6 {
			t.Errorf("%s: normalized length %v, want 1", name, math.Sqrt(n))
		}
		want, _ := ref64(v, v)
		want = math.Sqrt(want)
		for i := range v {
			if e := math.Abs(float64(dst[i]) - float64(v[i])/want); e > 1e-7 {
				t.Errorf("%s: component %d is %v, want %v", name, i, dst[i], float64(v[i])/want)
				break
			}
		}
		// Norm rounds the length to float32, which can overflow to +Inf
		// or land on a subnormal: compare with the rounded reference.
		if got, want := float64(Norm(v)), float64(float32(want)); got != want && math.Abs(got-want) > want*1e-7 {
			t.Errorf("%s: Norm = %v, want %v", name, got, want)
		}
	}
	for _, n := range []int{1, 2, 3, 17, 384, 1536} {
		check("random", randVec(r, n, 1))
	}
	check("huge", []float32{math.MaxFloat32, math.MaxFloat32, -math.MaxFloat32})
	check("tiny", []float32{math.SmallestNonzeroFloat32, 0, -math.SmallestNonzeroFloat32})
	check("one tiny", []float32{0, math.SmallestNonzeroFloat32})

	v := []float32{3, 4}
	if !Normalize(v, v) || v[0] != 0.6 || v[1] != 0.8 {
		t.Errorf("Normalize in place of (3,4) = %v, want (0.6, 0.8)", v)
	}
	for name, bad := range map[string][]float32{
		"zero":  {0, 0, 0},
		"empty": {},
		"NaN":   {1, float32(math.NaN()), 1},
		"+Inf":  {1, float32(math.Inf(1))},
		"-Inf":  {float32(math.Inf(-1)), 0},
	} {
		dst := make([]float32, len(bad))
		for i := range dst {
			dst[i] = 42
		}
		if Normalize(dst, bad) {
			t.Errorf("Normalize(%s) returned true", name)
		}
		for i, x := range dst {
			if x != 42 {
				t.Errorf("Normalize(%s) changed dst[%d] to %v", name, i, x)
			}
		}
	}
	if Norm(nil) != 0 {
		t.Errorf("Norm(nil) = %v, want 0", Norm(nil))
	}
}

// fuzzVecs turns fuzz input into two equal-length vectors of finite
// values small enough that no dot product overflows float32, starting
// off%8 float32s into their allocations.
func fuzzVecs(data []byte, off uint8) (a, b []float32) {
	n := len(data) / 8
	a = unaligned(make([]float32, n), int(off%8))
	b = unaligned(make([]float32, n), int(off/8%8))
	val := func(bits uint32) float32 {
		x := math.Float32frombits(bits)
		if math.IsNaN(float64(x)) || math.Abs(float64(x)) > 1e15 {
			// Fold unusable bit patterns into small integers.
			return float32(int8(bits)) / 4
		}
		return x
	}
	for i := 0; i < n; i++ {
		p := data[8*i:]
		a[i] = val(uint32(p[0]) | uint32(p[1])<<8 | uint32(p[2])<<16 | uint32(p[3])<<24)
		b[i] = val(uint32(p[4]) | uint32(p[5])<<8 | uint32(p[6])<<16 | uint32(p[7])<<24)
	}
	return a, b
}

func FuzzDot(f *testing.F) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 1, 7, 8, 9, 33, 64, 100, 384} {
		data := make([]byte, 8*n)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		f.Add(data, uint8(n))
	}
	f.Add([]byte{0, 0, 0x80, 0x3f, 0, 0, 0x80, 0x3f}, uint8(0))
	if !hasAVX2FMA {
		f.Logf("this CPU (or build) lacks AVX2+FMA: FuzzDot checks only the generic kernel against float64")
	}
	f.Fuzz(func(t *testing.T, data []byte, off uint8) {
		a, b := fuzzVecs(data, off)
		n := len(a)
		want, mag := ref64(a, b)
		if mag > math.MaxFloat32/4 {
			// Products this large could overflow a float32 sum, where
			// the kernels legitimately differ; they are checked as
			// generic against reference only when finite.
			return
		}
		var gen float32
		if n > 0 {
			gen = dotGeneric(a, b)
		}
		if e, tol := math.Abs(float64(gen)-want), tolerance(genericKernel.depth(n), n, mag); e > tol {
			t.Fatalf("generic: n=%d got %g want %g (error %g > %g)", n, gen, want, e, tol)
		}
		if !hasAVX2FMA || n == 0 {
			return
		}
		asm := dotAVX2(a, b)
		if e, tol := math.Abs(float64(asm)-want), tolerance(avx2Kernel.depth(n), n, mag); e > tol {
			t.Fatalf("avx2: n=%d got %g want %g (error %g > %g)", n, asm, want, e, tol)
		}
		bound := tolerance(genericKernel.depth(n), n, mag) + tolerance(avx2Kernel.depth(n), n, mag)
		if e := math.Abs(float64(asm) - float64(gen)); e > bound {
			t.Fatalf("n=%d: avx2 %g and generic %g differ by %g > %g", n, asm, gen, e, bound)
		}
		dst := make([]float32, 1)
		dotBatchAVX2(dst, a, b)
		if math.Float32bits(dst[0]) != math.Float32bits(asm) {
			t.Fatalf("n=%d: batch kernel %v, single %v", n, dst[0], asm)
		}
	})
}

// TestCosine checks Cosine on vectors whose similarity is known: the same
// direction, opposite, orthogonal, a zero vector, and values whose
// squares would overflow float32.
func TestCosine(t *testing.T) {
	big := float32(math.MaxFloat32)
	for _, c := range []struct {
		name string
		a, b []float32
		want float64
	}{
		{"same direction", []float32{1, 2, 3}, []float32{2, 4, 6}, 1},
		{"opposite", []float32{1, -2}, []float32{-3, 6}, -1},
		{"orthogonal", []float32{1, 0}, []float32{0, 5}, 0},
		{"a zero vector", []float32{0, 0}, []float32{1, 1}, 0},
		{"extreme values", []float32{big, big}, []float32{big, -big}, 0},
		{"at 60 degrees", []float32{1, 0}, []float32{0.5, float32(math.Sqrt(3) / 2)}, 0.5},
	} {
		if got := Cosine(c.a, c.b); math.Abs(got-c.want) > 1e-7 {
			t.Errorf("%s: Cosine = %v, want %v", c.name, got, c.want)
		}
	}
}
