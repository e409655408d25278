package lexical

// Query is a query's distinct terms (Terms), in the order they first
// occur, prepared for scoring. The zero Query has no terms and matches
// nothing.
type Query struct {
	terms []string
	pos   map[string]int // term -> index, for long queries
	// Tags, unless 0, admits as candidates only the documents whose tag
	// (Index.AddTagged) has its bit set, bit 1<<tag: the others are
	// never offered, and keep is not asked about them, but they count in
	// the statistics, as the documents keep refuses do.
	Tags uint64
}

// queryMapAt is how many terms a Query needs before it finds a term's
// index with a map rather than by comparing with each.
const queryMapAt = 8

// NewQuery returns the query of text: its distinct terms, as Terms
// returns them. A query of stopwords only has no terms.
func NewQuery(text string) Query {
	q := Query{terms: Terms(text)}
	if len(q.terms) >= queryMapAt {
		q.pos = make(map[string]int, len(q.terms))
		for i, t := range q.terms {
			q.pos[t] = i
		}
	}
	return q
}

// Terms returns the query's terms. The slice is q's own.
func (q *Query) Terms() []string { return q.terms }

// index returns the index of term t in q, or -1.
func (q *Query) index(t string) int {
	if q.pos != nil {
		if i, ok := q.pos[t]; ok {
			return i
		}
		return -1
	}
	for i, s := range q.terms {
		if s == t {
			return i
		}
	}
	return -1
}

// Count analyzes text and returns its length in terms, setting tf[i] to
// how often it holds the query's i-th term; tf must have a count per term
// (len(q.Terms())). With Stats.AddDoc and Scorer.Score it scores texts
// without an Index, scoring them exactly as an Index would.
func (q *Query) Count(text string, tf []int) int {
	clear(tf)
	n := 0
	for t := range Analyze(text) {
		n++
		if i := q.index(t); i >= 0 {
			tf[i]++
		}
	}
	return n
}
