package lexical

import (
	"sync"

	"github.com/agentmem/memory/internal/kth"
)

// Search ranks the live documents of the partitions parts for q by BM25
// under p (see Scorer), offering to top every document holding a term of
// q, best first as top orders them, and returns top's hits.
//
// The statistics (documents, total length, document frequency of each
// term) are those of exactly the partitions searched, added up: the
// result is that of one Index holding the documents of parts, and nothing
// outside parts moves a score. That is what keeps a search within its
// scope: a caller that keeps one partition per writer and searches only
// the partitions a reader may see gives that reader scores that other
// tenants' or users' texts cannot influence, so scores are no side
// channel. A partition listed twice is searched once, a nil one not at
// all; a reference should be in one partition only.
//
// keep then filters the candidates: a document keep refuses is never
// offered to top, so the hits are the best of the documents keep accepts
// (never fewer than top's k when that many qualify), but it still counts
// in the statistics, as every live document of the partitions does.
// Filters that only the reader applies (kinds, ids, expiry) go in keep;
// what must not be seen at all must be kept out of parts. keep is asked
// only of documents that may be among the best: those top would keep
// (TopK.Wants), or for a top ordered by score (NewTopKByScore), those
// scoring at least the k-th best of the documents keep accepted before
// them; so an expensive filter runs rarely. A nil keep accepts every document.
//
// Search only reads the partitions. p must be valid (Params.Validate),
// else Search returns its error and offers nothing.
func Search[R comparable](q *Query, parts []*Index[R], p Params, top *TopK[R], keep func(R) bool) ([]Hit[R], error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s := getScratch()
	defer s.put()
	parts, c := distinct(parts, s)
	if len(q.terms) == 0 || len(parts) == 0 {
		return top.Hits(), nil
	}
	return search(q, parts, lookUp(q, parts, c, s), p, top, keep, nil, s), nil
}

// lookUp returns the postings of q's terms in each of parts, distinct
// partitions of corpus c, or of several when c is nil, marked in s (see
// distinct): those of term i in parts[k] at k*len(q.terms)+i, nil where
// it has none, in s's memory. A search looks each up once, and its
// passes share them.
//
// Over partitions of one corpus, each term is looked up once in the
// corpus, and its partitions are read off its list, when the list is not
// much longer than parts; else, and over partitions of several corpora,
// the term is looked up in each partition.
func lookUp[R comparable](q *Query, parts []*Index[R], c *Corpus[R], s *scratch) []*postings {
	nt := len(q.terms)
	s.lists = grow(s.lists, len(parts)*nt)
	lists := s.lists
	if c == nil || len(parts) == 1 {
		for k, x := range parts {
			for i, t := range q.terms {
				lists[k*nt+i] = x.find(t)
			}
		}
		return lists
	}
	for i, t := range q.terms {
		tm := c.terms[t]
		if tm == nil {
			continue
		}
		if len(tm.parts) > readList*len(parts) {
			for k, x := range parts {
				lists[k*nt+i] = x.in(tm)
			}
			continue
		}
		for j := range tm.parts {
			h := &tm.parts[j]
			if k, ok := s.placeOf(h.x.num); ok {
				lists[int(k)*nt+i] = &h.postings
			}
		}
	}
	return lists
}

// readList is how many times more partitions than a search's a term's
// list may hold and still be read whole: reading an entry off the list
// and finding it in a small map costs a fraction of a lookup in a
// partition's own map, which misses the cache. 4 is a judgement, not a
// measurement: the benchmarks search all of a corpus's partitions or one.
const readList = 4

// search is Search over distinct parts whose postings of q's terms lookUp
// found (lists), with s's memory; q has terms and p is valid. groups,
// when not nil, are the partitions' scores as one document each, by
// place in parts, for the hits to carry (Hit.Group).
func search[R comparable](q *Query, parts []*Index[R], lists []*postings, p Params, top *TopK[R], keep func(R) bool, groups []float64, s *scratch) []Hit[R] {
	nt := len(q.terms)
	st := Stats{DF: make([]int, nt)}
	for k, x := range parts {
		st.Docs += x.docs
		st.Length += x.length
		for i, pl := range lists[k*nt : (k+1)*nt] {
			st.DF[i] += x.df(pl)
		}
	}
	sc := NewScorer(st, p)
	start(s, top)
	if n := s.touch(lists); n >= tabulateAt {
		sc.tabulate()
	}
	for k, x := range parts {
		group := 0.0
		if groups != nil {
			group = groups[k]
		}
		x.score(lists[k*nt:(k+1)*nt], sc, top, q.Tags, keep, s, k, group)
	}
	offer(s, parts, top, groups)
	return top.Hits()
}

