package lexical

import "strings"

// Corpus is the term dictionary that a set of partitions (Index) share:
// for every term, the partitions holding it, each with its postings of
// the term. A search over many partitions of one corpus looks each of
// its terms up once, and reads the partitions holding it off one list,
// instead of looking the term up in every partition: over a reader's
// thousand partitions (a session each), those lookups were most of a
// search's time. A search over a few partitions of a large corpus looks
// the term up in each partition still, whichever reads less.
//
// The partitions of a corpus share its state: Add and Remove on any of
// them, and Attach, must not run concurrently with each other or with a
// search of any of them. Searches only read, so any number may run at
// once. The zero Corpus is not ready; NewCorpus is.
type Corpus[R comparable] struct {
	terms map[string]*termList[R]
	// Each partition holding documents has a number, from 1 to
	// len(byNum) (last), for a search to mark its partitions by
	// (scratch.mark) instead of hashing them; a partition emptied gives
	// its number back (free), for the next to take, so numbers stay
	// below the most partitions ever holding documents at once. byNum
	// holds the partitions by number, less one; nil where the number is
	// free.
	byNum []*Index[R]
	free  []int32
	// packed is how many postings c held when it last packed (pack.go);
	// added and dropped, how many its partitions added and dropped since.
	packed, added, dropped int
}

// termList is one term of a corpus and the partitions holding it, in no
// particular order.
type termList[R comparable] struct {
	text  string
	parts []held[R]
}

// held is one partition's postings of a term, kept in the term's list so
// that a search reads a term's partitions off one array.
type held[R comparable] struct {
	x *Index[R]
	postings
}

// NewCorpus returns an empty Corpus.
func NewCorpus[R comparable]() *Corpus[R] {
	return &Corpus[R]{terms: map[string]*termList[R]{}}
}

// Terms returns how many distinct terms the corpus's partitions hold.
func (c *Corpus[R]) Terms() int { return len(c.terms) }

// number gives x, taking its first document, a number.
func (c *Corpus[R]) number(x *Index[R]) {
	if n := len(c.free); n > 0 {
		x.num = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		c.byNum = append(c.byNum, nil)
		x.num = c.last()
	}
	c.byNum[x.num-1] = x
}

// last is the highest number c has given.
func (c *Corpus[R]) last() int32 { return int32(len(c.byNum)) }

// release takes x's number back, once x holds no documents.
func (c *Corpus[R]) release(x *Index[R]) {
	c.byNum[x.num-1] = nil
	c.free = append(c.free, x.num)
	x.num = 0
}

// NewIndex returns an empty partition of c.
func (c *Corpus[R]) NewIndex() *Index[R] {
	x := newIndex[R](c, nil)
	x.ids = map[R]int32{}
	return x
}

// NewSlottedIndex returns an empty slotted partition of c (see the
// function NewSlottedIndex).
func (c *Corpus[R]) NewSlottedIndex(slot func(R) *int32) *Index[R] {
	return newIndex(c, slot)
}

func newIndex[R comparable](c *Corpus[R], slot func(R) *int32) *Index[R] {
	return &Index[R]{corpus: c, slot: slot, at: map[*termList[R]]int32{}, counts: map[string]int{}}
}

// postingsOf returns x's postings of term t for appending, adding t to
// the corpus and x to t's partitions when new.
func (x *Index[R]) postingsOf(t string) *postings {
	c := x.corpus
	tm := c.terms[t]
	if tm == nil {
		tm = &termList[R]{text: strings.Clone(t)}
		c.terms[tm.text] = tm
	}
	if p := x.in(tm); p != nil {
		return p
	}
	j := int32(len(tm.parts))
	tm.parts = append(tm.parts, held[R]{x: x})
	x.at[tm] = j
	return &tm.parts[j].postings
}

// find returns x's postings of term t, nil when it holds none.
func (x *Index[R]) find(t string) *postings {
	tm := x.corpus.terms[t]
	if tm == nil {
		return nil
	}
	return x.in(tm)
}

// in returns x's postings of tm, nil when it holds none. The term's last
// partition is found without a lookup: the one partition of a corpus of
// its own, or the one being filled.
func (x *Index[R]) in(tm *termList[R]) *postings {
	if n := len(tm.parts); n > 0 && tm.parts[n-1].x == x {
		return &tm.parts[n-1].postings
	}
	if j, ok := x.at[tm]; ok {
		return &tm.parts[j].postings
	}
	return nil
}

// drop takes x out of tm's partitions, and tm out of the corpus once no
// partition holds it. Another partition's entry takes x's place in the
// list.
func (x *Index[R]) drop(tm *termList[R]) {
	j := x.at[tm]
	delete(x.at, tm)
	last := int32(len(tm.parts) - 1)
	if j != last {
		tm.parts[j] = tm.parts[last]
		tm.parts[j].x.at[tm] = j
	}
	tm.parts[last] = held[R]{}
	tm.parts = tm.parts[:last]
	switch {
	case last == 0:
		delete(x.corpus.terms, tm.text)
	case cap(tm.parts) >= 64 && int(last) < cap(tm.parts)/4:
		tm.parts = append([]held[R](nil), tm.parts...) // release the longer array
	}
}
