package vecmath

import (
	"math/rand/v2"
	"testing"
)

// u8Kernel is one implementation of DotU8I8Batch under test.
type u8Kernel struct {
	name  string
	batch func(dst []int32, q []int8, m []uint8)
}

func u8Kernels(t testing.TB) []u8Kernel {
	ks := []u8Kernel{{"generic", dotU8I8BatchGeneric}}
	if hasAVX2FMA {
		return append(ks, u8Kernel{"avx2", dotU8I8BatchAVX2})
	}
	t.Logf("this CPU (or build) lacks AVX2: only the generic integer kernel is tested")
	return ks
}

// refU8I8 is the integer dot product of q and row, in int64.
func refU8I8(q []int8, row []uint8) int64 {
	var s int64
	for i := range q {
		s += int64(q[i]) * int64(row[i])
	}
	return s
}

// randU8Data returns a query of d values in [-64, 64] and rows*d row
// values, off bytes into their allocations; extremes puts every value
// at the end of its range.
func randU8Data(r *rand.Rand, d, rows, off int, extremes bool) ([]int8, []uint8) {
	qb := make([]int8, d+off)
	mb := make([]uint8, rows*d+off)
	q, m := qb[off:], mb[off:]
	for i := range q {
		q[i] = int8(r.IntN(129) - 64)
		if extremes {
			q[i] = []int8{-64, 64}[r.IntN(2)]
		}
	}
	for i := range m {
		m[i] = uint8(r.Uint32())
		if extremes {
			m[i] = []uint8{0, 255}[r.IntN(2)]
		}
	}
	return q, m
}

func TestDotU8I8BatchExact(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, k := range u8Kernels(t) {
		for _, d := range append(testLengths(), 4096, 4097) {
			if d == 0 {
				continue
			}
			for trial, rows := range []int{1, 3, 17} {
				q, m := randU8Data(r, d, rows, trial*13%32, trial == 2)
				dst := make([]int32, rows)
				k.batch(dst, q, m)
				for i := range dst {
					if want := refU8I8(q, m[i*d:(i+1)*d]); int64(dst[i]) != want {
						t.Errorf("%s: d=%d row %d of %d: got %d, want %d", k.name, d, i, rows, dst[i], want)
					}
				}
			}
		}
		// The largest sums: every product 255*64 or 255*-64.
		for _, d := range []int{1, 32, 127, 128, 129, 384, 4096} {
			q := make([]int8, 2*d)
			m := make([]uint8, d)
			for i := range m {
				m[i], q[i], q[d+i] = 255, 64, -64
			}
			for _, qq := range [][]int8{q[:d], q[d:]} {
				dst := make([]int32, 1)
				k.batch(dst, qq, m)
				if want := refU8I8(qq, m); int64(dst[0]) != want {
					t.Errorf("%s: extremes d=%d: got %d, want %d", k.name, d, dst[0], want)
				}
			}
		}
	}
}

func TestDotU8I8BatchExported(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	q, m := randU8Data(r, 40, 7, 3, false)
	dst := make([]int32, 6)
	DotU8I8Batch(dst, q, m)
	for i := range dst {
		if want := refU8I8(q, m[i*40:(i+1)*40]); int64(dst[i]) != want {
			t.Errorf("row %d: got %d, want %d", i, dst[i], want)
		}
	}
	dst = []int32{5, 6}
	DotU8I8Batch(dst, nil, nil)
	if dst[0] != 0 || dst[1] != 0 {
		t.Errorf("empty query: %v, want zeros", dst)
	}
	DotU8I8Batch(nil, q, nil)
	defer func() {
		if recover() == nil {
			t.Error("DotU8I8Batch with too few rows did not panic")
		}
	}()
	DotU8I8Batch(make([]int32, 8), q, m)
}

func FuzzDotU8I8(f *testing.F) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, n := range []int{1, 31, 32, 33, 128, 200, 384} {
		data := make([]byte, 2*n)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		f.Add(data, uint8(n), uint8(1))
	}
	if !hasAVX2FMA {
		f.Logf("this CPU (or build) lacks AVX2: FuzzDotU8I8 checks only the generic kernel")
	}
	f.Fuzz(func(t *testing.T, data []byte, off, rows uint8) {
		// Each element takes a byte of query, folded into [-64, 64], and
		// a byte of each row; the rows share the query.
		nr := int(rows%4) + 1
		d := min(len(data)/(nr+1), 1<<17-1) // DotU8I8Batch needs len(q) < 2^17
		if d == 0 {
			return
		}
		o := int(off % 32)
		q := make([]int8, d+o)[o:]
		m := make([]uint8, nr*d+o)[o:]
		for i := range q {
			q[i] = int8(int(data[i])%129 - 64)
		}
		copy(m, data[d:])
		for _, k := range u8Kernels(t) {
			got := make([]int32, nr)
			k.batch(got, q, m)
			for i := range got {
				if want := refU8I8(q, m[i*d:(i+1)*d]); int64(got[i]) != want {
					t.Fatalf("%s: d=%d row %d: got %d, want %d", k.name, d, i, got[i], want)
				}
			}
		}
	})
}

func BenchmarkDotU8I8Batch(b *testing.B) {
	r := rand.New(rand.NewPCG(27, 28))
	const d, rows = 384, 128
	q, m := randU8Data(r, d, rows, 0, false)
	dst := make([]int32, rows)
	for _, k := range u8Kernels(b) {
		b.Run(k.name, func(b *testing.B) {
			b.SetBytes(d * rows)
			for b.Loop() {
				k.batch(dst, q, m)
			}
		})
	}
}
