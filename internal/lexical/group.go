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
// scores[i] is the score of parts[i]; 0 for a nil or empty partition, or
// one holding none of q's terms. A partition listed twice gets its score
// twice but counts once in the collection. Rank over the partitions'
// texts joined into one document each gives the same scores. It costs
// time linear in len(parts) times q's terms, plus the postings of q's
// terms in partitions holding removed documents. p must be valid
// (Params.Validate).
func GroupScores[R comparable](q *Query, parts []*Index[R], p Params) ([]float64, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	scores := make([]float64, len(parts))
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
	for i, x := range parts {
		if tf, ok := tfs[x]; ok {
			scores[i] = sc.Score(x.length, tf)
		}
	}
	return scores, nil
}
