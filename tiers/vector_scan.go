package tiers

import (
	"runtime"
	"sync"

	"github.com/agentmem/memory/internal/lexical"
)

// scanShare is the fewest entries worth a goroutine of their own when
// searchScan splits the work.
const scanShare = 2048

// searchScan ranks without the search index: it counts the query's words
// in the text of every live entry of the view (lexical.Query.Count),
// which is cheaper than building the index when only a search or two are
// made, as in a process started for one step. Large views are split among
// up to GOMAXPROCS goroutines, whose top k are merged; the order of hits
// is total, so the result is the same. An entry removed by hand is
// skipped, and the scan redone. The caller holds v.mu, with the view just
// refreshed, and nothing changes the view or gone while the goroutines
// read them.
func (v *Vector) searchScan(terms []string, k int, keep func(*viewEntry) bool) ([]hit, error) {
	q := lexical.NewQuery(terms)
	var gone map[*viewEntry]bool
	for {
		top := v.scan(&q, k, keep, gone)
		found, err := v.dropGone(top.Hits(), func(e *viewEntry) {
			if gone == nil {
				gone = map[*viewEntry]bool{}
			}
			gone[e] = true
		})
		if err != nil || !found {
			return top.Hits(), err
		}
	}
}

// scan returns the top k of the view's live entries, leaving out those in
// gone and those keep refuses.
func (v *Vector) scan(q *lexical.Query, k int, keep func(*viewEntry) bool, gone map[*viewEntry]bool) *lexical.TopK[*viewEntry] {
	order := v.view.order
	parts := min(runtime.GOMAXPROCS(0), len(order)/scanShare)
	if parts <= 1 {
		return scanEntries(q, order, k, keep, gone)
	}
	tops := make([]*lexical.TopK[*viewEntry], parts)
	var wg sync.WaitGroup
	for p := range parts {
		share := order[p*len(order)/parts : (p+1)*len(order)/parts]
		wg.Go(func() { tops[p] = scanEntries(q, share, k, keep, gone) })
	}
	wg.Wait()
	for _, t := range tops[1:] {
		tops[0].Merge(t)
	}
	return tops[0]
}

// scanEntries returns the top k of the live entries of es.
func scanEntries(q *lexical.Query, es []*viewEntry, k int, keep func(*viewEntry) bool, gone map[*viewEntry]bool) *lexical.TopK[*viewEntry] {
	top := newTopK(k)
	for _, e := range es {
		if e.dead {
			continue
		}
		n := q.Count(e.text)
		if n == 0 {
			continue
		}
		h := hit{Ref: e, Score: n}
		if top.Wants(h) && !gone[e] && keep(e) {
			top.Insert(h)
		}
	}
	return top
}
