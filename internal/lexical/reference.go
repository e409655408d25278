package lexical

import "github.com/agentmem/memory"

// Doc is a document for Rank: a reference and its text.
type Doc[R any] struct {
	Ref  R
	Text string
}

// Rank is the reference ranking every text search is checked against:
// it analyzes every document from scratch, counts the statistics of all
// of docs (as Search counts those of its partitions), scores every
// document keep accepts by BM25 under p, and returns the best k, best
// first under before, which must be a total order (see TopK). A nil keep
// accepts every document. It builds no index and costs time linear in
// the total length of the texts; it is meant for tests and conformance
// suites, and for one-off rankings of a few documents.
//
// Search over partitions holding exactly docs ranks the same, hit for
// hit and score for score. k must be at least 1 and p valid
// (Params.Validate), or the error is memory.ErrInvalidArgument.
func Rank[R any](query string, docs []Doc[R], p Params, k int, before func(a, b Hit[R]) bool, keep func(R) bool) ([]Hit[R], error) {
	if k < 1 {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "rank k is %d; it must be at least 1", k)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := NewQuery(query)
	type counted struct {
		dl int
		tf []int
	}
	all := make([]counted, len(docs))
	st := Stats{DF: make([]int, len(q.terms))}
	for i, d := range docs {
		tf := make([]int, len(q.terms))
		dl := 0
		for t := range Analyze(d.Text) {
			dl++
			for j, qt := range q.terms {
				if t == qt {
					tf[j]++
				}
			}
		}
		all[i] = counted{dl, tf}
		st.AddDoc(dl, tf)
	}
	sc := NewScorer(st, p)
	top := NewTopK(k, before)
	for i, d := range docs {
		s := sc.Score(all[i].dl, all[i].tf)
		if s > 0 && (keep == nil || keep(d.Ref)) {
			if h := (Hit[R]{Ref: d.Ref, Score: s}); top.Wants(h) {
				top.Insert(h)
			}
		}
	}
	return top.Hits(), nil
}
