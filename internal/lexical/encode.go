package lexical

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/hugepages"
	"github.com/agentmem/memory/internal/varint"
)

// An Index's encoding, as Encode writes it and DecodeIndex reads it: the
// magic "LXI", a format byte, then unsigned varints:
//
//	docs                 the live documents, numbered 0 to docs-1
//	length × docs        each document's length in terms
//	terms                the distinct terms
//	postings             how many (term, document) pairs, in all
//	per term, in byte order:
//	  len, bytes         the term
//	  n                  how many documents hold it, 1 to docs
//	  (gap, tf) × n      the documents by increasing number (the first
//	                     gap is its number, every later one the distance
//	                     from the previous number less one) and how
//	                     often each holds the term
//
// The encoding holds no references: Encode returns them in document
// order, and DecodeIndex takes them back in that order. Nor does it hold
// tags: a decoded index's documents are tagged 0 until SetTags.
const (
	indexMagic  = "LXI"
	indexFormat = 1
	// maxTermBytes bounds a decoded term: a word of MaxWordBytes bytes
	// folds to at most three times as many (a rune grows from 2 to at
	// most 3 bytes under folding, ASCII not at all), and a stem is
	// shorter than its word.
	maxTermBytes = 3 * MaxWordBytes
)

// Encode appends x's encoding to dst and returns it, with the references
// of its live documents in the order the encoding numbers them (the
// order they were added in). Removed documents are left out. Terms are
// written in byte order, so equal indexes encode alike. It only reads x.
func (x *Index[R]) Encode(dst []byte) ([]byte, []R) {
	newID, refs, lens, _ := x.live()
	dst = append(dst, indexMagic...)
	dst = append(dst, indexFormat)
	dst = binary.AppendUvarint(dst, uint64(len(refs)))
	for _, l := range lens {
		dst = binary.AppendUvarint(dst, uint64(l))
	}
	terms := make([]*termList[R], 0, len(x.at))
	total := 0
	for tm, j := range x.at {
		if df := x.df(&tm.parts[j].postings); df > 0 {
			terms = append(terms, tm)
			total += df
		}
	}
	slices.SortFunc(terms, func(a, b *termList[R]) int { return strings.Compare(a.text, b.text) })
	dst = binary.AppendUvarint(dst, uint64(len(terms)))
	dst = binary.AppendUvarint(dst, uint64(total))
	for _, tm := range terms {
		p := x.in(tm)
		dst = binary.AppendUvarint(dst, uint64(len(tm.text)))
		dst = append(dst, tm.text...)
		dst = binary.AppendUvarint(dst, uint64(x.df(p)))
		prev := int32(-1)
		for _, e := range p.list {
			id := newID[e.id]
			if id < 0 {
				continue
			}
			dst = binary.AppendUvarint(dst, uint64(id-prev-1))
			dst = binary.AppendUvarint(dst, uint64(e.tf))
			prev = id
		}
	}
	return dst, refs
}

// DecodeIndex returns the Index data encodes (Encode), in a Corpus of its
// own, with refs[i] as the reference of its document i; the Index keeps
// refs as its own. The
// terms are taken as they were analysed when the index was encoded: a
// caller that keeps encodings must tag them with AnalyzerVersion and
// decode only those of the current version. It refuses, with
// memory.ErrInvalidArgument, data that Encode could not have written:
// another magic or format, a count beyond what the remaining bytes can
// hold, a document number out of order or range, a term empty, longer
// than any term or out of byte order (so repeated), a document whose term counts do not add up to
// its length, bytes left over, or refs not one distinct reference per
// document. Whatever the input, it allocates memory in proportion to
// len(data) and len(refs), and never panics.
func DecodeIndex[R comparable](data []byte, refs []R) (*Index[R], error) {
	dec, err := DecodeIndexFrom(varint.Reader{B: data}, refs, nil)
	if err != nil {
		return nil, err
	}
	return NewCorpus[R]().Attach(dec), nil
}

// Decoded is an index decoded (DecodeIndexFrom) and not yet in a corpus:
// Corpus.Attach makes it a partition of one.
type Decoded[R comparable] struct {
	x     *Index[R] // without a corpus
	terms []decodedTerm
}

// decodedTerm is a term of a Decoded and its postings.
type decodedTerm struct {
	text string
	postings
}

