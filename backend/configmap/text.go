package configmap

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/lexical"
)

var _ driver.TextSearcher = (*Driver)(nil)

// SearchText returns the k live records matching q whose content best
// matches text; see driver.TextSearcher. It reads the ConfigMaps as List
// does and indexes their records' texts for this search alone, one
// lexical index per writer identity the filter matches: an agent's
// ConfigMap holds at most MaxObjectBytes, so analysing it costs no more
// than reading it from the API server, and nothing is kept between
// searches that could go stale when another replica writes.
func (d *Driver) SearchText(ctx context.Context, q driver.Query, text string, k int) ([]driver.Match, error) {
	now, objs, err := d.read(ctx, driver.CheckSearchText(q, text, k), q.Filter)
	if err != nil {
		return nil, err
	}
	corpus := lexical.NewCorpus[textRef]()
	byWriter := map[memory.Identity]*lexical.Index[textRef]{}
	var parts []*lexical.Index[textRef]
	for _, o := range objs {
		for key, r := range o.recs {
			if r.Content == "" || !q.Filter.Matches(r.Identity) {
				continue
			}
			x := byWriter[r.Identity]
			if x == nil {
				x = corpus.NewIndex()
				byWriter[r.Identity] = x
				parts = append(parts, x)
			}
			x.Add(textRef{o, key}, r.Content)
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	lq := lexical.NewQuery(text)
	params := lexical.DefaultParams()
	keep := func(t textRef) bool {
		r := t.record()
		return q.Matches(r) && (r.Expires.IsZero() || r.Expires.UnixNano() > now)
	}
	top := lexical.NewTopKByScore(k, func(a, b textRef) bool { return driver.Newer(a.record(), b.record()) })
	hits, err := lexical.SearchGroups(&lq, parts, params, top, keep)
	if err != nil {
		return nil, err
	}
	out := make([]driver.Match, len(hits))
	for i, h := range hits {
		r := h.Ref.record()
		out[i] = driver.Match{Record: detach(r), Score: h.Score, WriterScore: h.Group}
	}
	return out, nil
}

// textRef is a record of a search, in its ConfigMap.
type textRef struct {
	o   *object
	key recordKey
}

func (t textRef) record() memory.Record { return t.o.recs[t.key] }
