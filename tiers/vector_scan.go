package tiers

import (
	"runtime"
	"sync"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/lexical"
)

// scanShare is the fewest entries worth a goroutine of their own when
// searchScan splits the work.
const scanShare = 2048

// searchScan ranks without the search index: it analyzes the text of
// every live entry of the view in the filter's scope, counting BM25's
// statistics and the query's terms (lexical.Query.Count), then scores the
// entries holding a term; that is cheaper than building the index when
// only a search or two are made, as in a process started for one step.
// Large views are split among up to GOMAXPROCS goroutines, whose
// statistics are added up and whose top k are merged; the order of hits
// is total, so the result is the one the index gives. An entry whose file
// was removed by hand is marked gone, and the ranking redone. The caller
// holds v.mu, with the view just refreshed, and nothing changes the view
// while the goroutines read it.
func (v *Vector) searchScan(q *lexical.Query, k int, filter memory.Filter, keep func(*viewEntry) bool) ([]hit, error) {
	order := v.view.order
	parts := max(1, min(runtime.GOMAXPROCS(0), len(order)/scanShare))
	shares := make([]scanned, parts)
	run := func(fn func(p int)) {
		if parts == 1 {
			fn(0)
			return
		}
		var wg sync.WaitGroup
		for p := range parts {
			wg.Go(func() { fn(p) })
		}
		wg.Wait()
	}
	run(func(p int) { shares[p] = count(q, order[p*len(order)/parts:(p+1)*len(order)/parts], filter) })
	var st lexical.Stats
	for _, s := range shares {
		st.Add(s.stats)
	}
	if st.DF == nil {
		st.DF = make([]int, len(q.Terms()))
	}
	sc := lexical.NewScorer(st, lexical.DefaultParams())
	for {
		tops := make([]*lexical.TopK[*viewEntry], parts)
		run(func(p int) { tops[p] = shares[p].rank(sc, len(q.Terms()), k, keep) })
		for _, t := range tops[1:] {
			tops[0].Merge(t)
		}
		found, err := v.dropGone(tops[0].Hits())
		if err != nil || !found {
			return tops[0].Hits(), err
		}
	}
}

// scanned is what count found in a share of the view: the statistics of
// its entries in scope, and those holding a term of the query.
type scanned struct {
	stats lexical.Stats
	hits  []*viewEntry
	lens  []int
	tfs   []int // len(query terms) counts per entry of hits
}

// count analyzes the live entries of es in filter's scope.
func count(q *lexical.Query, es []*viewEntry, filter memory.Filter) scanned {
	var s scanned
	n := len(q.Terms())
	s.stats.DF = make([]int, n)
	tf := make([]int, n)
	for _, e := range es {
		if e.dead || !filter.Matches(e.who) {
			continue
		}
		dl := q.Count(e.text, tf)
		s.stats.AddDoc(dl, tf)
		for _, c := range tf {
			if c > 0 {
				s.hits = append(s.hits, e)
				s.lens = append(s.lens, dl)
				s.tfs = append(s.tfs, tf...)
				break
			}
		}
	}
	return s
}

// rank returns the top k of the entries s found that keep accepts.
func (s *scanned) rank(sc *lexical.Scorer, terms, k int, keep func(*viewEntry) bool) *lexical.TopK[*viewEntry] {
	top := newTopK(k)
	for i, e := range s.hits {
		h := hit{Ref: e, Score: sc.Score(s.lens[i], s.tfs[i*terms:(i+1)*terms])}
		if top.Wants(h) && keep(e) {
			top.Insert(h)
		}
	}
	return top
}