// DecodeIndexFrom is DecodeIndex reading the encoding off d, which must
// hold it and nothing more (a Reader of a varint.Stream decodes as the
// bytes arrive), and leaving the index out of any corpus, so that
// indexes of one corpus can be decoded at once, each attached under the
// caller's lock. d's own Fail is not used. With slot set, the index is
// slotted (NewSlottedIndex), each reference's id written at slot(ref).
func DecodeIndexFrom[R comparable](d varint.Reader, refs []R, slot func(R) *int32) (*Decoded[R], error) {
	d.Fail = func(format string, args ...any) error {
		return memory.Errorf(memory.ErrInvalidArgument, "lexical: decode index: "+format, args...)
	}
	head, err := d.Next(min(len(indexMagic)+1, d.Left()), "the header")
	if err != nil {
		return nil, err
	}
	if len(head) < len(indexMagic)+1 || string(head[:len(indexMagic)]) != indexMagic {
		return nil, d.Fail("not an encoded index")
	}
	if head[len(indexMagic)] != indexFormat {
		return nil, d.Fail("index format %d, this code reads %d", head[len(indexMagic)], indexFormat)
	}
	docs, err := d.Count(1, "documents")
	if err != nil {
		return nil, err
	}
	if docs != len(refs) {
		return nil, d.Fail("%d documents, but %d references", docs, len(refs))
	}
	x := &Index[R]{slot: slot, docs: docs, refs: refs, lens: make([]int32, docs), tags: make([]uint8, docs), counts: map[string]int{}}
	if slot == nil {
		x.ids = make(map[R]int32, docs)
	}
	var zero R
	for id := range docs {
		l, err := d.Uvarint("a document length")
		if err != nil {
			return nil, err
		}
		if l > math.MaxInt32 {
			return nil, d.Fail("document %d has length %d", id, l)
		}
		x.lens[id] = int32(l)
		x.length += int(l)
		ref := refs[id]
		if slot == nil {
			x.ids[ref] = int32(id)
			if len(x.ids) != id+1 {
				return nil, d.Fail("a reference is given for two documents")
			}
			continue
		}
		if ref == zero {
			return nil, d.Fail("document %d has no reference", id)
		}
		// A slot holding an earlier document of this reference is one
		// reference for two documents; any other value is stale.
		s := slot(ref)
		if v := *s; v >= 0 && int(v) < id && refs[v] == ref {
			return nil, d.Fail("a reference is given for two documents")
		}
		*s = int32(id)
	}
	// A term takes at least 4 bytes: its length, a byte, a count and one
	// posting of 2 bytes at the least, so 5.
	terms, err := d.Count(5, "terms")
	if err != nil {
		return nil, err
	}
	// Every posting takes at least 2 bytes. They share one array, each
	// term's list capped at its end, so that a later Add reallocates it
	// rather than overwrite the next term's.
	total, err := d.Count(2, "postings")
	if err != nil {
		return nil, err
	}
	all := hugepages.Make[posting](total, total)
	lists := make([]decodedTerm, terms)
	sums := make([]int64, docs) // each document's term counts, added up
	last := ""                  // the previous term
	for ti := range terms {
		n, err := d.Count(1, "term bytes")
		if err != nil {
			return nil, err
		}
		if n == 0 || n > maxTermBytes {
			return nil, d.Fail("a term of %d bytes", n)
		}
		b, err := d.Next(n, "a term")
		if err != nil {
			return nil, err
		}
		t := string(b)
		if t <= last && ti > 0 {
			return nil, d.Fail("term %q after %q: terms out of order", t, last)
		}
		last = t
		df, err := d.Count(2, "postings")
		if err != nil {
			return nil, err
		}
		if df == 0 || df > docs || df > len(all) {
			return nil, d.Fail("term %q is held by %d of %d documents, beyond the postings counted", t, df, docs)
		}
		p := &lists[ti]
		p.text = t
		p.list, all = all[:df:df], all[df:]
		id := int64(-1)
		for i := range p.list {
			gap, err := d.Uvarint("a posting")
			if err != nil {
				return nil, err
			}
			tf, err := d.Uvarint("a term frequency")
			if err != nil {
				return nil, err
			}
			if gap >= uint64(docs) || id+1+int64(gap) >= int64(docs) {
				return nil, d.Fail("term %q lists a document beyond the %d", t, docs)
			}
			id += 1 + int64(gap)
			if tf == 0 || tf > uint64(x.lens[id]) {
				return nil, d.Fail("term %q occurs %d times in document %d of length %d", t, tf, id, x.lens[id])
			}
			sums[id] += int64(tf)
			p.list[i] = posting{id: int32(id), tf: int32(tf)}
			p.total += int(tf)
		}
	}
	if len(all) != 0 {
		return nil, d.Fail("%d postings fewer than counted", len(all))
	}
	if left := d.Left(); left != 0 {
		return nil, d.Fail("%d bytes after the index", left)
	}
	for id, s := range sums {
		if s != int64(x.lens[id]) {
			return nil, d.Fail("document %d has length %d, but its terms occur %d times", id, x.lens[id], s)
		}
	}
	return &Decoded[R]{x: x, terms: lists}, nil
}

// Attach returns dec as a partition of c. dec must not be attached again.
func (c *Corpus[R]) Attach(dec *Decoded[R]) *Index[R] {
	x := dec.x
	x.corpus = c
	if x.docs > 0 {
		c.number(x)
	}
	x.at = make(map[*termList[R]]int32, len(dec.terms))
	n := 0 // postings attached
	for i := range dec.terms {
		dt := &dec.terms[i]
		tm := c.terms[dt.text]
		if tm == nil {
			tm = &termList[R]{text: dt.text}
			c.terms[tm.text] = tm
		}
		x.at[tm] = int32(len(tm.parts))
		tm.parts = append(tm.parts, held[R]{x: x, postings: dt.postings})
		n += len(dt.postings.list)
	}
	dec.x, dec.terms = nil, nil
	c.grew(n)
	return x
}
