// Package inmem is the in-memory storage driver: the reference behaviour of
// the driver contract and the default in unit tests. Records live in the
// process and are gone when it exits.
//
// Records are indexed by identity with internal/recindex, the index it
// shares with the fs driver: a read touches only the records of the most
// selective field in its filter, not the whole store.
package inmem

import (
	"context"
	"sync"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/recindex"
	"github.com/agentmem/memory/internal/vecindex"
)

// Options configure a Driver. The zero value is the documented default.
type Options struct {
	// Clock decides expiry; nil means time.Now.
	Clock memory.Clock
}

// Driver is an in-memory driver.Driver and driver.Sweeper. It is safe for
// concurrent use.
type Driver struct {
	clock memory.Clock

	mu     sync.RWMutex
	closed bool
	idx    *recindex.Index[vecindex.Ref, *vecindex.Set]
	dims   int        // the dimension of stored vectors; 0 until the first
	vecs   vectorRefs // the entries with vectors, by vecindex.Ref
	work   workState  // the work queues; see claim.go
}

var (
	_ driver.Driver  = (*Driver)(nil)
	_ driver.Sweeper = (*Driver)(nil)
	_ driver.Swapper = (*Driver)(nil)
)

// entry is one stored record. Its Extra is the row of its vector in its
// writer's vecindex.Set, when it has a vector; see vectorRefs.
type entry = recindex.Entry[vecindex.Ref, *vecindex.Set]

// New returns an empty driver.
func New(opt Options) *Driver {
	return &Driver{clock: opt.Clock, idx: recindex.New[vecindex.Ref, *vecindex.Set]()}
}

// Put stores recs all or nothing; see driver.Driver.
func (d *Driver) Put(ctx context.Context, recs []memory.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := driver.CheckPut(recs); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	dims, err := driver.BatchDims(recs, d.dims)
	if err != nil {
		return err
	}
	// Check every record before changing anything: the batch is all or
	// nothing.
	versions, err := d.idx.Versions(recs)
	if err != nil {
		return err
	}
	d.dims = dims
	for i, r := range recs {
		if versions[i] != 0 {
			d.store(r, versions[i])
		}
	}
	return nil
}

// store adds r at version, replacing the record its tenant holds under its
// id. The caller holds d.mu for writing and has checked r.
func (d *Driver) store(r memory.Record, version int64) {
	e := d.idx.NewEntry(r, version)
	if old := d.idx.Put(e, r.Identity); old != nil && old.Vector != nil {
		d.vecs.remove(old)
	}
	if e.Vector != nil {
		d.vecs.add(e)
	}
}

// Swap stores rec if the live record under its id has version expect (0:
// none); see driver.Swapper.
func (d *Driver) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	now, err := driver.Admit(ctx, driver.CheckSwap(rec, expect), d.clock)
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	dims, err := driver.BatchDims([]memory.Record{rec}, d.dims)
	if err != nil {
		return 0, err
	}
	version, err := d.idx.SwapVersion(rec, expect, now)
	if err != nil {
		return 0, err
	}
	d.dims = dims
	d.store(rec, version)
	return version, nil
}

// remove removes e and its vector. The caller holds d.mu for writing.
func (d *Driver) remove(e *entry) {
	d.idx.Remove(e)
	if e.Vector != nil {
		d.vecs.remove(e)
	}
}

// List returns the live records matching q, newest first; see driver.Driver.
func (d *Driver) List(ctx context.Context, q driver.Query) ([]memory.Record, error) {
	now, err := driver.Admit(ctx, driver.CheckQuery(q), d.clock)
	if err != nil {
		return nil, err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	return d.idx.List(q, now), nil
}

// Delete removes every record matching q and reports the count; see
// driver.Driver.
func (d *Driver) Delete(ctx context.Context, q driver.Query) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := driver.CheckQuery(q); err != nil {
		return 0, err
	}
	return d.removeAll(func() []*entry { return d.idx.Matching(q) })
}

// Sweep deletes every expired record and reports the count.
func (d *Driver) Sweep(ctx context.Context) (int64, error) {
	now, err := driver.Admit(ctx, nil, d.clock)
	if err != nil {
		return 0, err
	}
	return d.removeAll(func() []*entry { return d.idx.Expired(now) })
}

// removeAll removes the entries doomed returns, under the write lock, and
// reports how many they were.
func (d *Driver) removeAll(doomed func() []*entry) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	es := doomed()
	for _, e := range es {
		d.remove(e)
	}
	return int64(len(es)), nil
}

// Close discards every record. It is idempotent.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.idx = nil
	d.vecs = vectorRefs{}
	d.work.mu.Lock()
	d.work.queues = nil
	d.work.mu.Unlock()
	return nil
}
