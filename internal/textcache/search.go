package textcache

import (
	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/lexical"
)

// Search ranks the texts of the writers q's filter matches against text
// and returns the k best, as driver.TextSearcher describes: the
// statistics are those of every record of those writers; q's kinds, key
// and ids and expiry at now (unix nanoseconds) choose the candidates
// among them; ties go newest first, then by id. Each match's record
// carries its id alone, for the caller to read (sqldriver.FetchMatches),
// and its scores: Score, and WriterScore (lexical.GroupScores over those
// writers). The caller has checked the arguments (driver.CheckSearchText).
func (c *Cache) Search(q driver.Query, text string, k int, now int64) ([]driver.Match, error) {
	var parts []*lexical.Index[*Row]
	for w, g := range c.groups {
		if q.Filter.Matches(w) {
			parts = append(parts, g.x)
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	params := lexical.DefaultParams()
	keep := func(r *Row) bool {
		return (r.Expires == 0 || now < r.Expires) && q.MatchesRest(r.ID, r.Kind, r.Key)
	}
	lq := lexical.NewQuery(text)
	top := lexical.NewTopK(k, lexical.ByScore(func(a, b *Row) bool {
		if a.Created != b.Created {
			return a.Created > b.Created
		}
		return a.ID > b.ID
	}))
	hits, groups, err := lexical.SearchGroups(&lq, parts, params, top, keep)
	if err != nil {
		return nil, err
	}
	found := make([]driver.Match, len(hits))
	for i, h := range hits {
		found[i] = driver.Match{Record: memory.Record{ID: h.Ref.ID}, Score: h.Score, WriterScore: groups[h.Ref.g.x]}
	}
	return found, nil
}
