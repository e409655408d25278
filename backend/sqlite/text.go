//go:build cgo

package sqlite

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

var _ driver.TextRanker = (*Driver)(nil)

// SearchText returns the k live records matching q whose content best
// matches text; see driver.TextSearcher. It ranks over an in-memory copy of
// the store's analysed texts (textCache): the first text search loads it,
// every search first reads the records added since (by any process), and a
// search after a change or removal of stored records loads it again. The
// indexes of the writers q's filter matches are searched, with kinds, key,
// ids and expiry applied to each candidate inside the search; the k
// winners are then read from the file. A winner deleted by another process
// in between is left out. After a search, a snapshot of the texts is
// stored in the background when one is due (see textsnapshot.go).
func (d *Driver) SearchText(ctx context.Context, q driver.Query, text string, k int) ([]driver.Match, error) {
	return sq.SearchText(ctx, &d.ts, q, text, k)
}

// RankText is SearchText without reading the winners from the database:
// each match is the record's Ref, from the in-memory texts; see
// driver.TextRanker.
func (d *Driver) RankText(ctx context.Context, q driver.Query, text string, k int) ([]driver.RefMatch, error) {
	return sq.RankText(ctx, &d.ts, q, text, k)
}

// WriterRefs returns the Refs of the records of each of writers that q
// matches, from the in-memory texts brought up to date as for a search;
// see driver.TextRanker.
func (d *Driver) WriterRefs(ctx context.Context, q driver.Query, writers []memory.Identity) ([][]driver.Ref, error) {
	return sq.WriterRefs(ctx, &d.ts, q, writers)
}

// withinTexts runs search with d.tc held shared and current
// (currentTexts); catching up reads the local file, so search runs once,
// after it.
func (d *Driver) withinTexts(ctx context.Context, search func()) error {
	if err := d.currentTexts(ctx); err != nil {
		return err
	}
	defer d.tc.Mu.RUnlock()
	search()
	return nil
}

// currentTexts returns with d.tc held shared and current: loaded at the
// stored text epoch and holding every record up to the largest rowid, as
// read at the start of this call or later.
func (d *Driver) currentTexts(ctx context.Context) error {
	c := &d.tc
	c.Mu.RLock()
	epoch, maxRow, err := textState(ctx, d.r)
	if err != nil {
		c.Mu.RUnlock()
		return fail(ctx, err, "sqlite: read the text epoch")
	}
	if c.C != nil && c.epoch == epoch && c.maxRow >= maxRow {
		return nil
	}
	c.Mu.RUnlock()
	c.Mu.Lock()
	switch {
	case c.C == nil || c.epoch != epoch:
		if err := c.load(ctx, d.r, d.log); err != nil {
			c.Mu.Unlock()
			return fail(ctx, err, "sqlite: load texts")
		}
		d.log.Debug("sqlite: loaded texts for search", "epoch", c.epoch, "records", c.C.Len())
	case c.maxRow < maxRow:
		if err := c.catchUp(ctx, d.r, maxRow); err != nil {
			c.Mu.Unlock()
			return fail(ctx, err, "sqlite: read new texts")
		}
	}
	c.Mu.Unlock()
	c.Mu.RLock()
	if c.C == nil {
		c.Mu.RUnlock()
		return d.currentTexts(ctx)
	}
	return nil
}
