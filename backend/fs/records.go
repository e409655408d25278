package fs

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Put stores recs all or nothing, as one frame; see driver.Driver.
func (d *Driver) Put(ctx context.Context, recs []memory.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := driver.CheckPut(recs); err != nil {
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
	return d.store(ctx, recs, func(x *index) ([]int64, error) { return x.recs.Versions(recs) })
}

// Swap stores rec if the live record under its id has version expect (0:
// none), as Put does; see driver.Swapper. Expiry is judged by the clock
// once the write lock is held, after the writes of other processes.
func (d *Driver) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	if err := driver.CheckSwap(rec, expect); err != nil {
		return 0, err
	}
	var version int64
	err := d.store(ctx, []memory.Record{rec}, func(x *index) ([]int64, error) {
		now, err := d.clock.Nanos()
		if err != nil {
			return nil, err
		}
		version, err = x.recs.SwapVersion(rec, expect, now)
		return []int64{version}, err
	})
	if err != nil {
		return 0, err
	}
	return version, nil
}

// store writes recs as one frame at the versions decide returns for them,
// 0 for a record not to store (a later one of the batch replaces it).
// decide runs with the index caught up under the write lock, before
// anything is written; its error leaves the store unchanged.
func (d *Driver) store(ctx context.Context, recs []memory.Record, decide func(x *index) ([]int64, error)) error {
	return d.write(ctx, func(x *index) error {
		dims, err := driver.BatchDims(recs, x.dims)
		if err != nil {
			return err
		}
		versions, err := decide(x)
		if err != nil {
			return err
		}
		stored := 0
		for _, v := range versions {
			if v != 0 {
				stored++
			}
		}
		enc := newEncoder(opPut, stored)
		entries := make([]*entry, 0, stored)
		writers := make([]memory.Identity, 0, stored)
		for i, r := range recs {
			if versions[i] == 0 {
				continue
			}
			e := x.recs.NewEntry(r, versions[i])
			e.Extra.size = int64(enc.record(r, versions[i]))
			entries = append(entries, e)
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

// List returns the live records matching q, newest first; see
// driver.Driver.
func (d *Driver) List(ctx context.Context, q driver.Query) ([]memory.Record, error) {
	now, err := driver.Admit(ctx, driver.CheckQuery(q), d.clock)
	if err != nil {
		return nil, err
	}
	var out []memory.Record
	err = d.read(ctx, func(x *index) error {
		out = x.recs.List(q, now)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delete removes every record matching q, expired or not, as one frame of
// tombstones, and reports how many it removed; see driver.Driver.
func (d *Driver) Delete(ctx context.Context, q driver.Query) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := driver.CheckQuery(q); err != nil {
		return 0, err
	}
	return d.remove(ctx, func(x *index) []*entry { return x.recs.Matching(q) })
}

// Sweep deletes every record that has expired at the driver's clock and
// reports how many it removed.
func (d *Driver) Sweep(ctx context.Context) (int64, error) {
	now, err := driver.Admit(ctx, nil, d.clock)
	if err != nil {
		return 0, err
	}
	return d.remove(ctx, func(x *index) []*entry { return x.recs.Expired(now) })
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
			enc.str(e.Writer().Identity.Tenant)
			enc.str(e.ID)
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
