package backendtest

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// mapDriver is a small, correct driver kept here so the suite can be
// tested on its own: the whole suite must pass against it, and each
// faulty wrapper in suite_selftest_test.go must make a check fail.
type mapDriver struct {
	clock  memory.Clock
	mu     sync.RWMutex
	recs   map[recKey]memory.Record
	dims   int
	closed bool
}

var (
	_ driver.Driver         = (*mapDriver)(nil)
	_ driver.Sweeper        = (*mapDriver)(nil)
	_ driver.Swapper        = (*mapDriver)(nil)
	_ driver.VectorSearcher = (*mapDriver)(nil)
)

// recKey is what a record is stored under: ids are unique per tenant.
type recKey struct{ tenant, id string }

func keyOf(r memory.Record) recKey { return recKey{r.Identity.Tenant, r.ID} }

func newMapDriver(clock memory.Clock) *mapDriver {
	return &mapDriver{clock: clock, recs: make(map[recKey]memory.Record)}
}

func clone(r memory.Record) memory.Record {
	if r.Metadata != nil {
		r.Metadata = maps.Clone(r.Metadata)
	}
	r.Vector = slices.Clone(r.Vector)
	return r
}

func (d *mapDriver) Put(ctx context.Context, recs []memory.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := driver.CheckPut(recs); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return memory.Errorf(memory.ErrClosed, "driver closed")
	}
	dims, err := driver.BatchDims(recs, d.dims)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if old, ok := d.recs[keyOf(r)]; ok && old.Identity != r.Identity {
			return driver.HeldByAnother(r.ID)
		}
	}
	d.dims = dims
	for _, r := range recs {
		d.store(r)
	}
	return nil
}

// store puts r at the stored version plus one. The caller holds d.mu.
func (d *mapDriver) store(r memory.Record) int64 {
	r = clone(r)
	r.Version = d.recs[keyOf(r)].Version + 1
	d.recs[keyOf(r)] = r
	return r.Version
}

func (d *mapDriver) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := driver.CheckSwap(rec, expect); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, memory.Errorf(memory.ErrClosed, "driver closed")
	}
	dims, err := driver.BatchDims([]memory.Record{rec}, d.dims)
	if err != nil {
		return 0, err
	}
	old, ok := d.recs[keyOf(rec)]
	if ok && old.Identity != rec.Identity {
		return 0, driver.HeldByAnother(rec.ID)
	}
	var current int64
	if ok && !old.Expired(d.clock.Now()) {
		current = old.Version
	}
	if current != expect {
		return 0, driver.VersionConflict(rec.ID, expect, current)
	}
	d.dims = dims
	return d.store(rec), nil
}

// Search is brute force, in float64, as the suite's reference is.
func (d *mapDriver) Search(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.Match, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := driver.CheckSearch(q, vec, k); err != nil {
		return nil, err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, memory.Errorf(memory.ErrClosed, "driver closed")
	}
	if d.dims == 0 {
		return nil, nil
	}
	if len(vec) != d.dims {
		return nil, driver.DimensionMismatch(len(vec), d.dims)
	}
	all := make([]memory.Record, 0, len(d.recs))
	for _, r := range d.recs {
		all = append(all, clone(r))
	}
	return bruteForce(all, q, vec, k, d.clock.Now()), nil
}

func (d *mapDriver) List(ctx context.Context, q driver.Query) ([]memory.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := driver.CheckQuery(q); err != nil {
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
		if driver.Newer(a, b) {
			return -1
		}
		if driver.Newer(b, a) {
			return 1
		}
		return 0
	})
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

func (d *mapDriver) Delete(ctx context.Context, q driver.Query) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := driver.CheckQuery(q); err != nil {
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
