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
	uniq := distinct(parts)
	if len(q.terms) == 0 || len(uniq) == 0 {
		return map[*Index[R]]float64{}, nil
	}
	return groupScores(q, uniq, lookUp(q, uniq), p), nil
}

// groupScores is GroupScores over distinct parts whose postings of q's
// terms lookUp found (lists); q has terms and p is valid.
func groupScores[R comparable](q *Query, parts []*Index[R], lists []*postings, p Params) map[*Index[R]]float64 {
	nt := len(q.terms)
	scores := make(map[*Index[R]]float64, len(parts))
	tfs := make([]int, len(parts)*nt) // by partition, then term
	st := Stats{DF: make([]int, nt)}
	for k, x := range parts {
		if x.Len() == 0 {
			continue
		}
		tf := tfs[k*nt : (k+1)*nt]
		for i, pl := range lists[k*nt : (k+1)*nt] {
			tf[i] = x.tf(pl)
		}
		st.AddDoc(x.length, tf)
	}
	sc := NewScorer(st, p)
	for k, x := range parts {
		if x.Len() == 0 {
			continue
		}
		if s := sc.Score(x.length, tfs[k*nt:(k+1)*nt]); s > 0 {
			scores[x] = s
		}
	}
	return scores
}

// SearchGroups is Search and GroupScores of the same partitions in one
// call, as the drivers' text searches make them: the hits, and each
// partition's score as one document, by partition.
//
// Each term is looked up once in each partition, for both.
func SearchGroups[R comparable](q *Query, parts []*Index[R], p Params, top *TopK[R], keep func(R) bool) ([]Hit[R], map[*Index[R]]float64, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, err
	}
	parts = distinct(parts)
	if len(q.terms) == 0 || len(parts) == 0 {
		return top.Hits(), map[*Index[R]]float64{}, nil
	}
	lists := lookUp(q, parts)
	return search(q, parts, lists, p, top, keep), groupScores(q, parts, lists, p), nil
}
