package lexical

import "slices"

// Hit is a reference and its score.
type Hit[R any] struct {
	Ref   R
	Score float64
}

// TopK keeps the best k hits offered, best first, under an order the
// caller gives. The order must be total (no two distinct hits tie), so
// that however the hits are offered — in any order, or split among
// several TopKs that are merged — the same k are kept in the same order.
type TopK[R any] struct {
	k      int
	before func(a, b Hit[R]) bool
	hits   []Hit[R]
}

// NewTopK returns an empty TopK keeping k hits (a k below 1 keeps one),
// where before(a, b) reports whether a ranks before b.
func NewTopK[R any](k int, before func(a, b Hit[R]) bool) *TopK[R] {
	k = max(k, 1)
	return &TopK[R]{k: k, before: before, hits: make([]Hit[R], 0, k+1)}
}

// Wants reports whether h would be kept: the list is not full, or h ranks
// before its last hit. Callers ask before checks that cost more (a scope
// filter, a file's existence), and Insert only what they pass.
func (t *TopK[R]) Wants(h Hit[R]) bool {
	return len(t.hits) < t.k || t.before(h, t.hits[t.k-1])
}

// Insert puts h in its place, dropping the hit beyond k.
func (t *TopK[R]) Insert(h Hit[R]) {
	i, _ := slices.BinarySearchFunc(t.hits, h, func(a, b Hit[R]) int {
		if t.before(a, b) {
			return -1
		}
		return 1
	})
	t.hits = slices.Insert(t.hits, i, h)
	if len(t.hits) > t.k {
		t.hits = t.hits[:t.k]
	}
}

// Merge offers o's hits to t.
func (t *TopK[R]) Merge(o *TopK[R]) {
	for _, h := range o.hits {
		if t.Wants(h) {
			t.Insert(h)
		}
	}
}

// Hits returns the hits kept, best first. The slice is t's own.
func (t *TopK[R]) Hits() []Hit[R] { return t.hits }

// ByScore returns the order of hits by score, highest first, and hits of
// equal score by tie, which must order distinct references totally (for
// the library's records: newest first, then by id), as TopK requires.
func ByScore[R any](tie func(a, b R) bool) func(a, b Hit[R]) bool {
	return func(a, b Hit[R]) bool {
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return tie(a.Ref, b.Ref)
	}
}
