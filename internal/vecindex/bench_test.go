package vecindex

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory/internal/vecmath"
)

const benchDims = 384

// fillSet adds n random vectors to s, tagged from first on; generating
// values straight from r keeps building a large corpus quick.
func fillSet(r *rand.Rand, s *Set, first Ref, n int) {
	s.Grow(n)
	v := make([]float32, s.Dims())
	for i := range n {
		for j := range v {
			v[j] = r.Float32()*2 - 1
		}
		s.Add(first+Ref(i), v)
	}
}

var (
	big100kOnce sync.Once
	big100k     *Set

	scopesOnce sync.Once
	scopes     []*Set
)

// set100k returns one Set of 100,000 random vectors of 384 dimensions.
func set100k() *Set {
	big100kOnce.Do(func() {
		big100k = NewSet(benchDims)
		fillSet(rand.New(rand.NewPCG(100, 1)), big100k, 0, 100_000)
	})
	return big100k
}

// scopes1000 returns 1,000 Sets of 1,000 random vectors of 384 dimensions
// each, 1.5 GB in all.
func scopes1000() []*Set {
	scopesOnce.Do(func() {
		r := rand.New(rand.NewPCG(1000, 1))
		scopes = make([]*Set, 1000)
		for i := range scopes {
			scopes[i] = NewSet(benchDims)
			fillSet(r, scopes[i], Ref(i)*1000, 1000)
		}
	})
	return scopes
}

// benchQueries returns n random queries of benchDims dimensions.
func benchQueries(n int) [][]float32 {
	r := rand.New(rand.NewPCG(7, 7))
	qs := make([][]float32, n)
	for i := range qs {
		qs[i] = randVec(r, benchDims)
	}
	return qs
}

// runSearches runs search, given the iteration number, once per benchmark
// iteration, timing each, and reports the median alongside ns/op.
func runSearches(b *testing.B, search func(i int) ([]Hit, error)) {
	b.Helper()
	var durs []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		hits, err := search(i)
		durs = append(durs, time.Since(start))
		if err != nil || len(hits) == 0 {
			b.Fatalf("search: %d hits, %v", len(hits), err)
		}
	}
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "median-ns/op")
}

// BenchmarkSearch100k: k=10 over one Set of 100,000 vectors.
func BenchmarkSearch100k(b *testing.B) {
	sets := []*Set{set100k()}
	qs := benchQueries(16)
	runSearches(b, func(i int) ([]Hit, error) {
		return Search(sets, qs[i%len(qs)], 10, nil, nil)
	})
}

// BenchmarkSearch100kFiltered is BenchmarkSearch100k with an accept
// function that refuses half the rows, as a driver's filter would.
func BenchmarkSearch100kFiltered(b *testing.B) {
	sets := []*Set{set100k()}
	qs := benchQueries(16)
	accept := func(ref Ref) bool { return ref%2 == 0 }
	runSearches(b, func(i int) ([]Hit, error) {
		return Search(sets, qs[i%len(qs)], 10, accept, nil)
	})
}

// BenchmarkSearch100kOneGoroutine is BenchmarkSearch100k kept on the
// calling goroutine, to show what the split across CPUs buys.
func BenchmarkSearch100kOneGoroutine(b *testing.B) {
	sets := []*Set{set100k()}
	qs := benchQueries(16)
	runSearches(b, func(i int) ([]Hit, error) {
		return search(sets, qs[i%len(qs)], 10, nil, nil, 1)
	})
}

// BenchmarkSearch100kK1000 is BenchmarkSearch100k at the largest k the
// drivers allow.
func BenchmarkSearch100kK1000(b *testing.B) {
	sets := []*Set{set100k()}
	qs := benchQueries(16)
	runSearches(b, func(i int) ([]Hit, error) {
		return Search(sets, qs[i%len(qs)], 1000, nil, nil)
	})
}

// BenchmarkSearchOneScopeOf1000: k=10 over one of 1,000 Sets of 1,000
// vectors, a different Set each time, so that the Set searched is
// rarely still in the CPU caches.
func BenchmarkSearchOneScopeOf1000(b *testing.B) {
	all := scopes1000()
	qs := benchQueries(16)
	order := rand.New(rand.NewPCG(3, 3)).Perm(len(all))
	one := make([]*Set, 1)
	runSearches(b, func(i int) ([]Hit, error) {
		one[0] = all[order[i%len(order)]]
		return Search(one, qs[i%len(qs)], 10, nil, nil)
	})
}

// BenchmarkFloat32Scan100k scores every row of BenchmarkSearch100k's Set
// with the float32 kernel into a top k, on the calling goroutine: what
// Search does without its int8 bounds, for comparison.
func BenchmarkFloat32Scan100k(b *testing.B) {
	s := set100k()
	qs := benchQueries(16)
	d := s.Dims()
	q := make([]float32, d)
	scores := make([]float32, blockRows)
	runSearches(b, func(i int) ([]Hit, error) {
		vecmath.Normalize(q, qs[i%len(qs)])
		t := newTopK(10, cmp.Compare[Ref])
		for lo := 0; lo < s.Len(); lo += blockRows {
			n := min(blockRows, s.Len()-lo)
			vecmath.DotBatch(scores[:n], q, s.data[lo*d:(lo+n)*d])
			for j, score := range scores[:n] {
				t.offer(Hit{Ref: s.refs[lo+j], Score: score})
			}
		}
		return t.sorted(), nil
	})
}
