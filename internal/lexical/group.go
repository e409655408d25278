package lexical

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
// The scores are by partition; a nil or empty partition, or one holding
// none of q's terms, scores 0 (and may be left out). A partition listed
// twice counts once. Rank over the partitions' texts joined into one
// document each gives the same scores. It costs
// time linear in len(parts) times q's terms, plus the postings of q's
// terms in partitions holding removed documents. p must be valid
// (Params.Validate).
func GroupScores[R comparable](q *Query, parts []*Index[R], p Params) (map[*Index[R]]float64, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	scores := make(map[*Index[R]]float64, len(parts))
	if len(q.terms) == 0 {
		return scores, nil
	}
	uniq := distinct(parts)
	tfs := make(map[*Index[R]][]int, len(uniq))
	st := Stats{DF: make([]int, len(q.terms))}
	for _, x := range uniq {
		if x.Len() == 0 {
			continue
		}
		tf := make([]int, len(q.terms))
		for i, t := range q.terms {
			tf[i] = x.tf(x.postings[t])
		}
		tfs[x] = tf
		st.AddDoc(x.length, tf)
	}
	sc := NewScorer(st, p)
	for x, tf := range tfs {
		if s := sc.Score(x.length, tf); s > 0 {
			scores[x] = s
		}
	}
	return scores, nil
}

// SearchGroups is Search and GroupScores of the same partitions in one
// call, as the drivers' text searches make them: the hits, and each
// partition's score as one document, by partition.
func SearchGroups[R comparable](q *Query, parts []*Index[R], p Params, top *TopK[R], keep func(R) bool) ([]Hit[R], map[*Index[R]]float64, error) {
	hits, err := Search(q, parts, p, top, keep)
	if err != nil {
		return nil, nil, err
	}
	groups, err := GroupScores(q, parts, p)
	return hits, groups, err
}
