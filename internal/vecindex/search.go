package vecindex

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/agentmem/memory/internal/vecmath"
)

// Hit is a row found by Search.
type Hit struct {
	// Ref tags the row.
	Ref Ref
	// Score is the cosine similarity between the row's vector and the
	// query, from -1 to 1 give or take float32 rounding; higher is closer.
	Score float32
}

const (
	// blockRows is how many rows one kernel call bounds: enough to
	// amortise the call, few enough that the sums stay on the stack.
	blockRows = 128
	// parallelMinWork is the number of vector elements (rows times
	// dimensions) below which a search stays on the calling goroutine:
	// about 20,000 rows of 384 dimensions, a few hundred microseconds of
	// scanning on one core, against microseconds to start goroutines.
	parallelMinWork = 20000 * 384
	// workPerWorker is the least number of vector elements worth handing
	// to one more goroutine.
	workPerWorker = parallelMinWork / 2
)

// errBadQuery is returned for a query that has no direction.
var errBadQuery = errors.New("vecindex: query vector is zero or not finite")

// Search returns the k rows of sets whose vectors are nearest to query by
// cosine similarity, best first, among the rows for which accept returns
// true. Fewer than k are returned when fewer rows qualify; none (and no
// error) when k < 1.
//
// accept, if not nil, is how the caller filters rows inside the search, so
// that the k results are the best k that qualify rather than a filtered
// part of an unfiltered top k. Search calls it only for rows that the
// bounds on their scores have not already ruled out, in no particular
// order, so it may not see every row. A nil accept accepts every row.
//
// Rows of exactly equal score are ordered by tie: tie(a, b) < 0 puts a
// first. tie should be a strict total order on the Refs searched (zero
// only for equal Refs), so that the results do not depend on how rows lie
// in the Sets; a nil tie orders by Ref ascending. Rows added with equal
// vectors (or vectors a power of two apart) score equally to the bit,
// wherever they lie in memory.
//
// The results, scores included, are exactly those of scoring every row
// with vecmath.Dot against the normalised query; most rows are ruled out
// by a cheaper bound that never rules out a row that could qualify (see
// the package's quant.go).
//
// Large searches run on several goroutines, which then call accept and tie
// concurrently: both must be safe for concurrent use, must not panic, and
// must not modify the Sets. Nil Sets in sets are skipped. Every other Set must have
// Dims() == len(query), empty Sets included; otherwise Search returns an
// error, as it does for a zero or non-finite query. Search does not modify
// the Sets or query and may run concurrently with other Searches.
func Search(sets []*Set, query []float32, k int, accept func(Ref) bool, tie func(a, b Ref) int) ([]Hit, error) {
	return search(sets, query, k, accept, tie, 0)
}

// search is Search on the given number of goroutines, or on as many as
// the size of the search merits when workers is 0.
func search(sets []*Set, query []float32, k int, accept func(Ref) bool, tie func(a, b Ref) int, workers int) ([]Hit, error) {
	d := len(query)
	total := 0
	for _, s := range sets {
		if s == nil {
			continue
		}
		if s.dims != d {
			return nil, fmt.Errorf("vecindex: query has %d dimensions; the set searched holds vectors of %d", d, s.dims)
		}
		total += len(s.refs)
	}
	q := make([]float32, d)
	if d == 0 || !vecmath.Normalize(q, query) {
		return nil, errBadQuery
	}
	if k < 1 || total == 0 {
		return nil, nil
	}
	if tie == nil {
		tie = cmp.Compare[Ref]
	}
	if workers <= 0 {
		workers = 1
		if p := runtime.GOMAXPROCS(0); p > 1 && total*d >= parallelMinWork {
			workers = min(p, total*d/workPerWorker)
		}
	}
	workers = min(workers, total)
	size := min(k, total)

	b := prepare(q)
	shared := newCut()
	if workers == 1 {
		w := newWorker(b, size, accept, shared)
		w.scanRange(sets, 0, total)
		top := w.rescore(tie)
		w.release()
		return top.sorted(), nil
	}
	tops := make([]*topK, workers)
	var wg sync.WaitGroup
	for i := range workers {
		lo, hi := i*total/workers, (i+1)*total/workers
		run := func() {
			// Every worker keeps the search's k, never fewer, since its
			// k-th best bounds the search's k-th best only then.
			w := newWorker(b, size, accept, shared)
			w.scanRange(sets, lo, hi)
			tops[i] = w.rescore(tie)
			w.release()
		}
		if i == workers-1 {
			// The calling goroutine takes the last share itself.
			run()
			break
		}
		wg.Go(run)
	}
	wg.Wait()
	n := 0
	for _, t := range tops {
		n += len(t.h)
	}
	all := make([]Hit, 0, n)
	for _, t := range tops {
		all = append(all, t.h...)
	}
	merged := &topK{k: size, h: all, tie: tie}
	hits := merged.sorted()
	if len(hits) > size {
		hits = hits[:size:size]
	}
	return hits, nil
}
