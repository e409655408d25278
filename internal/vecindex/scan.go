package vecindex

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentmem/memory/internal/kth"
	"github.com/agentmem/memory/internal/vecmath"
)

// A worker searches a share of the rows in two passes.
//
// The first pass streams through the rows' int8 codes and bounds each
// row's score from above and below (see quant.go). It keeps the k largest
// lower bounds of accepted rows in a heap: once k are known, the k-th
// best score is at least the smallest of them, so a row whose upper bound
// is below it cannot be among the results. The rows not ruled out so far
// become candidates, after accept has approved them.
//
// The second pass scores the candidates with their float32 vectors, in
// order of decreasing upper bound, offering each to a topK, and stops at
// the first candidate whose upper bound is below the k-th best score
// found: no later one can enter. Scoring float32 vectors is the dear
// part, a load from memory at a scattered place for each, and in this
// order few are scored beyond the k results themselves.
//
// The workers of one search share the largest lower bound on the k-th
// best score that any of them has established (the cut): k accepted rows
// in one worker's share score at least its own, so it holds for the whole
// search. A row whose upper bound is below the cut is ruled out, in
// either pass; as the comparison is strict, a row that could tie with
// the k-th best is never ruled out. The cut only makes the workers skip
// more or less work, never changes what they return, so how the workers
// interleave does not matter.
type worker struct {
	b      *bound
	k      int
	accept func(Ref) bool
	shared *cut
	// lows is a min-heap of the k largest lower bounds of the accepted
	// rows seen.
	lows []float32
	// cut is the largest lower bound on the k-th best score known to
	// this worker: the root of lows once it holds k, or the shared cut.
	cut   float32
	cands []candidate
}

// cut is the shared lower bound on the k-th best score of a search.
type cut struct {
	bits atomic.Uint32
}

func newCut() *cut {
	c := new(cut)
	c.bits.Store(math.Float32bits(float32(math.Inf(-1))))
	return c
}

// load returns the bound.
func (c *cut) load() float32 { return math.Float32frombits(c.bits.Load()) }

// raise makes the bound at least v.
func (c *cut) raise(v float32) {
	for {
		old := c.bits.Load()
		if math.Float32frombits(old) >= v || c.bits.CompareAndSwap(old, math.Float32bits(v)) {
			return
		}
	}
}

// candidate is a row the first pass did not rule out.
type candidate struct {
	set   *Set
	row   int
	upper float32
}

// workers keeps the workers of past searches, for the memory of their
// heaps and candidates: a search of hundreds of results among 100,000
// rows keeps thousands of candidates, and making them anew each time
// was most of what a search allocated.
var workers = sync.Pool{New: func() any { return new(worker) }}

func newWorker(b *bound, k int, accept func(Ref) bool, shared *cut) *worker {
	w := workers.Get().(*worker)
	lows, cands := w.lows[:0], w.cands[:0]
	if cap(lows) < k {
		lows = make([]float32, 0, k)
	}
	if cap(cands) < 2*k+32 {
		// Room for the candidates of a typical search: the k results and
		// as many again that were once among the best.
		cands = make([]candidate, 0, 2*k+32)
	}
	*w = worker{b: b, k: k, accept: accept, shared: shared, lows: lows, cut: shared.load(), cands: cands}
	return w
}

// release returns w to the pool once its search no longer needs it,
// holding none of the search's sets or functions.
func (w *worker) release() {
	// The candidates this search held; those past them were cleared by
	// the search that held them.
	clear(w.cands)
	*w = worker{lows: w.lows[:0], cands: w.cands[:0]}
	workers.Put(w)
}

// scanRange runs the first pass over the rows numbered lo to hi-1,
// counting through the non-nil sets in order, as if their rows were one
// sequence.
func (w *worker) scanRange(sets []*Set, lo, hi int) {
	base := 0
	for _, s := range sets {
		if base >= hi {
			return
		}
		if s == nil {
			continue
		}
		n := len(s.refs)
		if from, to := max(lo-base, 0), min(hi-base, n); from < to {
			w.scan(s, from, to)
		}
		base += n
	}
}

// scan runs the first pass over rows lo to hi-1 of s: blockRows rows at
// a time, one kernel call gives the coarse upper bounds; for each row
// that reaches the cut, a second, on codes still in the cache, gives the
// fine bounds. The cut is exchanged with the other workers once a block.
func (w *worker) scan(s *Set, lo, hi int) {
	d, b := s.dims, w.b
	var sums [blockRows]int32
	var sum2 [1]int32
	for lo < hi {
		w.cut = max(w.cut, w.shared.load())
		n := min(blockRows, hi-lo)
		vecmath.DotU8I8Batch(sums[:n], b.p1, s.codes[lo*d:(lo+n)*d])
		scales, errs := s.scales[lo:lo+n], s.errs[lo:lo+n]
		for i := range scales {
			if b.coarse(sums[i], scales[i], errs[i]) < w.cut {
				continue
			}
			row := lo + i
			vecmath.DotU8I8Batch(sum2[:], b.p2, s.codes[row*d:(row+1)*d])
			upper, lower := b.fine(sums[i], sum2[0], scales[i], errs[i])
			if upper < w.cut {
				continue
			}
			if w.accept != nil && !w.accept(s.refs[row]) {
				continue
			}
			w.cands = append(w.cands, candidate{set: s, row: row, upper: upper})
			w.addLower(lower)
		}
		w.shared.raise(w.cut)
		lo += n
	}
}

// addLower records the lower bound of an accepted row.
func (w *worker) addLower(lower float32) {
	w.lows = kth.Push(w.lows, w.k, lower)
	if len(w.lows) == w.k {
		w.cut = max(w.cut, w.lows[0])
	}
}

// rescore runs the second pass and returns the best k candidates.
func (w *worker) rescore(tie func(a, b Ref) int) *topK {
	w.shared.raise(w.cut)
	cutoff := w.shared.load()
	cands := slices.DeleteFunc(w.cands, func(c candidate) bool { return c.upper < cutoff })
	slices.SortFunc(cands, func(a, b candidate) int { return cmp.Compare(b.upper, a.upper) })
	t := newTopK(w.k, tie)
	q := w.b.q
	for _, c := range cands {
		if c.upper < t.thr || c.upper < w.shared.load() {
			break
		}
		d := c.set.dims
		score := vecmath.Dot(q, c.set.data[c.row*d:(c.row+1)*d])
		if t.offer(Hit{Ref: c.set.refs[c.row], Score: score}) && len(t.h) == t.k {
			w.shared.raise(t.thr)
		}
	}
	return t
}
