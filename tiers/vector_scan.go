package tiers

import (
	"runtime"
	"sync"
)

// scanShare is the fewest entries worth a goroutine of their own when
// searchScan splits the work.
const scanShare = 2048

// searchScan ranks without the search index: it scores the text of every
// live entry of the view with a termCounter, which is cheaper than
// building the index when only a search or two are made, as in a process
// started for one step. Large views are split among up to GOMAXPROCS
// goroutines, whose top k are merged; the order of hits is total, so the
// result is the same. An entry removed by hand is skipped, and the scan
// redone. The caller holds v.mu, with the view just refreshed, and
// nothing changes the view or gone while the goroutines read them.
func (v *Vector) searchScan(terms []string, k int, keep func(*viewEntry) bool) ([]hit, error) {
	c := newTermCounter(terms)
	var gone map[string]bool
	for {
		top := v.scan(&c, k, keep, gone)
		found, err := v.dropGone(top.hits, func(name string) {
			if gone == nil {
				gone = map[string]bool{}
			}
			gone[name] = true
		})
		if err != nil || !found {
			return top.hits, err
		}
	}
}

// scan returns the top k of the view's live entries, leaving out those in
// gone and those keep refuses.
func (v *Vector) scan(c *termCounter, k int, keep func(*viewEntry) bool, gone map[string]bool) topK {
	order := v.view.order
	parts := min(runtime.GOMAXPROCS(0), len(order)/scanShare)
	if parts <= 1 {
		return scanEntries(c, order, k, keep, gone)
	}
	tops := make([]topK, parts)
	var wg sync.WaitGroup
	for p := range parts {
		share := order[p*len(order)/parts : (p+1)*len(order)/parts]
		wg.Go(func() { tops[p] = scanEntries(c, share, k, keep, gone) })
	}
	wg.Wait()
	top := tops[0]
	for _, t := range tops[1:] {
		for _, h := range t.hits {
			if top.wants(h) {
				top.insert(h)
			}
		}
	}
	return top
}

// scanEntries returns the top k of the live entries of es.
func scanEntries(c *termCounter, es []*viewEntry, k int, keep func(*viewEntry) bool, gone map[string]bool) topK {
	top := newTopK(k)
	for _, e := range es {
		if e.dead {
			continue
		}
		n := c.score(e.text)
		if n == 0 {
			continue
		}
		h := hit{entry: e, score: n}
		if top.wants(h) && !gone[e.name] && keep(e) {
			top.insert(h)
		}
	}
	return top
}
