package lexical

import (
	"iter"
	"strings"
)

// Index is an inverted index of texts keyed by the caller's references:
// for every term (Analyze), the documents holding it and how often, with
// every document's length, the statistics BM25 needs. It is incremental:
// Add and Remove change it in place, and the postings of removed
// documents are dropped once they outnumber the live documents, so dead
// weight stays below the live size.
//
// An Index is one partition of a search (see Search): a caller keeps one
// per group of documents it must keep apart, such as one per writer
// identity, and searches the partitions a query may see.
//
// Add and Remove must not run concurrently with each other or with a
// search; searches only read the index, so any number may run at once.
// The zero Index is not ready; NewIndex is.
type Index[R comparable] struct {
	ids      map[R]int32 // live documents: reference -> document id
	refs     []R         // by document id
	lens     []int32     // length by document id; -1 once removed
	postings map[string]*postings
	length   int            // total length of the live documents
	dead     int            // removed documents still holding postings
	counts   map[string]int // scratch of Add: a text's term counts
}

// postings are the documents holding a term, by increasing id, and how
// often they hold it in all (removed documents included until compacted).
type postings struct {
	list  []posting
	total int
}

// posting says how often a term occurs in a document.
type posting struct {
	id int32
	tf int32
}

// compactAt is the fewest removed documents worth compacting for.
const compactAt = 64

// NewIndex returns an empty Index.
func NewIndex[R comparable]() *Index[R] {
	return &Index[R]{ids: map[R]int32{}, postings: map[string]*postings{}, counts: map[string]int{}}
}

// Add indexes text under ref, and reports whether it did: a reference
// already indexed keeps its text, and Add returns false. Its cost is
// linear in len(text).
func (x *Index[R]) Add(ref R, text string) bool {
	if _, ok := x.ids[ref]; ok {
		return false
	}
	id := int32(len(x.refs))
	n := 0
	for t := range Analyze(text) {
		x.counts[t]++
		n++
	}
	x.ids[ref] = id
	x.refs = append(x.refs, ref)
	x.lens = append(x.lens, int32(n))
	x.length += n
	for t, c := range x.counts {
		p := x.postings[t]
		if p == nil {
			p = &postings{}
			x.postings[strings.Clone(t)] = p
		}
		p.list = append(p.list, posting{id: id, tf: int32(c)})
		p.total += c
	}
	clear(x.counts)
	return true
}

// Remove drops ref's text, if indexed, and reports whether it was. The
// index's statistics stop counting it at once.
func (x *Index[R]) Remove(ref R) bool {
	id, ok := x.ids[ref]
	if !ok {
		return false
	}
	delete(x.ids, ref)
	x.length -= int(x.lens[id])
	x.lens[id] = -1
	var zero R
	x.refs[id] = zero // let the reference go
	x.dead++
	if x.dead >= compactAt && x.dead > len(x.ids) {
		x.compact()
	}
	return true
}

// compact drops the postings of removed documents and renumbers the live
// ones, keeping their order.
func (x *Index[R]) compact() {
	newID, refs, lens := x.live()
	for t, p := range x.postings {
		out := p.list[:0]
		p.total = 0
		for _, q := range p.list {
			if id := newID[q.id]; id >= 0 {
				out = append(out, posting{id: id, tf: q.tf})
				p.total += int(q.tf)
			}
		}
		if len(out) == 0 {
			delete(x.postings, t)
			continue
		}
		p.list = append([]posting(nil), out...) // release the longer array
	}
	for ref, id := range x.ids {
		x.ids[ref] = newID[id]
	}
	x.refs, x.lens, x.dead = refs, lens, 0
}

// live numbers the live documents anew, keeping their order: it returns
// each document's new id by old id (-1 once removed), and the live
// documents' references and lengths by new id.
func (x *Index[R]) live() (newID []int32, refs []R, lens []int32) {
	newID = make([]int32, len(x.refs))
	refs = make([]R, 0, len(x.ids))
	lens = make([]int32, 0, len(x.ids))
	for id, l := range x.lens {
		if l < 0 {
			newID[id] = -1
			continue
		}
		newID[id] = int32(len(refs))
		refs = append(refs, x.refs[id])
		lens = append(lens, l)
	}
	return newID, refs, lens
}

// Has reports whether ref is indexed.
func (x *Index[R]) Has(ref R) bool {
	_, ok := x.ids[ref]
	return ok
}

// Len returns how many references are indexed.
func (x *Index[R]) Len() int { return len(x.ids) }

// Removed returns how many removed documents still hold postings: at most
// the larger of Len and a small constant, since the index drops them past
// that.
func (x *Index[R]) Removed() int { return x.dead }

// Refs yields the indexed references, in no particular order. The caller
// may Remove the reference yielded, but not Add, while ranging.
func (x *Index[R]) Refs() iter.Seq[R] {
	return func(yield func(R) bool) {
		for ref := range x.ids {
			if x.Has(ref) && !yield(ref) {
				return
			}
		}
	}
}

// Stats returns the index's statistics for q: its live documents, their
// total length, and how many of them hold each of q's terms.
func (x *Index[R]) Stats(q *Query) Stats {
	s := Stats{Docs: len(x.ids), Length: x.length, DF: make([]int, len(q.terms))}
	for i, t := range q.terms {
		s.DF[i] = x.df(x.postings[t])
	}
	return s
}

// df returns how many live documents p lists.
func (x *Index[R]) df(p *postings) int {
	if p == nil {
		return 0
	}
	if x.dead == 0 {
		return len(p.list)
	}
	n := 0
	for _, q := range p.list {
		if x.lens[q.id] >= 0 {
			n++
		}
	}
	return n
}

// tf returns how often the live documents p lists hold its term, in all.
func (x *Index[R]) tf(p *postings) int {
	if p == nil {
		return 0
	}
	if x.dead == 0 {
		return p.total
	}
	n := 0
	for _, q := range p.list {
		if x.lens[q.id] >= 0 {
			n += int(q.tf)
		}
	}
	return n
}
