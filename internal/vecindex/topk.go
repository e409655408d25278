package vecindex

import (
	"math"
	"slices"
)

// topK keeps the best k hits offered: a binary min-heap under the result
// order, whose root is the worst hit kept, the one a better hit evicts.
// With a strict total order for tie, what it keeps does not depend on
// the order in which hits are offered.
type topK struct {
	k   int
	h   []Hit
	tie func(a, b Ref) int
	// thr is the root's score once the heap is full, -Inf before: a row
	// scoring below thr cannot enter.
	thr float32
}

func newTopK(k int, tie func(a, b Ref) int) *topK {
	return &topK{k: k, h: make([]Hit, 0, k), tie: tie, thr: float32(math.Inf(-1))}
}

// offer keeps h if it is among the best k offered so far, and reports
// whether it did.
func (t *topK) offer(h Hit) bool {
	if h.Score < t.thr {
		return false
	}
	if len(t.h) < t.k {
		t.h = append(t.h, h)
		t.up(len(t.h) - 1)
	} else {
		if h.Score == t.thr && t.tie(h.Ref, t.h[0].Ref) >= 0 {
			return false
		}
		t.h[0] = h
		t.down(0)
	}
	if len(t.h) == t.k {
		t.thr = t.h[0].Score
	}
	return true
}

// worse reports whether a comes after b in the results.
func (t *topK) worse(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return t.tie(a.Ref, b.Ref) > 0
}

// up restores the heap order from a new leaf i towards the root.
func (t *topK) up(i int) {
	h := t.h
	for i > 0 {
		p := (i - 1) / 2
		if !t.worse(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

// down restores the heap order from a replaced node i towards the leaves.
func (t *topK) down(i int) {
	h := t.h
	n := len(h)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && t.worse(h[r], h[c]) {
			c = r
		}
		if !t.worse(h[c], h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// sorted returns the hits kept, best first, consuming the heap.
func (t *topK) sorted() []Hit {
	h := t.h
	t.h = nil
	slices.SortFunc(h, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return t.tie(a.Ref, b.Ref)
	})
	return h
}
