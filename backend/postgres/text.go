package postgres

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

var _ driver.TextRanker = (*Driver)(nil)

// SearchText returns the k live records matching q whose content best
// matches text; see driver.TextSearcher. It ranks with the library's
// lexical engine over an in-memory copy of the store's analysed texts,
// as every driver does, so rankings agree across drivers: the first text
// search of a driver loads it, and every search first reads the records
// that any process added, replaced or deleted since, from the change log
// the schema's triggers keep (see textlog.go). The indexes of the writers
// q's filter matches are searched, with kinds, key, ids and expiry
// applied to each candidate inside the search; the k winners are then
// read from the database. A winner deleted by another process in between
// is left out. After a search, the change log is pruned and a snapshot
// of the texts stored in the background when either is due (see
// textprune.go and textsnapshot.go).
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

// currentTexts returns with d.tc held shared and current: holding every
// record as a snapshot taken during this call sees it.
func (d *Driver) currentTexts(ctx context.Context) error {
	c := &d.tc
	c.Mu.RLock()
	var (
		cu   catchUp
		read bool   // cu was read, at gen
		gen  uint64 // c.gen when cu was read
	)
	if c.C != nil {
		from := c.snap.Load()
		var err error
		if cu, err = readChanges(ctx, &d.prepared, *from); err != nil {
			c.Mu.RUnlock()
			return fail(ctx, err, "postgres: read the changed texts")
		}
		if !cu.pruned && len(cu.changes) == 0 {
			c.advance(from, cu.snap)
			return nil
		}
		read, gen = true, c.gen
	}
	c.Mu.RUnlock()
	c.Mu.Lock()
	err := d.refreshTexts(ctx, cu, read && c.gen == gen)
	c.Mu.Unlock()
	if err != nil {
		return err
	}
	c.Mu.RLock()
	return nil
}

// refreshTexts brings d.tc current, held exclusively: with cu when valid
// (read from the cache's snapshot, which no other search has moved on
// since), with a catch-up read now otherwise, or with a load when the
// cache is not loaded or the log was pruned past it.
func (d *Driver) refreshTexts(ctx context.Context, cu catchUp, valid bool) error {
	c := &d.tc
	if c.C != nil && !valid {
		var err error
		if cu, err = readChanges(ctx, &d.prepared, *c.snap.Load()); err != nil {
			return fail(ctx, err, "postgres: read the changed texts")
		}
	}
	if c.C != nil && !cu.pruned {
		c.apply(cu)
		return nil
	}
	// Load from the stored snapshot and catch up from it, unless the log
	// has been pruned past it; then read every record.
	fromSnapshot := true
	for {
		stored, err := c.load(ctx, d.db, fromSnapshot, d.log)
		if err != nil {
			return fail(ctx, err, "postgres: load texts")
		}
		d.log.Debug("postgres: loaded texts for search", "snapshot", *c.snap.Load(), "records", c.C.Len(), "stored", stored)
		if !stored {
			return nil
		}
		if cu, err = readChanges(ctx, &d.prepared, *c.snap.Load()); err != nil {
			return fail(ctx, err, "postgres: read the changed texts")
		}
		if !cu.pruned {
			c.apply(cu)
			return nil
		}
		fromSnapshot = false
	}
}
