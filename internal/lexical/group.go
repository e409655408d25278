package lexical

// groupScores scores each of distinct parts as one document (see
// SearchGroups), whose postings of q's terms lookUp found (lists), with
// s's memory; q has terms and p is valid. It returns the scores by place
// in parts, in s's memory. It costs time linear in len(parts) times q's
// terms, plus the postings of q's terms in partitions holding removed
// documents.
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

// SearchGroups is Search whose hits each carry their partition's score
// as one document (Hit.Group), as the drivers' text searches make them:
// the BM25 score under p of all the partition's live documents' text
// taken together (a term's frequency is its total over them, the length
// their total length), among the partitions of parts as the collection
// (N is the number of non-empty partitions, a term's document frequency
// the number of them holding it). A caller keeping one partition per
// writer gets each writer's score for q: how well everything one
// conversation session said matches the query, as a whole, which ranks
// a session that dwells on a topic above one that mentions it once. Rank
// over the partitions' texts joined into one document each gives the
// same scores.
//
// Each term is looked up once in each partition, for both scores.
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
