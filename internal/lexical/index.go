package lexical

import "iter"

// Index is an inverted index of texts keyed by the caller's references:
// for every word, the references whose text holds it and how often. It
// scores a query by reading only its words' postings. An Index is not
// safe for concurrent use; its zero value is not ready, NewIndex is.
type Index[R comparable] struct {
	docs     map[R]*doc[R] // live documents by reference
	list     []*doc[R]     // every document in postings, by id
	postings map[string][]posting[R]
	removed  int            // removed documents still in postings
	scores   []int          // scratch: score by document id, kept zeroed
	touched  []int          // scratch: ids with a score
	counts   map[string]int // scratch: word counts of one text
}

// doc is one indexed text.
type doc[R comparable] struct {
	id      int // index in Index.list
	ref     R
	removed bool
}

// posting says how often a word occurs in a document.
type posting[R comparable] struct {
	doc   *doc[R]
	count int
}

// NewIndex returns an empty Index.
func NewIndex[R comparable]() *Index[R] {
	return &Index[R]{docs: map[R]*doc[R]{}, postings: map[string][]posting[R]{}, counts: map[string]int{}}
}

// Add indexes text under ref. A reference already indexed keeps its text.
func (x *Index[R]) Add(ref R, text string) {
	if x.docs[ref] != nil {
		return
	}
	d := &doc[R]{id: len(x.list), ref: ref}
	x.list = append(x.list, d)
	x.docs[ref] = d
	for w := range Words(text) {
		x.counts[w]++
	}
	for w, n := range x.counts {
		x.postings[w] = append(x.postings[w], posting[R]{doc: d, count: n})
	}
	clear(x.counts)
}

// Remove drops ref's text, if indexed. Its postings stay, marked, until
// the caller replaces the index (see Removed).
func (x *Index[R]) Remove(ref R) {
	if d := x.docs[ref]; d != nil {
		d.removed = true
		delete(x.docs, ref)
		x.removed++
	}
}

// Has reports whether ref is indexed.
func (x *Index[R]) Has(ref R) bool { return x.docs[ref] != nil }

// Len returns how many references are indexed.
func (x *Index[R]) Len() int { return len(x.docs) }

// Removed returns how many removed references still hold postings: the
// index's dead weight, which a caller weighs against Len to decide when
// to build it anew.
func (x *Index[R]) Removed() int { return x.removed }

// Refs yields the indexed references, in no particular order. The caller
// may Remove the reference yielded, but not Add, while ranging.
func (x *Index[R]) Refs() iter.Seq[R] {
	return func(yield func(R) bool) {
		for ref := range x.docs {
			if !yield(ref) {
				return
			}
		}
	}
}

// Score sums the postings of q's words per reference and offers every
// reference with a score to top, asking keep only of the hits top wants:
// a scope filter applied before the best k are chosen, never after. The
// scores equal q.Count of each reference's text.
func (x *Index[R]) Score(q *Query, top *TopK[R], keep func(R) bool) {
	if len(x.scores) < len(x.list) {
		x.scores = make([]int, len(x.list))
	}
	touched := x.touched[:0]
	for _, t := range q.terms {
		for _, p := range x.postings[t] {
			if p.doc.removed {
				continue
			}
			if x.scores[p.doc.id] == 0 {
				touched = append(touched, p.doc.id)
			}
			x.scores[p.doc.id] += p.count
		}
	}
	for _, id := range touched {
		h := Hit[R]{Ref: x.list[id].ref, Score: x.scores[id]}
		x.scores[id] = 0
		if top.Wants(h) && keep(h.Ref) {
			top.Insert(h)
		}
	}
	x.touched = touched
}
