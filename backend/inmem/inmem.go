// Package inmem is the in-memory storage driver: the reference behaviour of
// the driver contract and the default in unit tests. Records live in the
// process and are gone when it exits.
//
// Every identity field has a posting list per value, kept in List order, so
// a read touches only the records of the most selective field in its
// filter, not the whole store.
package inmem

import (
	"context"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// Options configure a Driver. The zero value is the documented default.
type Options struct {
	// Clock decides expiry; nil means time.Now.
	Clock backend.Clock
}

// Driver is an in-memory backend.Driver and backend.Sweeper. It is safe for
// concurrent use.
type Driver struct {
	clock backend.Clock

	mu     sync.RWMutex
	closed bool
	byID   map[string]*entry
	index  map[indexKey]*postings
}

var (
	_ backend.Driver  = (*Driver)(nil)
	_ backend.Sweeper = (*Driver)(nil)
)

type entry struct {
	rec  memory.Record
	dead bool
}

// indexKey names one posting list: the records whose field equals value
// within tenant. The tenant's own list has field FieldTenant and no value.
type indexKey struct {
	field  memory.Field
	tenant string
	value  string
}

// postings holds entries oldest first (the reverse of List order). Deleted
// entries are marked dead and compacted away once they are the majority.
type postings struct {
	list []*entry
	dead int
}

var indexedFields = []memory.Field{memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession}

// New returns an empty driver.
func New(opt Options) *Driver {
	return &Driver{clock: opt.Clock, byID: map[string]*entry{}, index: map[indexKey]*postings{}}
}

func keysOf(id memory.Identity) []indexKey {
	keys := []indexKey{{field: memory.FieldTenant, tenant: id.Tenant}}
	for _, f := range indexedFields {
		if v := id.Get(f); v != "" {
			keys = append(keys, indexKey{field: f, tenant: id.Tenant, value: v})
		}
	}
	return keys
}

// Put stores recs all or nothing; see backend.Driver.
func (d *Driver) Put(ctx context.Context, recs []memory.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := backend.CheckPut(recs); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	pending := make(map[string]memory.Identity, len(recs))
	for _, r := range recs {
		owner, ok := pending[r.ID]
		if !ok {
			if e := d.byID[r.ID]; e != nil {
				owner, ok = e.rec.Identity, true
			}
		}
		if ok && owner != r.Identity {
			return memory.Errorf(memory.ErrConflict, "record %q exists with another identity", r.ID)
		}
		pending[r.ID] = r.Identity
	}
	for _, r := range recs {
		if old := d.byID[r.ID]; old != nil {
			d.remove(old)
		}
		r.Metadata = cloneMetadata(r.Metadata)
		e := &entry{rec: r}
		d.byID[r.ID] = e
		for _, k := range keysOf(r.Identity) {
			p := d.index[k]
			if p == nil {
				p = &postings{}
				d.index[k] = p
			}
			p.insert(e)
		}
	}
	return nil
}

func (p *postings) insert(e *entry) {
	n := len(p.list)
	if n == 0 || backend.Newer(e.rec, p.list[n-1].rec) {
		p.list = append(p.list, e)
		return
	}
	i := sort.Search(n, func(i int) bool { return backend.Newer(p.list[i].rec, e.rec) })
	p.list = slices.Insert(p.list, i, e)
}

// remove marks e dead, drops it from byID and compacts posting lists in
// which dead entries have become the majority. The caller holds d.mu.
func (d *Driver) remove(e *entry) {
	e.dead = true
	delete(d.byID, e.rec.ID)
	for _, k := range keysOf(e.rec.Identity) {
		p := d.index[k]
		p.dead++
		if p.dead*2 > len(p.list) {
			p.list = slices.DeleteFunc(p.list, func(x *entry) bool { return x.dead })
			p.dead = 0
			if len(p.list) == 0 {
				delete(d.index, k)
			}
		}
	}
}

// candidates returns the smallest posting list that holds every record q
// can match, or nil when no record can match. The caller holds d.mu.
//
// When q names ids, the candidates are exactly those records, so it clears
// q.IDs for the caller's per-record match.
func (d *Driver) candidates(q *backend.Query) []*entry {
	if len(q.IDs) > 0 {
		list := d.byIDs(q.IDs)
		q.IDs = nil
		return list
	}
	id := q.Filter.Identity
	best := d.index[indexKey{field: memory.FieldTenant, tenant: id.Tenant}]
	if best == nil {
		return nil
	}
	for _, f := range indexedFields {
		if !q.Filter.Match.Has(f) || id.Get(f) == "" {
			continue
		}
		p := d.index[indexKey{field: f, tenant: id.Tenant, value: id.Get(f)}]
		if p == nil {
			return nil
		}
		if len(p.list) < len(best.list) {
			best = p
		}
	}
	return best.list
}

// byIDs returns the entries with the given ids, oldest first (posting
// order). The caller holds d.mu.
func (d *Driver) byIDs(ids []string) []*entry {
	var out []*entry
	for _, id := range ids {
		if e := d.byID[id]; e != nil {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *entry) int {
		switch {
		case a == b:
			return 0
		case backend.Newer(a.rec, b.rec):
			return 1
		}
		return -1
	})
	return slices.Compact(out)
}

// List returns the live records matching q, newest first; see backend.Driver.
func (d *Driver) List(ctx context.Context, q backend.Query) ([]memory.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := backend.CheckQuery(q); err != nil {
		return nil, err
	}
	now := d.clock.Now()
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	list := d.candidates(&q)
	var out []memory.Record
	for i := len(list) - 1; i >= 0; i-- {
		e := list[i]
		if e.dead || e.rec.Expired(now) || !q.Matches(e.rec) {
			continue
		}
		r := e.rec
		r.Metadata = cloneMetadata(r.Metadata)
		out = append(out, r)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

// Delete removes every record matching q and reports the count; see
// backend.Driver.
func (d *Driver) Delete(ctx context.Context, q backend.Query) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := backend.CheckQuery(q); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	var doomed []*entry
	for _, e := range d.candidates(&q) {
		if !e.dead && q.Matches(e.rec) {
			doomed = append(doomed, e)
		}
	}
	for _, e := range doomed {
		d.remove(e)
	}
	return int64(len(doomed)), nil
}

// Sweep deletes every expired record and reports the count.
func (d *Driver) Sweep(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	now := d.clock.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	var doomed []*entry
	for _, e := range d.byID {
		if e.rec.Expired(now) {
			doomed = append(doomed, e)
		}
	}
	for _, e := range doomed {
		d.remove(e)
	}
	return int64(len(doomed)), nil
}

// Close discards every record. It is idempotent.
func (d *Driver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.byID = nil
	d.index = nil
	return nil
}

func cloneMetadata(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}
