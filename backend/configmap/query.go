package configmap

import (
	"context"
	"maps"
	"slices"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// List returns the records matching q that have not expired, newest
// first. A query whose filter matches on agent reads that agent's one
// ConfigMap (one Get); any other query lists every ConfigMap the driver
// keeps in the namespace (List calls by label), so its cost grows with
// all the agents' memory together.
func (d *Driver) List(ctx context.Context, q driver.Query) ([]memory.Record, error) {
	now, objs, err := d.read(ctx, driver.CheckQuery(q), q.Filter)
	if err != nil {
		return nil, err
	}
	var out []memory.Record
	for _, o := range objs {
		for _, r := range o.recs {
			if q.Matches(r) && (r.Expires.IsZero() || r.Expires.UnixNano() > now) {
				out = append(out, detach(r))
			}
		}
	}
	sortNewest(out)
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// read is the start of a read: the driver open and ctx live, then the
// arguments' check (bad), then the clock's reading (unix nanoseconds) and
// the ConfigMaps that may hold records f matches (scope).
func (d *Driver) read(ctx context.Context, bad error, f memory.Filter) (int64, []*object, error) {
	if err := d.ready(ctx); err != nil {
		return 0, nil, err
	}
	if bad != nil {
		return 0, nil, bad
	}
	now, err := d.clock.Nanos()
	if err != nil {
		return 0, nil, err
	}
	objs, err := d.scope(ctx, f)
	return now, objs, err
}

// Delete removes every record matching q, expired or not, and reports how
// many it removed. It reads the ConfigMaps as List does, then rewrites
// each one that holds a match (deleting it when no entry and no foreign
// key is left), each with its own bounded optimistic-concurrency retries.
// The ConfigMaps are updated one after another, not atomically together.
func (d *Driver) Delete(ctx context.Context, q driver.Query) (int64, error) {
	if err := d.ready(ctx); err != nil {
		return 0, err
	}
	if err := driver.CheckQuery(q); err != nil {
		return 0, err
	}
	objs, err := d.scope(ctx, q.Filter)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, o := range objs {
		if o.cm == nil || !o.holds(q) {
			continue
		}
		n, err := d.deleteIn(ctx, o, q)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// detach returns r with its own copies of the maps and slices it shares
// with the driver's cache, so the caller may change them.
func detach(r memory.Record) memory.Record {
	r.Metadata = maps.Clone(r.Metadata)
	r.Vector = slices.Clone(r.Vector)
	return r
}

// holds reports whether o has a record matching q.
func (o *object) holds(q driver.Query) bool {
	for _, r := range o.recs {
		if q.Matches(r) {
			return true
		}
	}
	return false
}

// deleteIn removes the records matching q from one ConfigMap, first as o
// holds it and, after a lost race, as a fresh read shows it.
func (d *Driver) deleteIn(ctx context.Context, o *object, q driver.Query) (int64, error) {
	var removed int64
	first := true
	err := d.retry(ctx, "deleting from ConfigMap "+d.ns+"/"+o.name, func() error {
		if !first {
			fresh, err := d.load(ctx, o.name)
			if err != nil {
				return err
			}
			o = fresh
		}
		first = false
		removed = 0
		for id, r := range o.recs {
			if q.Matches(r) {
				delete(o.recs, id)
				removed++
			}
		}
		if removed == 0 || o.cm == nil {
			removed = 0
			return nil
		}
		return d.store(ctx, o)
	})
	if err != nil {
		return 0, err
	}
	return removed, nil
}

// sortNewest sorts recs into List order: Created descending, then ID
// descending.
func sortNewest(recs []memory.Record) {
	slices.SortFunc(recs, func(a, b memory.Record) int {
		switch {
		case driver.Newer(a, b):
			return -1
		case driver.Newer(b, a):
			return 1
		}
		return 0
	})
}
