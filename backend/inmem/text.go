package inmem

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/lexical"
)

var _ driver.TextSearcher = (*Driver)(nil)

// Each writer's records' content is indexed for text search in a
// lexical.Index of its own, keyed by entry, so that a search reads only
// the indexes of the writers its filter matches and its statistics are
// theirs. The indexes are built on the first SearchText, from every
// stored record, and kept by every write after it (d.texts): a driver that
// is never searched by text pays nothing for them.

// indexText adds e's content to its writer's text index.
func indexText(e *entry) {
	if e.Content == "" {
		return
	}
	w := data(e.Writer())
	if w.text == nil {
		w.text = lexical.NewIndex[*entry]()
	}
	w.text.Add(e, e.Content)
}

// unindexText takes e's content out of its writer's text index.
func unindexText(e *entry) {
	if w := e.Writer().Extra; w != nil && w.text != nil {
		w.text.Remove(e)
	}
}

// startTexts builds every writer's text index, once. The caller holds
// d.mu for writing.
func (d *Driver) startTexts() {
	if d.texts {
		return
	}
	d.texts = true
	for e := range d.idx.All() {
		indexText(e)
	}
}

// SearchText returns the k live records matching q whose content best
// matches text; see driver.TextSearcher. It reads the text indexes of the
// writers q's filter matches, applying kinds, key, ids and expiry to each
// candidate inside the search.
func (d *Driver) SearchText(ctx context.Context, q driver.Query, text string, k int) ([]driver.Match, error) {
	now, err := driver.Admit(ctx, driver.CheckSearchText(q, text, k), d.clock)
	if err != nil {
		return nil, err
	}
	if err := d.ensureTexts(); err != nil {
		return nil, err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	var parts []*lexical.Index[*entry]
	for w := range d.idx.Writers(q) {
		if w.Extra != nil && w.Extra.text != nil && w.Extra.text.Len() > 0 {
			parts = append(parts, w.Extra.text)
		}
	}
	rest := q
	keep := func(e *entry) bool { return !e.Expired(now) && e.MatchesRest(&rest) }
	hits := rankText(parts, text, k, keep)
	out := make([]driver.Match, len(hits))
	for i, h := range hits {
		out[i] = driver.Match{Record: h.Ref.Record(), Score: float64(h.Score)}
	}
	return out, nil
}

// ensureTexts turns the text indexes on, unless they are.
func (d *Driver) ensureTexts() error {
	d.mu.RLock()
	on := d.texts
	d.mu.RUnlock()
	if on {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	d.startTexts()
	return nil
}

// rankText ranks the entries of parts that keep admits against text, best
// first, ties in List order.
func rankText(parts []*lexical.Index[*entry], text string, k int, keep func(*entry) bool) []lexical.Hit[*entry] {
	q := lexical.NewQuery(lexical.Terms(text))
	top := lexical.NewTopK(k, func(a, b lexical.Hit[*entry]) bool {
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.Ref.Compare(b.Ref) < 0
	})
	for _, p := range parts {
		p.Score(&q, top, keep)
	}
	return top.Hits()
}
