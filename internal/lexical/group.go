package lexical

import (
	"iter"
	"slices"
)

// GroupScores scores each partition of parts as one document: the BM25
// score under p of all its live documents' text taken together (a term's
// frequency is its total over them, the length their total length),
// among the partitions of parts as the collection (N is the number of
// non-empty partitions, a term's document frequency the number of them
// holding it). A caller keeping one partition per writer gets each
// writer's score for q: how well everything one conversation session
// said matches the query, as a whole, which ranks a session that dwells
// on a topic above one that mentions it once.
//
// The scores are by partition (Groups.Of); a nil or empty partition, or
// one holding none of q's terms, scores 0. A partition listed
// twice counts once. Rank over the partitions' texts joined into one
// document each gives the same scores. It costs
// time linear in len(parts) times q's terms, plus the postings of q's
// terms in partitions holding removed documents. p must be valid
// (Params.Validate).
func GroupScores[R comparable](q *Query, parts []*Index[R], p Params) (Groups[R], error) {
	if err := p.Validate(); err != nil {
		return Groups[R]{}, err
	}
	s := getScratch()
	defer s.put()
	uniq, c := distinct(parts, s)
	if len(q.terms) == 0 || len(uniq) == 0 {
		return Groups[R]{}, nil
	}
	g := Groups[R]{parts: slices.Clone(uniq), scores: slices.Clone(groupScores(q, uniq, lookUp(q, uniq, c, s), p, s))}
	if len(uniq) > 1 {
		g.pos = make(map[*Index[R]]int32, len(uniq))
		for k, x := range uniq {
			g.pos[x] = int32(k)
		}
	}
	return g, nil
}

// Groups are the scores of partitions as one document each
// (GroupScores), by partition.
type Groups[R comparable] struct {
	parts  []*Index[R]
	pos    map[*Index[R]]int32 // each partition's place in parts; nil for one
	scores []float64           // by place in parts
}

// Of returns the score of partition x: 0 for a partition not scored.
func (g Groups[R]) Of(x *Index[R]) float64 {
	if g.pos == nil {
		if len(g.parts) == 1 && g.parts[0] == x {
			return g.scores[0]
		}
		return 0
	}
	if k, ok := g.pos[x]; ok {
		return g.scores[k]
	}
	return 0
}

// All yields the partitions scored above 0 and their scores.
func (g Groups[R]) All() iter.Seq2[*Index[R], float64] {
	return func(yield func(*Index[R], float64) bool) {
		for k, s := range g.scores {
			if s > 0 && !yield(g.parts[k], s) {
				return
			}
		}
	}
}

// groupScores is GroupScores over distinct parts whose postings of q's
// terms lookUp found (lists), with s's memory; q has terms and p is
// valid. It returns the scores by place in parts, in s's memory.
func groupScores[R comparable](q *Query, parts []*Index[R], lists []*postings, p Params, s *scratch) []float64 {
	nt := len(q.terms)
	s.groups = grow(s.groups, len(parts))
	scores := s.groups
	s.tfs = grow(s.tfs, len(parts)*nt)
	tfs := s.tfs // by partition, then term
	st := Stats{DF: make([]int, nt)}
	for k, x := range parts {
		tf := tfs[k*nt : (k+1)*nt]
		for i, pl := range lists[k*nt : (k+1)*nt] {
			tf[i] = x.tf(pl)
		}
		st.AddDoc(x.length, tf)
	}
	sc := NewScorer(st, p)
	for k, x := range parts {
		scores[k] = sc.Score(x.length, tfs[k*nt:(k+1)*nt])
	}
	return scores
}

// SearchGroups is Search and GroupScores of the same partitions in one
// call, as the drivers' text searches make them: the hits, each carrying
// its partition's score as one document (Hit.Group).
//
// Each term is looked up once in each partition, for both.
func SearchGroups[R comparable](q *Query, parts []*Index[R], p Params, top *TopK[R], keep func(R) bool) ([]Hit[R], error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	s := getScratch()
	defer s.put()
	parts, c := distinct(parts, s)
	if len(q.terms) == 0 || len(parts) == 0 {
		return top.Hits(), nil
	}
	lists := lookUp(q, parts, c, s)
	return search(q, parts, lists, p, top, keep, groupScores(q, parts, lists, p, s), s), nil
}
