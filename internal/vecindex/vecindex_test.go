package vecindex

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp" // the standard library's cmp orders the hits
	"github.com/google/go-cmp/cmp/cmpopts"
)

// corpus is test data: Sets and, for the reference, the vectors added.
type corpus struct {
	sets []*Set
	vecs map[Ref][]float32
}

// newCorpus fills Sets of the given sizes with random vectors of dims
// dimensions, tagging rows with consecutive Refs from 1.
func newCorpus(r *rand.Rand, dims int, sizes ...int) *corpus {
	c := &corpus{vecs: map[Ref][]float32{}}
	ref := Ref(1)
	for _, n := range sizes {
		s := NewSet(dims)
		for range n {
			v := randVec(r, dims)
			if !s.Add(ref, v) {
				panic("Add of a random vector failed")
			}
			c.vecs[ref] = v
			ref++
		}
		c.sets = append(c.sets, s)
	}
	return c
}

// randVec returns a vector of values uniform in [-1, 1), never zero.
func randVec(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	v[r.IntN(dims)] += 2
	return v
}

// cosine64 returns the cosine similarity of a and b in float64.
func cosine64(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// reference is Search by brute force in float64, over the Refs in sets.
func reference(sets []*Set, vecs map[Ref][]float32, query []float32, k int, accept func(Ref) bool, tie func(a, b Ref) int) []Hit {
	if tie == nil {
		tie = cmp.Compare[Ref]
	}
	type scored struct {
		ref   Ref
		score float64
	}
	var all []scored
	for _, s := range sets {
		if s == nil {
			continue
		}
		for _, ref := range s.refs {
			if accept == nil || accept(ref) {
				all = append(all, scored{ref, cosine64(vecs[ref], query)})
			}
		}
	}
	slices.SortFunc(all, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return tie(a.ref, b.ref)
	})
	hits := []Hit{}
	for _, x := range all[:min(k, len(all))] {
		hits = append(hits, Hit{x.ref, float32(x.score)})
	}
	return hits
}

// checkHits compares got with the reference want: the same Refs in the
// same order, except that Refs may differ or swap where their reference
// scores are within 1e-5 of each other; scores within 1e-5 of the
// reference; no Ref twice. It returns how many positions differ.
func checkHits(t *testing.T, name string, got, want []Hit, vecs map[Ref][]float32, query []float32) int {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d hits, want %d", name, len(got), len(want))
	}
	seen := map[Ref]bool{}
	diff := 0
	for i, h := range got {
		if seen[h.Ref] {
			t.Fatalf("%s: Ref %d appears twice", name, h.Ref)
		}
		seen[h.Ref] = true
		v, ok := vecs[h.Ref]
		if !ok {
			t.Fatalf("%s: hit %d has unknown Ref %d", name, i, h.Ref)
		}
		ref := cosine64(v, query)
		if math.Abs(float64(h.Score)-ref) > 1e-5 {
			t.Errorf("%s: hit %d (Ref %d) scored %v, reference %v", name, i, h.Ref, h.Score, ref)
		}
		if h.Ref != want[i].Ref {
			diff++
			if math.Abs(ref-float64(want[i].Score)) >= 1e-5 {
				t.Errorf("%s: hit %d is Ref %d (reference score %v), want Ref %d (%v)", name, i, h.Ref, ref, want[i].Ref, want[i].Score)
			}
		}
	}
	return diff
}

func TestSearchMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	swaps, compared := 0, 0
	for _, dims := range []int{1, 2, 3, 8, 17, 64, 384} {
		for _, sizes := range [][]int{{0}, {1}, {300}, {1000}, {50, 0, 700, 3, 129}} {
			c := newCorpus(r, dims, sizes...)
			sets := c.sets
			if len(sets) > 1 {
				sets = append([]*Set{nil}, sets...)
			}
			for _, k := range []int{1, 10, 100, 5000} {
				for _, filter := range []bool{false, true} {
					var accept func(Ref) bool
					if filter {
						accept = func(ref Ref) bool { return ref%3 != 0 }
					}
					for _, workers := range []int{0, 1, 2, 3, 7} {
						q := randVec(r, dims)
						got, err := search(sets, q, k, accept, nil, workers)
						if err != nil {
							t.Fatal(err)
						}
						want := reference(sets, c.vecs, q, k, accept, nil)
						name := fmt.Sprintf("dims=%d sizes=%v k=%d filter=%v workers=%d", dims, sizes, k, filter, workers)
						swaps += checkHits(t, name, got, want, c.vecs, q)
						compared += len(got)
						if filter {
							for _, h := range got {
								if !accept(h.Ref) {
									t.Fatalf("%s: Ref %d was not accepted", name, h.Ref)
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d of %d hits differ from the float64 reference by a near-tie", swaps, compared)
}

func TestSearchLargeRunsInParallel(t *testing.T) {
	// Enough work for Search to split the scan by itself.
	r := rand.New(rand.NewPCG(3, 4))
	const dims = 384
	c := newCorpus(r, dims, parallelMinWork/dims+1000, 500)
	for i := range 4 {
		q := randVec(r, dims)
		accept := func(ref Ref) bool { return ref%5 != Ref(i) }
		got, err := Search(c.sets, q, 50, accept, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkHits(t, fmt.Sprint("query ", i), got, reference(c.sets, c.vecs, q, 50, accept, nil), c.vecs, q)
		seq, err := search(c.sets, q, 50, accept, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(seq, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("query %d: parallel and sequential results differ (-sequential +parallel):\n%s", i, diff)
		}
	}
}

func TestSearchTiesFollowTie(t *testing.T) {
	// Every vector is the same direction, at lengths a power of two apart
	// (which normalise to the same float32s), so every score is equal and
	// tie alone orders the results. The tie order here is unrelated to Ref
	// order or row order, like Created descending.
	const dims = 33
	r := rand.New(rand.NewPCG(5, 6))
	base := randVec(r, dims)
	rank := map[Ref]int{}
	var sets []*Set
	ref := Ref(1)
	for _, n := range []int{200, 0, 57, 400} {
		s := NewSet(dims)
		for range n {
			v := make([]float32, dims)
			scale := []float32{1, 2, 4, 0.5, 1024}[r.IntN(5)]
			for i := range v {
				v[i] = base[i] * scale
			}
			s.Add(ref, v)
			rank[ref] = r.Int()
			ref++
		}
		sets = append(sets, s)
	}
	tie := func(a, b Ref) int {
		if c := cmp.Compare(rank[b], rank[a]); c != 0 {
			return c
		}
		return cmp.Compare(b, a)
	}
	var all []Ref
	for ref := range rank {
		all = append(all, ref)
	}
	slices.SortFunc(all, tie)
	q := make([]float32, dims)
	for i := range q {
		q[i] = base[i] * 0.5
	}
	for _, k := range []int{1, 7, 100, 657, 1000} {
		for _, workers := range []int{0, 1, 2, 5} {
			got, err := search(sets, q, k, nil, tie, workers)
			if err != nil {
				t.Fatal(err)
			}
			want := all[:min(k, len(all))]
			if len(got) != len(want) {
				t.Fatalf("k=%d workers=%d: %d hits, want %d", k, workers, len(got), len(want))
			}
			wantHits := make([]Hit, len(want)) // every hit at the first one's score
			for i, ref := range want {
				wantHits[i] = Hit{Ref: ref, Score: got[0].Score}
			}
			if diff := gocmp.Diff(wantHits, got, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("k=%d workers=%d: hits (-want +got):\n%s", k, workers, diff)
			}
		}
	}

	// Two groups of identical vectors: the nearer group first, each group
	// in tie order.
	near, far := NewSet(2), NewSet(2)
	for ref := Ref(1); ref <= 20; ref++ {
		if ref%2 == 0 {
			near.Add(ref, []float32{1, 0})
		} else {
			far.Add(ref, []float32{1, 1})
		}
	}
	desc := func(a, b Ref) int { return cmp.Compare(b, a) }
	got, err := search([]*Set{far, near}, []float32{1, 0}, 15, nil, desc, 2)
	if err != nil {
		t.Fatal(err)
	}
	var refs []Ref
	for _, h := range got {
		refs = append(refs, h.Ref)
	}
	if want := []Ref{20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 19, 17, 15, 13, 11}; !slices.Equal(refs, want) {
		t.Errorf("two groups: got %v, want %v", refs, want)
	}
	// A nil tie orders by Ref ascending.
	got, err = Search([]*Set{far, near}, []float32{0, 1}, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Ref != 1 || got[1].Ref != 3 || got[2].Ref != 5 {
		t.Errorf("nil tie: got %v, want Refs 1, 3, 5", got)
	}
}

func TestSearchKLargerThanData(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	c := newCorpus(r, 16, 5, 3)
	q := randVec(r, 16)
	for _, workers := range []int{0, 1, 2, 8, 100} {
		got, err := search(c.sets, q, 1000, nil, nil, workers)
		if err != nil {
			t.Fatal(err)
		}
		checkHits(t, fmt.Sprint("workers ", workers), got, reference(c.sets, c.vecs, q, 1000, nil, nil), c.vecs, q)
		if len(got) != 8 {
			t.Errorf("workers %d: %d hits, want all 8", workers, len(got))
		}
		for i := 1; i < len(got); i++ {
			if got[i].Score > got[i-1].Score {
				t.Errorf("workers %d: hits out of order: %v", workers, got)
			}
		}
	}
}

func TestSearchAccept(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	c := newCorpus(r, 24, 400, 400)
	q := randVec(r, 24)
	none, err := Search(c.sets, q, 10, func(Ref) bool { return false }, nil)
	if err != nil || len(none) != 0 {
		t.Errorf("accept none: %v, %v; want no hits", none, err)
	}
	// The best row overall, refused, must not appear, and the next best
	// take its place: the filter applies inside the search.
	best, err := Search(c.sets, q, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	accept := func(ref Ref) bool { return ref != best[0].Ref }
	got, err := Search(c.sets, q, 10, accept, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkHits(t, "without the best", got, reference(c.sets, c.vecs, q, 10, accept, nil), c.vecs, q)
	// Only three rows qualify: all three come back.
	only := map[Ref]bool{5: true, 399: true, 700: true}
	got, err = Search(c.sets, q, 10, func(ref Ref) bool { return only[ref] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkHits(t, "three rows", got, reference(c.sets, c.vecs, q, 10, func(ref Ref) bool { return only[ref] }, nil), c.vecs, q)
	if len(got) != 3 {
		t.Errorf("three rows qualify, got %d hits", len(got))
	}
}

func TestSearchEmpty(t *testing.T) {
	q := []float32{1, 2, 3}
	for name, sets := range map[string][]*Set{
		"no sets":    nil,
		"nil sets":   {nil, nil},
		"empty sets": {NewSet(3), nil, NewSet(3)},
	} {
		got, err := Search(sets, q, 10, nil, nil)
		if err != nil || len(got) != 0 {
			t.Errorf("%s: %v, %v; want no hits and no error", name, got, err)
		}
	}
	s := NewSet(3)
	s.Add(1, []float32{1, 0, 0})
	s.Remove(1)
	if got, err := Search([]*Set{s}, q, 1, nil, nil); err != nil || len(got) != 0 {
		t.Errorf("emptied set: %v, %v; want no hits and no error", got, err)
	}
}

func TestSearchErrors(t *testing.T) {
	s3, s4 := NewSet(3), NewSet(4)
	s3.Add(1, []float32{1, 2, 3})
	if _, err := Search([]*Set{s3, s4}, []float32{1, 2, 3}, 1, nil, nil); err == nil {
		t.Error("no error for an empty set of other dimensions")
	}
	if _, err := Search([]*Set{s3}, []float32{1, 2, 3, 4}, 1, nil, nil); err == nil {
		t.Error("no error for a query of 4 dimensions over a set of 3")
	} else {
		t.Logf("dimension mismatch: %v", err)
	}
	for name, q := range map[string][]float32{
		"empty": {},
		"zero":  {0, 0, 0},
		"NaN":   {1, float32(math.NaN()), 0},
		"Inf":   {1, float32(math.Inf(1)), 0},
	} {
		if _, err := Search([]*Set{s3}, q, 1, nil, nil); err == nil {
			t.Errorf("no error for a %s query", name)
		}
	}
	// Nothing to search still checks the query.
	if _, err := Search(nil, []float32{0, 0}, 1, nil, nil); err == nil {
		t.Error("no error for a zero query over no sets")
	}
	for _, k := range []int{0, -1} {
		if got, err := Search([]*Set{s3}, []float32{1, 2, 3}, k, nil, nil); err != nil || len(got) != 0 {
			t.Errorf("k=%d: %v, %v; want no hits and no error", k, got, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("NewSet(0) did not panic")
		}
	}()
	NewSet(0)
}

func TestSetAdd(t *testing.T) {
	s := NewSet(3)
	if s.Dims() != 3 || s.Len() != 0 {
		t.Fatalf("new set: Dims %d Len %d", s.Dims(), s.Len())
	}
	v := []float32{3, 0, 4}
	if !s.Add(7, v) || s.Len() != 1 || !s.Has(7) || s.Has(8) {
		t.Fatalf("Add(7): Len %d Has(7) %v Has(8) %v", s.Len(), s.Has(7), s.Has(8))
	}
	if v[0] != 3 || v[2] != 4 {
		t.Errorf("Add changed its argument to %v", v)
	}
	if !slices.Equal(s.data, []float32{0.6, 0, 0.8}) {
		t.Errorf("stored row %v, want the normalised (0.6, 0, 0.8)", s.data)
	}
	v[0] = 100
	if s.data[0] != 0.6 {
		t.Error("the set retained the caller's slice")
	}
	for name, bad := range map[string][]float32{
		"short": {1, 2},
		"long":  {1, 2, 3, 4},
		"zero":  {0, 0, 0},
		"NaN":   {float32(math.NaN()), 1, 1},
		"Inf":   {float32(math.Inf(-1)), 1, 1},
	} {
		if s.Add(8, bad) || s.Has(8) || s.Len() != 1 {
			t.Errorf("Add(%s) was accepted", name)
		}
		// A failed replacement keeps the old vector.
		if s.Add(7, bad) || !slices.Equal(s.data, []float32{0.6, 0, 0.8}) {
			t.Errorf("replacing with %s: Add accepted or row now %v", name, s.data)
		}
	}
	if !s.Add(7, []float32{0, -2, 0}) || s.Len() != 1 || !slices.Equal(s.data, []float32{0, -1, 0}) {
		t.Errorf("replacing Ref 7: Len %d, row %v", s.Len(), s.data)
	}
	if s.Remove(8) || !s.Remove(7) || s.Remove(7) || s.Len() != 0 || s.Has(7) {
		t.Error("Remove did not report presence correctly")
	}
	s.Grow(100)
	if cap(s.refs) < 100 || cap(s.data) < 300 {
		t.Errorf("Grow(100): capacities %d and %d", cap(s.refs), cap(s.data))
	}
	data := &s.data[:1][0]
	for ref := Ref(0); ref < 100; ref++ {
		s.Add(ref, []float32{1, 1, 1})
	}
	if &s.data[0] != data {
		t.Error("Add reallocated after Grow")
	}
}

// checkSet verifies a Set's internal invariants against the vectors it
// should hold.
func checkSet(t *testing.T, s *Set, want map[Ref][]float32) {
	t.Helper()
	n := len(want)
	if s.Len() != n || len(s.rows) != n || len(s.data) != n*s.dims || len(s.codes) != n*s.dims || len(s.scales) != n || len(s.errs) != n {
		t.Fatalf("Len %d, %d in the map, %d floats, %d codes, %d scales, %d bounds; want %d rows",
			s.Len(), len(s.rows), len(s.data), len(s.codes), len(s.scales), len(s.errs), n)
	}
	c := cap(s.refs)
	if cap(s.data) != c*s.dims || cap(s.codes) != c*s.dims || cap(s.scales) != c || cap(s.errs) != c {
		t.Fatalf("capacities disagree: %d rows, %d floats, %d codes, %d scales, %d bounds",
			c, cap(s.data), cap(s.codes), cap(s.scales), cap(s.errs))
	}
	for i, ref := range s.refs {
		if s.rows[ref] != i {
			t.Fatalf("row %d holds Ref %d, which the map puts at row %d", i, ref, s.rows[ref])
		}
		v, ok := want[ref]
		if !ok {
			t.Fatalf("row %d holds Ref %d, which was removed", i, ref)
		}
		row := s.data[i*s.dims : (i+1)*s.dims]
		if c := cosine64(row, v); c < 1-1e-6 {
			t.Fatalf("row %d (Ref %d) is not the vector added: cosine %v", i, ref, c)
		}
		codes := make([]uint8, s.dims)
		scale, errBound := quantizeRow(codes, row)
		if !slices.Equal(codes, s.codes[i*s.dims:(i+1)*s.dims]) || scale != s.scales[i] || errBound != s.errs[i] {
			t.Fatalf("row %d (Ref %d): quantised form does not match the row", i, ref)
		}
	}
}

func TestSetChurn(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const dims = 20
	s := NewSet(dims)
	live := map[Ref][]float32{}
	for round := range 6 {
		// Grow, replace and remove at random, then drain most of the set
		// so that it gives memory back.
		for range 3000 {
			ref := Ref(r.IntN(2000))
			switch op := r.IntN(10); {
			case op < 6:
				v := randVec(r, dims)
				if !s.Add(ref, v) {
					t.Fatal("Add failed")
				}
				live[ref] = v
			default:
				_, had := live[ref]
				if s.Remove(ref) != had {
					t.Fatalf("Remove(%d) disagreed with the model (had %v)", ref, had)
				}
				delete(live, ref)
			}
		}
		checkSet(t, s, live)
		q := randVec(r, dims)
		got, err := Search([]*Set{s}, q, 25, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkHits(t, fmt.Sprint("round ", round), got, reference([]*Set{s}, live, q, 25, nil, nil), live, q)
		for ref := range live {
			if r.IntN(10) != 0 {
				s.Remove(ref)
				delete(live, ref)
			}
		}
		checkSet(t, s, live)
		if c := cap(s.refs); c > 4*max(len(live), minShrinkRows) {
			t.Errorf("round %d: %d rows left in a capacity of %d", round, len(live), c)
		}
	}
}

func TestConcurrentSearches(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	c := newCorpus(r, 48, 3000, 1000, 2000)
	queries := make([][]float32, 8)
	want := make([][]Hit, len(queries))
	accept := func(ref Ref) bool { return ref%7 != 0 }
	for i := range queries {
		queries[i] = randVec(r, 48)
		var err error
		if want[i], err = search(c.sets, queries[i], 20, accept, nil, 1); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				qi := (g + i) % len(queries)
				got, err := search(c.sets, queries[qi], 20, accept, nil, 1+i%3)
				if err != nil {
					t.Error(err)
					return
				}
				if diff := gocmp.Diff(want[qi], got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("goroutine %d, query %d: concurrent result differs (-want +got):\n%s", g, qi, diff)
					return
				}
			}
		})
	}
	wg.Wait()
}
