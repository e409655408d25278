package lexical

import (
	"math"

	"github.com/agentmem/memory"
)

// The BM25 parameters the library uses unless told otherwise: the values
// Lucene and most search engines default to.
const (
	// DefaultK1 is how quickly repeats of a term stop adding to a
	// document's score.
	DefaultK1 = 1.2
	// DefaultB is how much a document's length dampens its term
	// frequencies: 0 not at all, 1 fully.
	DefaultB = 0.75
)

// Params are the two free parameters of BM25. They are used as given:
// the zero Params is a valid BM25 that counts only whether a term occurs
// (K1 0) with no length normalisation (B 0). DefaultParams returns the
// library's defaults.
type Params struct {
	// K1 is the term-frequency saturation, at least 0 and finite.
	K1 float64
	// B is the length normalisation, from 0 to 1.
	B float64
}

// DefaultParams returns Params{K1: DefaultK1, B: DefaultB}.
func DefaultParams() Params { return Params{K1: DefaultK1, B: DefaultB} }

// Validate returns memory.ErrInvalidArgument unless K1 is finite and at
// least 0 and B is between 0 and 1.
func (p Params) Validate() error {
	if !(p.K1 >= 0 && p.K1 <= math.MaxFloat64) {
		return memory.Errorf(memory.ErrInvalidArgument, "BM25 k1 is %v; it must be finite and at least 0", p.K1)
	}
	if !(p.B >= 0 && p.B <= 1) {
		return memory.Errorf(memory.ErrInvalidArgument, "BM25 b is %v; it must be between 0 and 1", p.B)
	}
	return nil
}

// IDF returns the inverse document frequency of a term held by df of n
// documents: ln(1 + (n − df + 0.5) / (df + 0.5)), the form Lucene uses,
// which is positive for every 0 ≤ df ≤ n, so a term every document holds
// still adds a little and no match ever scores zero or less.
func IDF(n, df int) float64 {
	return math.Log1p((float64(n-df) + 0.5) / (float64(df) + 0.5))
}

// Stats are the collection statistics BM25 weighs a query's terms with:
// how many documents there are, their total length in terms, and for
// each of the query's terms how many documents hold it. Stats of disjoint
// sets of documents add up (Add), as if they were one.
type Stats struct {
	// Docs is the number of documents.
	Docs int
	// Length is the sum of the documents' lengths, in terms (Analyze).
	Length int
	// DF[i] is how many of the documents hold the query's i-th term.
	DF []int
}

// AddDoc counts a document of length terms, holding the query's i-th term
// tf[i] times, into s. tf has one count per term of the query s is for.
func (s *Stats) AddDoc(length int, tf []int) {
	if s.DF == nil {
		s.DF = make([]int, len(tf))
	}
	s.Docs++
	s.Length += length
	for i, n := range tf {
		if n > 0 {
			s.DF[i]++
		}
	}
}

// Add adds o, the statistics of other documents for the same query, to s.
func (s *Stats) Add(o Stats) {
	if s.DF == nil {
		s.DF = make([]int, len(o.DF))
	}
	s.Docs += o.Docs
	s.Length += o.Length
	for i, n := range o.DF {
		s.DF[i] += n
	}
}

// Scorer computes the BM25 score of documents for one query under fixed
// Stats. A document of length dl terms holding the query's term t tf
// times gets, for that term,
//
//	IDF(N, df_t) · tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl))
//
// with N = Stats.Docs and avgdl = Stats.Length / N, and its score is the
// sum of these over the query's distinct terms it holds, added in the
// query's term order, so documents that hold the same terms as often and
// have the same length get exactly the same score however they are
// reached (a scan, an Index, several partitions, Rank). A Scorer is
// read-only once made: safe for concurrent use.
type Scorer struct {
	idf   []float64 // by query term
	k1    float64
	b     float64
	avgdl float64
	// norms holds norm(dl) for the shorter documents, once tabulate
	// made it: a search weighs tens of thousands of postings, most of
	// short documents, and a division less each is worth 256 of them.
	norms []float64
}

// NewScorer returns the Scorer of s under p, which must be valid
// (Params.Validate).
func NewScorer(s Stats, p Params) *Scorer {
	sc := &Scorer{idf: make([]float64, len(s.DF)), k1: p.K1, b: p.B, avgdl: 1}
	for i, df := range s.DF {
		sc.idf[i] = IDF(s.Docs, df)
	}
	if s.Docs > 0 && s.Length > 0 {
		sc.avgdl = float64(s.Length) / float64(s.Docs)
	}
	return sc
}

// weight returns the score term i adds to a document of length dl holding
// it tf times. The explicit conversions round every product, so no
// platform fuses operations differently in different callers.
func (sc *Scorer) weight(i, tf, dl int) float64 {
	f := float64(tf)
	var norm float64
	if dl < len(sc.norms) {
		norm = sc.norms[dl]
	} else {
		norm = sc.norm(dl)
	}
	return float64(sc.idf[i]*float64(f*(sc.k1+1))) / (f + norm)
}

// norm returns the length normalisation of a document of length dl,
// k1 · (1 − b + b · dl / avgdl), every step rounded.
func (sc *Scorer) norm(dl int) float64 {
	return float64(sc.k1 * float64(1-sc.b+float64(sc.b*float64(float64(dl)/sc.avgdl))))
}

// tabulated is how many lengths tabulate computes norms for.
const tabulated = 256

// tabulate makes sc.norms: norm of every length below tabulated, computed
// as norm computes it, so weights are the same bits either way.
func (sc *Scorer) tabulate() {
	sc.norms = make([]float64, tabulated)
	for dl := range sc.norms {
		sc.norms[dl] = sc.norm(dl)
	}
}

// Score returns the score of a document of length dl terms holding the
// query's i-th term tf[i] times; 0 when it holds none of them.
func (sc *Scorer) Score(dl int, tf []int) float64 {
	s := 0.0
	for i, n := range tf {
		if n > 0 {
			s += sc.weight(i, n, dl)
		}
	}
	return s
}
