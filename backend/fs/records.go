package fs

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// Put stores recs all or nothing, as one frame; see backend.Driver.
func (d *Driver) Put(ctx context.Context, recs []memory.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := backend.CheckPut(recs); err != nil {
		return err
	}
	if len(recs) == 0 {
		d.mu.RLock()
		defer d.mu.RUnlock()
		if d.closed {
			return errClosed()
		}
		return nil
	}
	return d.write(ctx, func(x *index) error {
		dims, err := backend.BatchDims(recs, x.dims)
		if err != nil {
			return err
		}
		// Decide every record's version before writing anything. An id
		// repeated in the batch counts each time and its last record wins.
		versions := make([]int64, len(recs))
		last := make(map[idKey]int, len(recs))
		for i, r := range recs {
			k := idKey{r.Identity.Tenant, r.ID}
			owner, version := r.Identity, int64(1)
			if j, dup := last[k]; dup {
				owner, version = recs[j].Identity, versions[j]+1
			} else if e := x.byID[k]; e != nil {
				owner, version = e.w.id, e.version+1
			}
			if owner != r.Identity {
				return backend.HeldByAnother(r.ID)
			}
			versions[i] = version
			last[k] = i
		}
		enc := newEncoder(opPut, len(last))
		entries := make([]*entry, 0, len(last))
		writers := make([]memory.Identity, 0, len(last))
		for i, r := range recs {
			if last[idKey{r.Identity.Tenant, r.ID}] != i {
				continue
			}
			size := enc.record(r, versions[i])
			entries = append(entries, newEntry(r, versions[i], size))
			writers = append(writers, r.Identity)
		}
		if err := d.appendFrame(enc.frame()); err != nil {
			return err
		}
		x.dims = dims
		for i, e := range entries {
			x.put(e, writers[i])
		}
		return nil
	})
}

// Swap stores rec if the live record under its id has version expect (0:
// none), as Put does; see backend.Swapper.
func (d *Driver) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := backend.CheckSwap(rec, expect); err != nil {
		return 0, err
	}
	now, err := d.clock.Nanos()
	if err != nil {
		return 0, err
	}
	var version int64
	err = d.write(ctx, func(x *index) error {
		dims, err := backend.BatchDims([]memory.Record{rec}, x.dims)
		if err != nil {
			return err
		}
		var stored, current int64
		if old := x.byID[idKey{rec.Identity.Tenant, rec.ID}]; old != nil {
			if old.w.id != rec.Identity {
				return backend.HeldByAnother(rec.ID)
			}
			stored = old.version
			if !old.expired(now) {
				current = old.version
			}
		}
		if current != expect {
			return backend.VersionConflict(rec.ID, expect, current)
		}
		version = stored + 1
		enc := newEncoder(opPut, 1)
		size := enc.record(rec, version)
		if err := d.appendFrame(enc.frame()); err != nil {
			return err
		}
		x.dims = dims
		x.put(newEntry(rec, version, size), rec.Identity)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return version, nil
}

// List returns the live records matching q, newest first; see
// backend.Driver.
func (d *Driver) List(ctx context.Context, q backend.Query) ([]memory.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := backend.CheckQuery(q); err != nil {
		return nil, err
	}
	now, err := d.clock.Nanos()
	if err != nil {
		return nil, err
	}
	var out []memory.Record
	err = d.read(ctx, func(x *index) error {
		found := x.newest(q, now)
		out = make([]memory.Record, len(found))
		for i, e := range found {
			out[i] = e.record()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delete removes every record matching q, expired or not, as one frame of
// tombstones, and reports how many it removed; see backend.Driver.
func (d *Driver) Delete(ctx context.Context, q backend.Query) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := backend.CheckQuery(q); err != nil {
		return 0, err
	}
	return d.remove(ctx, func(x *index) []*entry { return x.matching(&q) })
}

// Sweep deletes every record that has expired at the driver's clock and
// reports how many it removed.
func (d *Driver) Sweep(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	now, err := d.clock.Nanos()
	if err != nil {
		return 0, err
	}
	return d.remove(ctx, func(x *index) []*entry {
		var out []*entry
		for _, e := range x.byID {
			if e.expired(now) {
				out = append(out, e)
			}
		}
		return out
	})
}

// remove deletes the entries doomed picks, as one frame of tombstones.
func (d *Driver) remove(ctx context.Context, doomed func(x *index) []*entry) (int64, error) {
	var n int64
	err := d.write(ctx, func(x *index) error {
		gone := doomed(x)
		if len(gone) == 0 {
			return nil
		}
		enc := newEncoder(opDelete, len(gone))
		for _, e := range gone {
			enc.str(e.w.id.Tenant)
			enc.str(e.id)
		}
		if err := d.appendFrame(enc.frame()); err != nil {
			return err
		}
		for _, e := range gone {
			x.remove(e)
		}
		n = int64(len(gone))
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
