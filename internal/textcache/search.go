package textcache

import (
	"slices"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/lexical"
)

// Search ranks the texts of the writers q's filter matches against text
// and returns the k best, as driver.TextSearcher describes: the
// statistics are those of every record of those writers; q's kinds, key
// and ids and expiry at now (unix nanoseconds) choose the candidates
// among them; ties go newest first, then by id. Each match is the
// record's Ref, for the caller to read the record by its id when it needs
// it (sqldriver.FetchMatches), and its scores: Score, and WriterScore
// (lexical.SearchGroups over those writers: Hit.Group). The caller has checked the
// arguments (driver.CheckSearchText).
func (c *Cache) Search(q driver.Query, text string, k int, now int64) ([]driver.RefMatch, error) {
	parts := c.matching(q.Filter)
	if len(parts) == 0 {
		return nil, nil
	}
	params := lexical.DefaultParams()
	lq := lexical.NewQuery(text)
	// Kinds are admitted by their tags, which read no record; keep reads
	// one only for what tags cannot tell.
	kindsTold := true
	if len(q.Kinds) > 0 {
		lq.Tags, kindsTold = c.kindTags.Query(q.Kinds)
		if lq.Tags == 0 {
			return nil, nil // no record of those kinds
		}
	}
	var keep func(*Row) bool // nil: every candidate
	if c.expiring > 0 || q.Key != "" || len(q.IDs) > 0 || !kindsTold {
		keep = func(r *Row) bool {
			return (r.Expires == 0 || now < r.Expires) && q.MatchesRest(r.ID, r.Kind, r.Key)
		}
	}
	top := lexical.NewTopKByScore(k, func(a, b *Row) bool {
		if a.Created != b.Created {
			return a.Created > b.Created
		}
		return a.ID > b.ID
	})
	hits, err := lexical.SearchGroups(&lq, parts, params, top, keep)
	if err != nil {
		return nil, err
	}
	found := make([]driver.RefMatch, len(hits))
	for i, h := range hits {
		found[i] = driver.RefMatch{Ref: h.Ref.ref(), Score: h.Score, WriterScore: h.Group}
	}
	return found, nil
}

// WriterRefs returns, for each of writers, the Refs of the records it
// wrote that q matches and have not expired at now (unix nanoseconds),
// newest first, as driver.TextRanker describes. The caller has checked
// the arguments (driver.CheckWriterRefs).
func (c *Cache) WriterRefs(q driver.Query, writers []memory.Identity, now int64) [][]driver.Ref {
	out := make([][]driver.Ref, len(writers))
	for i, w := range writers {
		g, _ := c.groups.Get(w)
		if g == nil || !q.Filter.Matches(w) {
			continue
		}
		var refs []driver.Ref
		for r := range g.x.Refs() {
			if (r.Expires == 0 || now < r.Expires) && q.MatchesRest(r.ID, r.Kind, r.Key) {
				refs = append(refs, r.ref())
			}
		}
		slices.SortFunc(refs, driver.CompareRefs)
		out[i] = refs
	}
	return out
}

// ref returns the driver.Ref of the record r is.
func (r *Row) ref() driver.Ref { return r.Fields.Ref(r.g.id) }
