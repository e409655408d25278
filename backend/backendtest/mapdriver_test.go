package backendtest

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// mapDriver is a small, correct driver kept here so the suite can be
// tested on its own: the whole suite must pass against it, and each
// faulty wrapper in suite_selftest_test.go must make a check fail.
type mapDriver struct {
	clock  backend.Clock
	mu     sync.RWMutex
	recs   map[string]memory.Record
	closed bool
}

var (
	_ backend.Driver  = (*mapDriver)(nil)
	_ backend.Sweeper = (*mapDriver)(nil)
)

func newMapDriver(clock backend.Clock) *mapDriver {
	return &mapDriver{clock: clock, recs: make(map[string]memory.Record)}
}

func clone(r memory.Record) memory.Record {
	if r.Metadata != nil {
		r.Metadata = maps.Clone(r.Metadata)
	}
	return r
}

func (d *mapDriver) Put(ctx context.Context, recs []memory.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := backend.CheckPut(recs); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return memory.Errorf(memory.ErrClosed, "driver closed")
	}
	for _, r := range recs {
		if old, ok := d.recs[r.ID]; ok && old.Identity != r.Identity {
			return memory.Errorf(memory.ErrConflict, "id %q belongs to another identity", r.ID)
		}
	}
	for _, r := range recs {
		d.recs[r.ID] = clone(r)
	}
	return nil
}

func (d *mapDriver) List(ctx context.Context, q backend.Query) ([]memory.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := backend.CheckQuery(q); err != nil {
		return nil, err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, memory.Errorf(memory.ErrClosed, "driver closed")
	}
	now := d.clock.Now()
	var out []memory.Record
	for _, r := range d.recs {
		if q.Matches(r) && !r.Expired(now) {
			out = append(out, clone(r))
		}
	}
	slices.SortFunc(out, func(a, b memory.Record) int {
		if backend.Newer(a, b) {
			return -1
		}
		if backend.Newer(b, a) {
			return 1
		}
		return 0
	})
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

func (d *mapDriver) Delete(ctx context.Context, q backend.Query) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := backend.CheckQuery(q); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, memory.Errorf(memory.ErrClosed, "driver closed")
	}
	var n int64
	for id, r := range d.recs {
		if q.Matches(r) {
			delete(d.recs, id)
			n++
		}
	}
	return n, nil
}

func (d *mapDriver) Sweep(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, memory.Errorf(memory.ErrClosed, "driver closed")
	}
	now := d.clock.Now()
	var n int64
	for id, r := range d.recs {
		if r.Expired(now) {
			delete(d.recs, id)
			n++
		}
	}
	return n, nil
}

func (d *mapDriver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return nil
}
