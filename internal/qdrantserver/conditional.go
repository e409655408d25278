package qdrantserver

import "github.com/qdrant/go-client/qdrant"

// conditionalKeep returns the points of an upsert batch that its
// update_filter and update_mode let through, judged against the collection
// before the batch is applied, as Qdrant's retain_conditional_upsert_points
// (lib/shard/src/update/points/upsert.rs) does:
//
//   - upsert (the default): an existing point is replaced only if it passes
//     the filter; a new point is inserted regardless of the filter;
//   - insert_only: only new points are inserted; the filter is not read;
//   - update_only: only existing points passing the filter are replaced.
//
// With update_mode insert_only or update_only and no filter, Qdrant uses an
// empty filter, which every point passes. Points left out are skipped
// silently: the request still succeeds.
func (c *collection) conditionalKeep(batch []*point, filter *qdrant.Filter, mode qdrant.UpdateMode) []*point {
	if filter == nil && mode == qdrant.UpdateMode_Upsert {
		return batch
	}
	out := batch[:0:0]
	for _, p := range batch {
		old, exists := c.points[p.id]
		passes := exists && checkFilter(filter, subject{payload: old.payload, p: old})
		keep := false
		switch mode {
		case qdrant.UpdateMode_InsertOnly:
			keep = !exists
		case qdrant.UpdateMode_UpdateOnly:
			keep = passes
		default:
			keep = !exists || passes
		}
		if keep {
			out = append(out, p)
		}
	}
	return out
}
