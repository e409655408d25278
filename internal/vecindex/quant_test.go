package vecindex

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp" // the standard library's cmp orders the hits
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmem/memory/internal/vecmath"
)

// adversarialVecs returns vectors of d dimensions that stress the
// quantisation: random ones, one-hot ones, one large component among tiny
// ones, components just off the int8 grid, constant ones, sparse ones, and
// copies and negations of base.
func adversarialVecs(r *rand.Rand, d int, base []float32) [][]float32 {
	var vs [][]float32
	add := func(f func(i int) float32) {
		v := make([]float32, d)
		for i := range v {
			v[i] = f(i)
		}
		vs = append(vs, v)
	}
	for range 20 {
		add(func(int) float32 { return r.Float32()*2 - 1 })
	}
	add(func(i int) float32 { return float32(min(i, 1)) })
	add(func(i int) float32 {
		if i == d/2 {
			return 1e6
		}
		return (r.Float32()*2 - 1) * 1e-3
	})
	add(func(i int) float32 { return float32(int(r.IntN(255))-127) + 0.5 })
	add(func(i int) float32 { return float32(int(r.IntN(255))-127)/127 + 1.0/254 })
	add(func(int) float32 { return 0.25 })
	add(func(i int) float32 {
		if r.IntN(10) == 0 {
			return r.Float32()
		}
		return 0
	})
	add(func(i int) float32 { return base[i] })
	add(func(i int) float32 { return -base[i] })
	add(func(i int) float32 { return base[i] * (1 + (r.Float32()-0.5)*1e-4) })
	add(func(i int) float32 { return base[i] + float32(i%2)*1e-3 })
	// A vector is never all zeros.
	for _, v := range vs {
		if !slices.ContainsFunc(v, func(x float32) bool { return x != 0 }) {
			v[0] = 1
		}
	}
	return vs
}

func TestBoundHolds(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, d := range []int{1, 2, 3, 7, 16, 17, 64, 384, 385, 1536, 4096, MaxDims} {
		minSlack, width, coarseWidth, count := math.Inf(1), 0.0, 0.0, 0
		for trial := range 6 {
			var qraw []float32
			if trial%2 == 0 {
				qraw = randVec(r, d)
			} else {
				qraw = adversarialVecs(r, d, randVec(r, d))[trial*5%30]
			}
			q := make([]float32, d)
			if !vecmath.Normalize(q, qraw) {
				t.Fatal("query did not normalise")
			}
			b := prepare(q)
			for _, v := range adversarialVecs(r, d, qraw) {
				x := make([]float32, d)
				if !vecmath.Normalize(x, v) {
					t.Fatalf("d=%d: row %v did not normalise", d, v)
				}
				codes := make([]uint8, d)
				scale, errBound := quantizeRow(codes, x)
				sum1, sum2 := make([]int32, 1), make([]int32, 1)
				vecmath.DotU8I8Batch(sum1, b.p1, codes)
				vecmath.DotU8I8Batch(sum2, b.p2, codes)
				score := vecmath.Dot(q, x)
				up1 := b.coarse(sum1[0], scale, errBound)
				up, low := b.fine(sum1[0], sum2[0], scale, errBound)
				if up1 < score || up < score {
					t.Fatalf("d=%d: upper bounds %v (coarse) and %v (fine) below score %v", d, up1, up, score)
				}
				if low > score {
					t.Fatalf("d=%d: lower bound %v above score %v", d, low, score)
				}
				minSlack = min(minSlack, float64(score-low))
				coarseWidth += float64(up1 - score)
				minSlack = min(minSlack, float64(up-score))
				width += float64(up - score)
				count++
			}
		}
		t.Logf("d=%4d: fine bound exceeds score by %.2g on average (coarse: %.2g), %.2g at least",
			d, width/float64(count), coarseWidth/float64(count), minSlack)
	}
}

// plainScan is Search without the bounds: it scores every accepted row
// with the float32 kernel, sorts them all and keeps the first k.
func plainScan(sets []*Set, query []float32, k int, accept func(Ref) bool, tie func(a, b Ref) int) []Hit {
	if tie == nil {
		tie = cmp.Compare[Ref]
	}
	q := make([]float32, len(query))
	vecmath.Normalize(q, query)
	var all []Hit
	for _, s := range sets {
		if s == nil {
			continue
		}
		scores := make([]float32, s.Len())
		vecmath.DotBatch(scores, q, s.data)
		for row, score := range scores {
			if ref := s.refs[row]; accept == nil || accept(ref) {
				all = append(all, Hit{Ref: ref, Score: score})
			}
		}
	}
	slices.SortFunc(all, func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return tie(a.Ref, b.Ref)
	})
	return all[:min(k, len(all))]
}

