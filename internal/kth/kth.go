// Package kth keeps the k greatest of a stream of values in a min-heap,
// whose root is then the k-th greatest: the bar a search's candidate must
// reach to be among its best k, kept with comparisons of plain values
// only (the lexical engine's, the vector index's and recall's).
package kth

import "cmp"

// Push offers v to h, a min-heap of the k greatest values offered so far
// (at most k of them), and returns it. Once len(h) == k, h[0] is the k-th
// greatest value offered. A value not greater than h[0] leaves a full
// heap as it is. k must be at least 1. NaN must not be offered.
func Push[T cmp.Ordered](h []T, k int, v T) []T {
	if len(h) < k {
		h = append(h, v)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !(h[i] < h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
		return h
	}
	if !(v > h[0]) {
		return h
	}
	h[0] = v
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(h) {
			return h
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if !(h[c] < h[i]) {
			return h
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
