package lexical

import "slices"

// Hit is a reference and its score.
type Hit[R any] struct {
	Ref   R
	Score float64
	// Group is, in the hits of SearchGroups, the score of the hit's
	// partition as one document; 0 elsewhere.
	Group float64
}

// TopK keeps the best k hits offered, best first, under an order the
// caller gives. The order must be total (no two distinct hits tie), so
// that however the hits are offered — in any order, or split among
// several TopKs that are merged — the same k are kept in the same order.
//
// The hits are a binary heap with the worst kept at its root, so that an
// offer costs one comparison when it is refused and O(log k) when it is
// kept, never a shift of the list: a recall asks for hundreds.
type TopK[R any] struct {
	k      int
	before func(a, b Hit[R]) bool
	// tie, set by NewTopKByScore, is the order of hits of equal score:
	// before is then ByScore(tie), and the comparisons (ranks) do its
	// work inline, calling tie only on equal scores.
	tie    func(a, b R) bool
	hits   []Hit[R]
	sorted bool // hits are best first, as Hits left them, not a heap
}

// NewTopK returns an empty TopK keeping k hits (a k below 1 keeps one),
// where before(a, b) reports whether a ranks before b.
func NewTopK[R any](k int, before func(a, b Hit[R]) bool) *TopK[R] {
	k = max(k, 1)
	return &TopK[R]{k: k, before: before, hits: make([]Hit[R], 0, min(k, 1024))}
}

// NewTopKByScore is NewTopK(k, ByScore(tie)), faster: a search offers it
// tens of thousands of hits, most of them refused on their score alone,
// which it compares without a call through before, and Refuses lets the
// caller refuse them before it looks up their references.
func NewTopKByScore[R any](k int, tie func(a, b R) bool) *TopK[R] {
	t := NewTopK(k, ByScore(tie))
	t.tie = tie
	return t
}

// ranks reports whether a ranks before b.
func (t *TopK[R]) ranks(a, b Hit[R]) bool {
	if t.tie == nil {
		return t.before(a, b)
	}
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return t.tie(a.Ref, b.Ref)
}

// Refuses reports whether every hit of the given score would be refused,
// whatever its reference: t is full and ordered by score
// (NewTopKByScore), and its worst hit scores higher. A TopK of another
// order refuses nothing on its score alone.
func (t *TopK[R]) Refuses(score float64) bool {
	if t.tie == nil || len(t.hits) < t.k {
		return false
	}
	t.heap()
	return score < t.hits[0].Score
}

// Wants reports whether h would be kept: the list is not full, or h ranks
// before its worst hit. Callers ask before checks that cost more (a scope
// filter, a file's existence), and Insert only what they pass.
func (t *TopK[R]) Wants(h Hit[R]) bool {
	if len(t.hits) < t.k {
		return true
	}
	t.heap()
	return t.ranks(h, t.hits[0])
}

// Insert puts h in its place, dropping the worst hit beyond k.
func (t *TopK[R]) Insert(h Hit[R]) {
	t.heap()
	if len(t.hits) < t.k {
		t.hits = append(t.hits, h)
		t.up(len(t.hits) - 1)
		return
	}
	if !t.ranks(h, t.hits[0]) {
		return
	}
	t.hits[0] = h
	t.down(0)
}

// Merge offers o's hits to t.
func (t *TopK[R]) Merge(o *TopK[R]) {
	for _, h := range o.hits {
		if t.Wants(h) {
			t.Insert(h)
		}
	}
}

// Hits returns the hits kept, best first. The slice is t's own, valid
// until the next Insert.
func (t *TopK[R]) Hits() []Hit[R] {
	if !t.sorted {
		slices.SortFunc(t.hits, func(a, b Hit[R]) int {
			if t.before(a, b) {
				return -1
			}
			return 1
		})
		t.sorted = true
	}
	return t.hits
}

// heap makes the hits a heap again after Hits sorted them: best first
// reversed is worst first, which is a heap.
func (t *TopK[R]) heap() {
	if t.sorted {
		slices.Reverse(t.hits)
		t.sorted = false
	}
}

// worse reports whether hit i ranks after hit j: the heap's order.
func (t *TopK[R]) worse(i, j int) bool { return t.ranks(t.hits[j], t.hits[i]) }

func (t *TopK[R]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.worse(i, p) {
			return
		}
		t.hits[i], t.hits[p] = t.hits[p], t.hits[i]
		i = p
	}
}

func (t *TopK[R]) down(i int) {
	n := len(t.hits)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && t.worse(r, c) {
			c = r
		}
		if !t.worse(c, i) {
			return
		}
		t.hits[i], t.hits[c] = t.hits[c], t.hits[i]
		i = c
	}
}

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
