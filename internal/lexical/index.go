package lexical

import "iter"

// Index is an inverted index of texts keyed by the caller's references:
// for every term (Analyze), the documents holding it and how often, with
// every document's length, the statistics BM25 needs. It is incremental:
// Add and Remove change it in place, and the postings of removed
// documents are dropped once they outnumber the live documents, so dead
// weight stays below the live size.
//
// An Index is one partition of a search (see Search): a caller keeps one
// per group of documents it must keep apart, such as one per writer
// identity, and searches the partitions a query may see. The partitions
// of one caller share a Corpus, their term dictionary, so that a search
// over many of them looks each term up once.
//
// Add and Remove must not run concurrently with each other or with a
// search, on this partition or any other of its corpus (see Corpus);
// searches only read, so any number may run at once. The zero Index is
// not ready; Corpus.NewIndex, NewIndex and their slotted forms are.
type Index[R comparable] struct {
	// ids maps each live document's reference to its document id, unless
	// slot is set: then each reference keeps its own (NewSlottedIndex).
	ids  map[R]int32
	slot func(R) *int32
	docs int     // live documents
	refs []R     // by document id; the zero R once removed
	lens []int32 // length by document id; -1 once removed
	tags []uint8 // tag by document id (AddTagged)
	// corpus holds the postings; at is where in each term's partitions
	// (termList.parts) x's postings of the term are.
	corpus *Corpus[R]
	at     map[*termList[R]]int32
	num    int32          // x's number in its corpus while it holds documents; 0 while empty
	length int            // total length of the live documents
	dead   int            // removed documents still holding postings
	counts map[string]int // scratch of Add: a text's term counts
}

// postings are the documents holding a term, by increasing id, and how
// often they hold it in all (removed documents included until compacted).
type postings struct {
	list  []posting
	total int
}

// add appends a posting of document id, holding the term tf times.
func (p *postings) add(id, tf int32) {
	p.list = append(p.list, posting{id: id, tf: tf})
	p.total += int(tf)
}

// posting says how often a term occurs in a document.
type posting struct {
	id int32
	tf int32
}

// compactAt is the fewest removed documents worth compacting for.
const compactAt = 64

// NewIndex returns an empty Index in a Corpus of its own.
func NewIndex[R comparable]() *Index[R] { return NewCorpus[R]().NewIndex() }

// NewSlottedIndex returns an empty Index whose references each keep their
// own document id, at slot(ref), instead of the index mapping them: for
// references that are pointers to the caller's records, it saves a map
// entry per document, and the building of that map when an index is
// decoded. A reference must be in one slotted index at a time; the index
// writes its slot while the reference is indexed, and reads it only
// together with its own record of the reference, so a stale slot is never
// taken for a document. The zero R must not be indexed. The index is in
// a Corpus of its own; Corpus.NewSlottedIndex makes one in a shared one.
func NewSlottedIndex[R comparable](slot func(R) *int32) *Index[R] {
	return NewCorpus[R]().NewSlottedIndex(slot)
}

// docID returns the document id of ref, if indexed.
func (x *Index[R]) docID(ref R) (int32, bool) {
	if x.slot == nil {
		id, ok := x.ids[ref]
		return id, ok
	}
	var zero R
	if ref == zero {
		return 0, false
	}
	id := *x.slot(ref)
	if id >= 0 && int(id) < len(x.refs) && x.refs[id] == ref {
		return id, true
	}
	return 0, false
}

// setID records id as ref's document id.
func (x *Index[R]) setID(ref R, id int32) {
	if x.slot == nil {
		x.ids[ref] = id
		return
	}
	*x.slot(ref) = id
}

// Add indexes text under ref, and reports whether it did: a reference
// already indexed keeps its text, and Add returns false. Its cost is
// linear in len(text). The document's tag is 0.
func (x *Index[R]) Add(ref R, text string) bool { return x.AddTagged(ref, text, 0) }

// AddTagged is Add giving the document a tag, below 64, for searches to
// admit by (Query.Tags) without asking keep: a caller that tags each
// record with its kind filters kinds without reading its records.
func (x *Index[R]) AddTagged(ref R, text string, tag uint8) bool {
	if _, ok := x.docID(ref); ok {
		return false
	}
	id := int32(len(x.refs))
	n := 0
	for t := range Analyze(text) {
		x.counts[t]++
		n++
	}
	x.refs = append(x.refs, ref)
	x.setID(ref, id)
	if x.docs == 0 {
		x.corpus.number(x)
	}
	x.docs++
	x.lens = append(x.lens, int32(n))
	x.tags = append(x.tags, tag&63)
	x.length += n
	for t, c := range x.counts {
		x.postingsOf(t).add(id, int32(c))
	}
	x.corpus.grew(len(x.counts))
	clear(x.counts)
	return true
}

