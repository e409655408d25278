package fs

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

var _ driver.TextRanker = (*Driver)(nil)

// SearchText returns the k live records matching q whose content best
// matches text; see driver.TextSearcher. It ranks through the identity
// index's per-writer text indexes (recindex), which the first text search
// builds and every change read from the log after it keeps, so a search
// sees what other processes wrote as List does.
func (d *Driver) SearchText(ctx context.Context, q driver.Query, text string, k int) (out []driver.Match, err error) {
	err = d.withTexts(ctx, driver.CheckSearchText(q, text, k), func(x *index, now int64) error {
		out, err = x.recs.SearchText(q, text, k, now)
		return err
	})
	return out, err
}

// RankText is SearchText answering each match's driver.Ref in place of a
// copy of its record; see driver.TextRanker.
func (d *Driver) RankText(ctx context.Context, q driver.Query, text string, k int) (out []driver.RefMatch, err error) {
	err = d.withTexts(ctx, driver.CheckSearchText(q, text, k), func(x *index, now int64) error {
		out, err = x.recs.RankText(q, text, k, now)
		return err
	})
	return out, err
}

// WriterRefs returns the Refs of the records of each of writers that q
// matches, from the same indexes, current as a search is; see
// driver.TextRanker.
func (d *Driver) WriterRefs(ctx context.Context, q driver.Query, writers []memory.Identity) (out [][]driver.Ref, err error) {
	err = d.withTexts(ctx, driver.CheckWriterRefs(q, writers), func(x *index, now int64) error {
		out = x.recs.WriterRefs(q, writers, now)
		return nil
	})
	return out, err
}

// withTexts runs fn on the index, read current from the log, with the
// clock's time and the text indexes on (turning them on the first time),
// once check, the call's argument check, has passed and ctx is live.
func (d *Driver) withTexts(ctx context.Context, check error, fn func(x *index, now int64) error) error {
	now, err := driver.Admit(ctx, check, d.clock)
	if err != nil {
		return err
	}
	for {
		started := true
		err = d.read(ctx, func(x *index) error {
			if started = x.recs.TextsOn(); !started {
				return nil
			}
			return fn(x, now)
		})
		if err != nil || started {
			return err
		}
		d.startTexts()
	}
}

// startTexts turns the identity index's text indexes on.
func (d *Driver) startTexts() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.idx.recs.StartTexts()
	}
}
