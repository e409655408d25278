package lexical

import "sync"

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
// only of documents top would keep (TopK.Wants), so an expensive filter
// runs rarely. A nil keep accepts every document.
//
// Search only reads the partitions. p must be valid (Params.Validate),
// else Search returns its error and offers nothing.
func Search[R comparable](q *Query, parts []*Index[R], p Params, top *TopK[R], keep func(R) bool) ([]Hit[R], error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if len(q.terms) == 0 {
		return top.Hits(), nil
	}
	parts = distinct(parts)
	var st Stats
	for _, x := range parts {
		st.Add(x.Stats(q))
	}
	sc := NewScorer(st, p)
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	for _, x := range parts {
		x.score(q, sc, top, keep, s)
	}
	return top.Hits(), nil
}

// Search is the Search of x alone.
func (x *Index[R]) Search(q *Query, p Params, top *TopK[R], keep func(R) bool) ([]Hit[R], error) {
	return Search(q, []*Index[R]{x}, p, top, keep)
}

// distinct returns parts without repeats, in order.
func distinct[R comparable](parts []*Index[R]) []*Index[R] {
	if len(parts) == 1 && parts[0] != nil {
		return parts
	}
	seen := make(map[*Index[R]]bool, len(parts))
	out := make([]*Index[R], 0, len(parts))
	for _, x := range parts {
		if x != nil && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// scratch is the per-search memory of score: a score by document id, kept
// zeroed between uses, and the ids holding one.
type scratch struct {
	scores  []float64
	touched []int32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// score scores x's documents holding q's terms term by term, in q's term
// order, and offers them to top.
func (x *Index[R]) score(q *Query, sc *Scorer, top *TopK[R], keep func(R) bool, s *scratch) {
	if len(s.scores) < len(x.refs) {
		s.scores = make([]float64, len(x.refs))
	}
	scores, touched := s.scores, s.touched[:0]
	for i, t := range q.terms {
		p := x.postings[t]
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
	for _, id := range touched {
		score := scores[id]
		scores[id] = 0
		if top.Refuses(score) {
			continue // without reading its reference, a cache miss
		}
		h := Hit[R]{Ref: x.refs[id], Score: score}
		if top.Wants(h) && (keep == nil || keep(h.Ref)) {
			top.Insert(h)
		}
	}
	s.touched = touched
}