// touch reads the first posting of each of lists, and keeps their sum in
// s so that the reads are not optimised away: a prefetch. Over many
// partitions, the lists are many short arrays in as many places, and
// scoring them one after the other waits for each one's memory in turn;
// reads that depend on nothing before them wait together (BENCHMARKS.md
// says what it saves). It returns how many postings the lists hold.
func (s *scratch) touch(lists []*postings) int {
	var sum int32
	n := 0
	for _, p := range lists {
		if p != nil && len(p.list) > 0 {
			sum += p.list[0].tf
			n += len(p.list)
		}
	}
	s.warm = sum
	return n
}

// tabulateAt is the fewest postings a search tabulates its length norms
// for (Scorer.tabulate): 256 divisions, worth it past that. Tests lower
// it.
var tabulateAt = 1024

// Search is the Search of x alone.
func (x *Index[R]) Search(q *Query, p Params, top *TopK[R], keep func(R) bool) ([]Hit[R], error) {
	return Search(q, []*Index[R]{x}, p, top, keep)
}

// distinct returns the partitions of parts holding documents, without
// repeats, in order, and their corpus: nil when they are of several.
// Partitions without documents add nothing to a search, and hold no
// postings. Over one corpus, it marks them in s (placeOf) by their
// numbers, a store in an array each instead of a map's hashing. It
// returns parts itself when it has nothing to drop.
func distinct[R comparable](parts []*Index[R], s *scratch) ([]*Index[R], *Corpus[R]) {
	if len(parts) == 1 && parts[0] != nil && parts[0].docs > 0 {
		return parts, parts[0].corpus
	}
	var c *Corpus[R]
	for _, x := range parts {
		if x == nil {
			continue
		}
		if c == nil {
			c = x.corpus
		} else if x.corpus != c {
			return distinctApart(parts), nil
		}
	}
	if c == nil {
		return nil, nil
	}
	s.unmark(c.last(), len(parts))
	var out []*Index[R] // made at the first partition dropped
	for k, x := range parts {
		if x == nil || x.docs == 0 || s.marked(x.num) {
			if out == nil {
				out = append(make([]*Index[R], 0, len(parts)-1), parts[:k]...)
			}
			continue
		}
		if out != nil {
			s.mark(x.num, int32(len(out)))
			out = append(out, x)
		} else {
			s.mark(x.num, int32(k))
		}
	}
	if out == nil {
		return parts, c
	}
	return out, c
}