// Remove drops ref's text, if indexed, and reports whether it was. The
// index's statistics stop counting it at once. An index left empty holds
// no postings: its corpus lists it under no term.
func (x *Index[R]) Remove(ref R) bool {
	id, ok := x.docID(ref)
	if !ok {
		return false
	}
	if x.slot == nil {
		delete(x.ids, ref)
	}
	x.docs--
	x.length -= int(x.lens[id])
	x.lens[id] = -1
	var zero R
	x.refs[id] = zero // let the reference go
	x.dead++
	if x.docs == 0 || x.dead >= compactAt && x.dead > x.docs {
		x.compact()
	}
	if x.docs == 0 {
		x.corpus.release(x)
	}
	return true
}

// compact drops the postings of removed documents and renumbers the live
// ones, keeping their order.
func (x *Index[R]) compact() {
	newID, refs, lens, tags := x.live()
	dropped := 0
	for tm, j := range x.at {
		p := &tm.parts[j].postings
		dropped += len(p.list)
		kept := p.list[:0]
		for _, q := range p.list {
			if id := newID[q.id]; id >= 0 {
				kept = append(kept, posting{id: id, tf: q.tf})
			}
		}
		if len(kept) == 0 {
			x.drop(tm) // moves another partition's postings of tm, not x's others
			continue
		}
		dropped -= len(kept)
		*p = postings{list: make([]posting, 0, len(kept))} // releasing the longer array
		for _, q := range kept {
			p.add(q.id, q.tf)
		}
	}
	for id, ref := range refs {
		x.setID(ref, int32(id))
	}
	x.refs, x.lens, x.tags, x.dead = refs, lens, tags, 0
	x.corpus.shrank(dropped)
}

// live numbers the live documents anew, keeping their order: it returns
// each document's new id by old id (-1 once removed), and the live
// documents' references, lengths and tags by new id.
func (x *Index[R]) live() (newID []int32, refs []R, lens []int32, tags []uint8) {
	newID = make([]int32, len(x.refs))
	refs = make([]R, 0, x.docs)
	lens = make([]int32, 0, x.docs)
	tags = make([]uint8, 0, x.docs)
	for id, l := range x.lens {
		if l < 0 {
			newID[id] = -1
			continue
		}
		newID[id] = int32(len(refs))
		refs = append(refs, x.refs[id])
		lens = append(lens, l)
		tags = append(tags, x.tags[id])
	}
	return newID, refs, lens, tags
}

// SetTags sets the tag (AddTagged) of every indexed document to tag(ref),
// below 64: for an index decoded without them (Encode keeps no tags).
func (x *Index[R]) SetTags(tag func(R) uint8) {
	for id, ref := range x.refs {
		if x.lens[id] >= 0 {
			x.tags[id] = tag(ref) & 63
		}
	}
}

// Has reports whether ref is indexed.
func (x *Index[R]) Has(ref R) bool {
	_, ok := x.docID(ref)
	return ok
}

// Len returns how many references are indexed.
func (x *Index[R]) Len() int { return x.docs }

// Removed returns how many removed documents still hold postings: at most
// the larger of Len and a small constant, since the index drops them past
// that.
func (x *Index[R]) Removed() int { return x.dead }

// Refs yields the indexed references, in the order they were added. The
// caller may Remove the reference yielded, but not Add, while ranging.
func (x *Index[R]) Refs() iter.Seq[R] {
	return func(yield func(R) bool) {
		// A Remove may compact, which replaces x.refs and x.lens: the
		// references left in these arrays are still found, by Has.
		refs, lens := x.refs, x.lens
		for id, ref := range refs {
			if lens[id] >= 0 && x.Has(ref) && !yield(ref) {
				return
			}
		}
	}
}

// Stats returns the index's statistics for q: its live documents, their
// total length, and how many of them hold each of q's terms.
func (x *Index[R]) Stats(q *Query) Stats {
	s := Stats{Docs: x.docs, Length: x.length, DF: make([]int, len(q.terms))}
	for i, t := range q.terms {
		s.DF[i] = x.df(x.find(t))
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
