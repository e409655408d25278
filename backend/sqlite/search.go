//go:build cgo

package sqlite

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

var _ driver.VectorRanker = (*Driver)(nil)

// Search returns the k live records matching q nearest to vec by cosine
// similarity; see driver.VectorSearcher. The search is exact, over an
// in-memory copy of the store's vectors (vectorCache): the first search
// loads it, from the stored snapshot of it when that is current (see
// Options.NoVectorSnapshots), else from the records, and a search after
// another process changed vectors loads it again. The
// vectors of the writers q's filter matches are scored, with kinds, key,
// ids and expiry applied to each candidate inside the search; the k
// winners are then read from the file. A winner deleted by another
// process in between is left out.
func (d *Driver) Search(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.Match, error) {
	if err := d.enter(ctx, driver.CheckSearch(q, vec, k)); err != nil {
		return nil, err
	}
	defer d.gate.Leave() // the winners are read inside the gate too
	ranked, err := d.rankVector(ctx, q, vec, k)
	if err != nil || len(ranked) == 0 {
		return nil, err
	}
	found := make([]driver.Match, len(ranked))
	for i, m := range ranked {
		found[i] = driver.Match{Record: memory.Record{ID: m.Ref.ID}, Score: m.Score}
	}
	return d.fetchMatches(ctx, q.Filter.Identity.Tenant, found)
}

// RankVector is Search by reference (driver.VectorRanker): the same
// search of the in-memory copy of the vectors, which answers with each
// winner's driver.Ref from the copy, reading no record. A winner deleted
// by another process since the copy was current is still among them.
func (d *Driver) RankVector(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.RefMatch, error) {
	if err := d.enter(ctx, driver.CheckSearch(q, vec, k)); err != nil {
		return nil, err
	}
	defer d.gate.Leave()
	return d.rankVector(ctx, q, vec, k)
}

// rankVector is RankVector once the gate admitted the call.
func (d *Driver) rankVector(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.RefMatch, error) {
	now, err := d.clock.Nanos()
	if err != nil {
		return nil, err
	}

	dims := int(d.dims.Load())
	if dims == 0 {
		if dims, err = sq.StoredDims(ctx, d.r); err != nil {
			return nil, fail(ctx, err, "sqlite: read the vector dimension")
		}
		if dims == 0 {
			return nil, nil
		}
		d.dims.Store(int64(dims))
	}
	if len(vec) != dims {
		return nil, driver.DimensionMismatch(len(vec), dims)
	}

	c := &d.vc
	if err := d.currentCache(ctx); err != nil {
		return nil, err
	}
	found, err := c.vecs.Search(q, vec, k, now)
	c.mu.RUnlock()
	d.maybeVectorSnapshot()
	return found, err
}

// currentCache returns with d.vc held shared and current: loaded, at the
// stored epoch, or loaded during this call from a snapshot at least as
// new as the epoch the call began with. It loads the cache, under the
// exclusive lock, when it is not current; it does not load again when
// another process writes meanwhile, so writers elsewhere cannot keep a
// search waiting.
func (d *Driver) currentCache(ctx context.Context) error {
	c := &d.vc
	c.mu.RLock()
	epoch, err := storedEpoch(ctx, d.r)
	if err != nil {
		c.mu.RUnlock()
		return fail(ctx, err, "sqlite: read the vector epoch")
	}
	if c.loaded && c.epoch == epoch {
		return nil
	}
	c.mu.RUnlock()
	c.mu.Lock()
	if !c.loaded || c.epoch < epoch {
		if err := c.load(ctx, d.r, d.vectorSnapshots(), d.log); err != nil {
			c.mu.Unlock()
			return fail(ctx, err, "sqlite: load vectors")
		}
		d.log.Debug("sqlite: loaded vectors for search", "epoch", c.epoch, "vectors", c.vecs.Len())
	}
	c.mu.Unlock()
	c.mu.RLock()
	if !c.loaded {
		// A write that could not keep the cache current reset it in
		// between; load it again.
		c.mu.RUnlock()
		return d.currentCache(ctx)
	}
	return nil
}

// fetchMatches reads the records tenant holds under the ids of found and
// fills them in; see sqldriver.SQL.FetchMatches.
func (d *Driver) fetchMatches(ctx context.Context, tenant string, found []driver.Match) ([]driver.Match, error) {
	return sq.FetchMatches(ctx, d.r, selectColumns, tenant, found)
}