func TestSearchEqualsPlainScan(t *testing.T) {
	// The bound must never rule out a row that a plain scan keeps: the
	// results are identical, scores to the bit, on data built to put
	// many rows within the bound's width of each other.
	r := rand.New(rand.NewPCG(33, 34))
	for _, d := range []int{1, 2, 5, 16, 33, 384, 1536} {
		base := randVec(r, d)
		var sets []*Set
		ref := Ref(0)
		for range 3 {
			s := NewSet(d)
			for range 40 {
				for _, v := range adversarialVecs(r, d, base) {
					s.Add(ref, v)
					ref++
				}
			}
			sets = append(sets, s)
		}
		rank := func(ref Ref) uint64 { return uint64(ref) * 0x9e3779b97f4a7c15 }
		tie := func(a, b Ref) int { return cmp.Compare(rank(a), rank(b)) }
		queries := [][]float32{base, randVec(r, d), adversarialVecs(r, d, base)[21]}
		for qi, q := range queries {
			for _, k := range []int{1, 10, 100, 1000} {
				for _, accept := range []func(Ref) bool{nil, func(ref Ref) bool { return ref%4 != 1 }} {
					want := plainScan(sets, q, k, accept, tie)
					for _, workers := range []int{1, 2, 3} {
						got, err := search(sets, q, k, accept, tie, workers)
						if err != nil {
							t.Fatal(err)
						}
						if diff := gocmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
							name := fmt.Sprintf("d=%d query %d k=%d filtered=%v workers=%d", d, qi, k, accept != nil, workers)
							t.Fatalf("%s: search differs from a plain scan (-want +got):\n%s", name, diff)
						}
					}
				}
			}
		}
	}
}

func TestSearchWorstOrder(t *testing.T) {
	// Rows in increasing order of score make every row a candidate for a
	// while; the results must not change, and neither must they when the
	// filter refuses all but a few rows.
	r := rand.New(rand.NewPCG(35, 36))
	const dims = 24
	q := randVec(r, dims)
	vecs := make([][]float32, 3000)
	for i := range vecs {
		vecs[i] = randVec(r, dims)
	}
	slices.SortFunc(vecs, func(a, b []float32) int { return cmp.Compare(cosine64(a, q), cosine64(b, q)) })
	s := NewSet(dims)
	for i, v := range vecs {
		s.Add(Ref(i), v)
	}
	sets := []*Set{s}
	for _, k := range []int{1, 10, 500} {
		for _, accept := range []func(Ref) bool{nil, func(ref Ref) bool { return ref%97 == 3 }} {
			want := plainScan(sets, q, k, accept, nil)
			for _, workers := range []int{1, 2, 4} {
				got, err := search(sets, q, k, accept, nil, workers)
				if err != nil {
					t.Fatal(err)
				}
				if diff := gocmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("k=%d filtered=%v workers=%d: search differs from a plain scan (-want +got):\n%s", k, accept != nil, workers, diff)
				}
			}
		}
	}
}

func FuzzSearch(f *testing.F) {
	// Small vectors of small integers: many equal and nearly equal
	// scores, where a bound that ruled out one row too many would show.
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, uint8(3), uint8(2), uint8(1))
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 255, 0}, uint8(2), uint8(4), uint8(2))
	f.Add(make([]byte, 64), uint8(4), uint8(5), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, dimsB, kB, mode uint8) {
		dims := int(dimsB%8) + 1
		if len(data) < 2*dims {
			return
		}
		vec := func(b []byte) []float32 {
			v := make([]float32, dims)
			for i := range v {
				v[i] = float32(int8(b[i]) / 16)
			}
			return v
		}
		q := vec(data)
		if !slices.ContainsFunc(q, func(x float32) bool { return x != 0 }) {
			return
		}
		var sets []*Set
		ref := Ref(0)
		for i, rest := 0, data[dims:]; len(rest) >= dims; i++ {
			if i%40 == 0 {
				sets = append(sets, NewSet(dims))
			}
			sets[len(sets)-1].Add(ref, vec(rest))
			ref++
			rest = rest[dims:]
		}
		k := int(kB%20) + 1
		var accept func(Ref) bool
		if mode&1 != 0 {
			accept = func(ref Ref) bool { return ref%3 != 0 }
		}
		tie := func(a, b Ref) int { return cmp.Compare(b, a) }
		want := plainScan(sets, q, k, accept, tie)
		got, err := search(sets, q, k, accept, tie, int(mode/2%4)+1)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("search differs from a plain scan (-want +got):\n%s", diff)
		}
	})
}
