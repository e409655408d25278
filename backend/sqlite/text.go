//go:build cgo

package sqlite

import (
	"context"

	"github.com/agentmem/memory/backend/driver"
)

var _ driver.TextSearcher = (*Driver)(nil)

// SearchText returns the k live records matching q whose content best
// matches text; see driver.TextSearcher. It ranks over an in-memory copy of
// the store's analysed texts (textCache): the first text search loads it,
// every search first reads the records added since (by any process), and a
// search after a change or removal of stored records loads it again. The
// indexes of the writers q's filter matches are searched, with kinds, key,
// ids and expiry applied to each candidate inside the search; the k
// winners are then read from the file. A winner deleted by another process
// in between is left out.
func (d *Driver) SearchText(ctx context.Context, q driver.Query, text string, k int) ([]driver.Match, error) {
	if err := d.enter(ctx, driver.CheckSearchText(q, text, k)); err != nil {
		return nil, err
	}
	defer d.gate.Leave()
	now, err := d.clock.Nanos()
	if err != nil {
		return nil, err
	}
	c := &d.tc
	if err := d.currentTexts(ctx); err != nil {
		return nil, err
	}
	found, err := c.c.Search(q, text, k, now)
	c.mu.RUnlock()
	d.maybeSnapshot()
	if err != nil || len(found) == 0 {
		return nil, err
	}
	return d.fetchMatches(ctx, q.Filter.Identity.Tenant, found)
}

// currentTexts returns with d.tc held shared and current: loaded at the
// stored text epoch and holding every record up to the largest rowid, as
// read at the start of this call or later.
func (d *Driver) currentTexts(ctx context.Context) error {
	c := &d.tc
	c.mu.RLock()
	epoch, maxRow, err := textState(ctx, d.r)
	if err != nil {
		c.mu.RUnlock()
		return fail(ctx, err, "sqlite: read the text epoch")
	}
	if c.c != nil && c.epoch == epoch && c.maxRow >= maxRow {
		return nil
	}
	c.mu.RUnlock()
	c.mu.Lock()
	switch {
	case c.c == nil || c.epoch != epoch:
		if err := c.load(ctx, d.r, d.log); err != nil {
			c.mu.Unlock()
			return fail(ctx, err, "sqlite: load texts")
		}
		d.log.Debug("sqlite: loaded texts for search", "epoch", c.epoch, "records", c.c.Len())
	case c.maxRow < maxRow:
		if err := c.catchUp(ctx, d.r, maxRow); err != nil {
			c.mu.Unlock()
			return fail(ctx, err, "sqlite: read new texts")
		}
	}
	c.mu.Unlock()
	c.mu.RLock()
	if c.c == nil {
		c.mu.RUnlock()
		return d.currentTexts(ctx)
	}
	return nil
}