// distinctApart is distinct over partitions of several corpora: with a
// map, and no marks.
func distinctApart[R comparable](parts []*Index[R]) []*Index[R] {
	seen := make(map[*Index[R]]bool, len(parts))
	out := make([]*Index[R], 0, len(parts))
	for _, x := range parts {
		if x != nil && x.docs > 0 && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// scratch is the per-search memory: the postings lookUp found, and the
// term counts groupScores adds and the scores it gives; for score, a score by document id, kept
// zeroed between uses, and the ids holding one; and, for a top ordered by
// score, the bar and the candidates that reached it.
type scratch struct {
	lists   []*postings
	tfs     []int
	groups  []float64
	scores  []float64
	touched []int32
	// bar, for a top ordered by score (TopK.tie set), is a min-heap of
	// the k best scores of the documents keep accepted so far: once it
	// holds k, its root bounds the k-th best score from below, and a
	// document scoring under it cannot be among the best k. Each
	// document that reaches it is a candidate (cands), offered to top
	// once every partition was scored, if it still reaches the bar then.
	// Between the scores, only floats are compared: top's order of equal
	// scores reads the references, each a cache miss, and is asked only
	// of the few candidates left at the end.
	bar   []float64
	k     int
	cands []candidate
	warm  int32 // what touch read
	// A search's partitions are marked by number (Corpus), with their
	// places among them: in dense arrays by number, each search taking
	// the next gen so that no clearing is needed between searches; or,
	// for a few partitions of a corpus of many, in a map (sparse), so
	// that the arrays need not grow to the corpus's size.
	dense  bool
	marks  []uint32
	places []int32
	gen    uint32
	sparse map[int32]int32
}

// denseMarks is how many times more partitions a corpus may number than
// a search covers for the search to mark them in arrays, not a map.
// Tests change it.
var denseMarks int64 = 64

// unmark readies s's marks for a search over n partitions numbered up
// to last: the marks of earlier searches no longer count.
func (s *scratch) unmark(last int32, n int) {
	s.dense = int64(n)*denseMarks >= int64(last)
	if !s.dense {
		if s.sparse == nil {
			s.sparse = make(map[int32]int32, n)
		}
		clear(s.sparse)
		return
	}
	if len(s.marks) <= int(last) {
		s.marks = make([]uint32, last+1+last/4)
		s.places = make([]int32, len(s.marks))
	}
	s.gen++
	if s.gen == 0 { // wrapped: every mark might be taken for current
		clear(s.marks)
		s.gen = 1
	}
}

// mark marks the partition numbered num as the search's, at place k.
func (s *scratch) mark(num, k int32) {
	if !s.dense {
		s.sparse[num] = k
		return
	}
	s.marks[num], s.places[num] = s.gen, k
}

// marked reports whether the partition numbered num is marked.
func (s *scratch) marked(num int32) bool {
	_, ok := s.placeOf(num)
	return ok
}

// placeOf returns the place among the search's partitions of the
// partition numbered num, false when it is not one of them.
func (s *scratch) placeOf(num int32) (int32, bool) {
	if !s.dense {
		k, ok := s.sparse[num]
		return k, ok
	}
	if s.marks[num] != s.gen {
		return 0, false
	}
	return s.places[num], true
}

// candidate is a document that reached the bar: partition part of a
// search, document id, score.
type candidate struct {
	part  int32
	id    int32
	score float64
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// getScratch returns a scratch from the pool.
func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// put returns s to the pool, letting go of the postings it found.
func (s *scratch) put() {
	clear(s.lists)
	scratchPool.Put(s)
}

// grow returns b resized to n zero elements, reusing its array if large
// enough.
func grow[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// start readies s for a search into top: with a bar when top is ordered
// by score.
func start[R any](s *scratch, top *TopK[R]) {
	s.bar, s.cands, s.k = s.bar[:0], s.cands[:0], 0
	if top.tie != nil {
		s.k = top.k
	}
}

// below reports whether a document of the given score is below the bar.
func (s *scratch) below(score float64) bool {
	return len(s.bar) == s.k && score < s.bar[0]
}

// admit adds an accepted document's score to the bar.
func (s *scratch) admit(score float64) { s.bar = kth.Push(s.bar, s.k, score) }

// offer offers top the candidates that reach the final bar, carrying
// their partitions' scores as one document when groups is not nil.
func offer[R comparable](s *scratch, parts []*Index[R], top *TopK[R], groups []float64) {
	for _, c := range s.cands {
		if s.below(c.score) || top.Refuses(c.score) {
			continue
		}
		h := Hit[R]{Ref: parts[c.part].refs[c.id], Score: c.score}
		if groups != nil {
			h.Group = groups[c.part]
		}
		if top.Wants(h) {
			top.Insert(h)
		}
	}
}

// score scores x, partition part of a search, term by term in the
// query's term order (lists: x's postings of each term), and offers its
// documents to top: at once, or for a top ordered by score, once they
// reached the bar, as candidates (see scratch). Its hits carry group,
// x's score as one document.
func (x *Index[R]) score(lists []*postings, sc *Scorer, top *TopK[R], tags uint64, keep func(R) bool, s *scratch, part int, group float64) {
	if len(s.scores) < len(x.refs) {
		s.scores = make([]float64, len(x.refs))
	}
	scores, touched := s.scores, s.touched[:0]
	for i, p := range lists {
		if p == nil {
			continue
		}
		for _, e := range p.list {
			dl := x.lens[e.id]
			if dl < 0 {
				continue
			}
			if scores[e.id] == 0 {
				touched = append(touched, e.id)
			}
			scores[e.id] += sc.weight(i, int(e.tf), int(dl))
		}
	}
	s.touched = touched
	if s.k > 0 {
		for _, id := range touched {
			score := scores[id]
			scores[id] = 0
			if s.below(score) || tags != 0 && tags&(1<<x.tags[id]) == 0 {
				continue // without reading its reference, a cache miss
			}
			if keep == nil || keep(x.refs[id]) {
				s.admit(score)
				s.cands = append(s.cands, candidate{part: int32(part), id: id, score: score})
			}
		}
		return
	}
	for _, id := range touched {
		score := scores[id]
		scores[id] = 0
		if tags != 0 && tags&(1<<x.tags[id]) == 0 {
			continue
		}
		h := Hit[R]{Ref: x.refs[id], Score: score, Group: group}
		if top.Wants(h) && (keep == nil || keep(h.Ref)) {
			top.Insert(h)
		}
	}
}
