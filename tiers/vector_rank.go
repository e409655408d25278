package tiers

import "slices"

// hit is a scored entry.
type hit struct {
	entry *viewEntry
	score int
}

// before reports whether a ranks before b: higher score, then newer, then
// the greater name (names are unique, so the order is total and both ways
// of searching return the same list).
func (a hit) before(b hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.entry.created != b.entry.created {
		return a.entry.created > b.entry.created
	}
	return a.entry.name > b.entry.name
}

// topK keeps the best k hits offered, best first.
type topK struct {
	k    int
	hits []hit
}

// newTopK returns an empty topK keeping k hits.
func newTopK(k int) topK { return topK{k: k, hits: make([]hit, 0, k+1)} }

// wants reports whether h would be kept: the list is not full, or h ranks
// before its last hit. Callers ask before the costlier checks.
func (t *topK) wants(h hit) bool {
	return len(t.hits) < t.k || h.before(t.hits[t.k-1])
}

// insert puts h in its place, dropping the hit beyond k.
func (t *topK) insert(h hit) {
	i, _ := slices.BinarySearchFunc(t.hits, h, func(a, b hit) int {
		if a.before(b) {
			return -1
		}
		return 1
	})
	t.hits = slices.Insert(t.hits, i, h)
	if len(t.hits) > t.k {
		t.hits = t.hits[:t.k]
	}
}
