package inmem

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

var _ driver.TextRanker = (*Driver)(nil)

// SearchText returns the k live records matching q whose content best
// matches text; see driver.TextSearcher. It ranks through the identity
// index's per-writer text indexes (recindex), which the first text search
// builds and every write after it keeps.
func (d *Driver) SearchText(ctx context.Context, q driver.Query, text string, k int) (out []driver.Match, err error) {
	err = d.withTexts(ctx, driver.CheckSearchText(q, text, k), func(now int64) error {
		out, err = d.idx.SearchText(q, text, k, now)
		return err
	})
	return out, err
}

// RankText is SearchText answering each match's driver.Ref in place of a
// copy of its record; see driver.TextRanker.
func (d *Driver) RankText(ctx context.Context, q driver.Query, text string, k int) (out []driver.RefMatch, err error) {
	err = d.withTexts(ctx, driver.CheckSearchText(q, text, k), func(now int64) error {
		out, err = d.idx.RankText(q, text, k, now)
		return err
	})
	return out, err
}

// WriterRefs returns the Refs of the records of each of writers that q
// matches, from the same indexes; see driver.TextRanker.
func (d *Driver) WriterRefs(ctx context.Context, q driver.Query, writers []memory.Identity) (out [][]driver.Ref, err error) {
	err = d.withTexts(ctx, driver.CheckWriterRefs(q, writers), func(now int64) error {
		out = d.idx.WriterRefs(q, writers, now)
		return nil
	})
	return out, err
}

// withTexts runs fn with the clock's time, under the driver's lock held
// shared and the text indexes on (building them the first time), once
// check, the call's argument check, has passed and ctx is live.
func (d *Driver) withTexts(ctx context.Context, check error, fn func(now int64) error) error {
	now, err := driver.Admit(ctx, check, d.clock)
	if err != nil {
		return err
	}
	d.mu.RLock()
	if !d.closed && !d.idx.TextsOn() {
		d.mu.RUnlock()
		d.mu.Lock()
		if !d.closed {
			d.idx.StartTexts()
		}
		d.mu.Unlock()
		d.mu.RLock()
	}
	defer d.mu.RUnlock()
	if d.closed {
		return memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	return fn(now)
}
