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
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/internal/vecindex"
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
	byID   idIndex
	index  map[indexKey]*postings
	idents map[memory.Identity]*writer
	last   *writer       // the writer of the last record put, a cache
	first  map[idKey]int // scratch for Put: first index of each tenant's id in a batch
	dims   int           // the dimension of stored vectors; 0 until the first
	vecs   vectorRefs    // the entries with vectors, by vecindex.Ref
	work   workState     // the work queues; see claim.go
}

var (
	_ backend.Driver  = (*Driver)(nil)
	_ backend.Sweeper = (*Driver)(nil)
	_ backend.Swapper = (*Driver)(nil)
)

// entry is one stored record in compact form: its identity is its
// writer's and its times are unix nanoseconds, so an entry holds few
// pointers for the garbage collector to trace. record rebuilds the Record.
type entry struct {
	id       string
	kind     memory.Kind
	label    string
	key      string
	content  string
	metadata map[string]string
	created  int64 // unix nanoseconds
	expires  int64 // unix nanoseconds; 0 means never
	tokens   int
	version  int64
	vector   []float32    // a copy of the record's; nil when none
	ref      vecindex.Ref // the row of vector in writer.vectors
	writer   *writer
	sameHash *entry // the next entry whose id hashes alike; see idIndex
	dead     bool
}

// newEntry returns r's fields in compact form, at the given version.
func newEntry(r memory.Record, w *writer, version int64) *entry {
	e := &entry{id: r.ID, kind: r.Kind, label: r.Label, key: r.Key, content: r.Content,
		metadata: cloneMetadata(r.Metadata), created: r.Created.UnixNano(), tokens: r.Tokens,
		version: version, vector: slices.Clone(r.Vector), writer: w}
	if !r.Expires.IsZero() {
		e.expires = r.Expires.UnixNano()
	}
	return e
}

// record returns the stored Record, in UTC, with its own metadata map.
func (e *entry) record() memory.Record {
	r := memory.Record{ID: e.id, Kind: e.kind, Identity: e.writer.id, Label: e.label, Key: e.key, Content: e.content,
		Metadata: cloneMetadata(e.metadata), Created: time.Unix(0, e.created).UTC(), Tokens: e.tokens,
		Version: e.version, Vector: slices.Clone(e.vector)}
	if e.expires != 0 {
		r.Expires = time.Unix(0, e.expires).UTC()
	}
	return r
}

// expired reports whether e has expired at now (unix nanoseconds).
func (e *entry) expired(now int64) bool { return e.expires != 0 && now >= e.expires }

// matchesRest reports whether e passes q's kinds, key and ids; the
// identity filter is decided per writer by matcher.
func (e *entry) matchesRest(q *backend.Query) bool {
	if q.Key != "" && e.key != q.Key {
		return false
	}
	if len(q.Kinds) > 0 && !slices.Contains(q.Kinds, e.kind) {
		return false
	}
	return len(q.IDs) == 0 || slices.Contains(q.IDs, e.id)
}

// writer is one distinct identity, shared by all of its records: their
// identity strings are stored once, their posting lists are found once,
// and a read checks the filter once per writer rather than per record.
type writer struct {
	id      memory.Identity
	lists   []*postings   // the tenant's list, then one per set indexed field
	vectors *vecindex.Set // the vectors of the writer's records; nil before the first
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
	// writers are the writers whose records the list holds, for searches
	// that go writer by writer.
	writers []*writer
	// tail is the List-order key of the newest entry ever inserted, so the
	// common insert — a record newer than all others — is an append
	// without touching any entry.
	tailNanos int64
	tailID    string
}

var indexedFields = []memory.Field{memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession}

// New returns an empty driver.
func New(opt Options) *Driver {
	return &Driver{clock: opt.Clock, byID: newIDIndex(), index: map[indexKey]*postings{}, idents: map[memory.Identity]*writer{}, first: map[idKey]int{}}
}

// writerOf returns the shared writer of id, creating it and its posting
// lists on first sight. Posting lists are never removed from the index, so
// a writer's lists stay the index's. The caller holds d.mu for writing.
func (d *Driver) writerOf(id memory.Identity) *writer {
	if w := d.idents[id]; w != nil {
		return w
	}
	w := &writer{id: id}
	keys := []indexKey{{field: memory.FieldTenant, tenant: id.Tenant}}
	for _, f := range indexedFields {
		if v := id.Get(f); v != "" {
			keys = append(keys, indexKey{field: f, tenant: id.Tenant, value: v})
		}
	}
	for _, k := range keys {
		p := d.index[k]
		if p == nil {
			p = &postings{}
			d.index[k] = p
		}
		w.lists = append(w.lists, p)
		p.writers = append(p.writers, w)
	}
	d.idents[id] = w
	return w
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
	dims, err := backend.BatchDims(recs, d.dims)
	if err != nil {
		return err
	}
	// Check every record before changing anything: the batch is all or
	// nothing. olds[i] is the stored record recs[i] replaces; first[id] is
	// the index of id's first occurrence in the batch.
	olds := make([]*entry, len(recs))
	if len(recs) > 1 {
		defer clear(d.first) // runs before the deferred unlock
	}
	for i, r := range recs {
		owner := r.Identity
		k := idKey{r.Identity.Tenant, r.ID}
		j, dup := d.first[k]
		if dup {
			owner = recs[j].Identity
		} else if e := d.byID.get(k.tenant, k.id); e != nil {
			owner, olds[i] = e.writer.id, e
		}
		if owner != r.Identity {
			return backend.HeldByAnother(r.ID)
		}
		if len(recs) > 1 && !dup {
			d.first[k] = i
		}
	}
	d.dims = dims
	for i, r := range recs {
		old := olds[i]
		if j := d.first[idKey{r.Identity.Tenant, r.ID}]; j != i && len(recs) > 1 {
			old = d.byID.get(r.Identity.Tenant, r.ID) // a duplicate replaces the batch's earlier record
		}
		d.store(r, old)
	}
	return nil
}

// store adds r, replacing old (nil when r's id is new) at old's version
// plus one. The caller holds d.mu for writing and has checked r.
func (d *Driver) store(r memory.Record, old *entry) int64 {
	version := int64(1)
	if old != nil {
		version = old.version + 1
		d.remove(old)
	}
	w := d.last
	if w == nil || w.id != r.Identity {
		w = d.writerOf(r.Identity)
		d.last = w
	}
	e := newEntry(r, w, version)
	if e.vector != nil {
		d.vecs.add(e)
	}
	d.byID.add(e)
	for _, p := range w.lists {
		p.insert(e)
	}
	return version
}

// Swap stores rec if the live record under its id has version expect (0:
// none); see backend.Swapper.
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
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	dims, err := backend.BatchDims([]memory.Record{rec}, d.dims)
	if err != nil {
		return 0, err
	}
	old := d.byID.get(rec.Identity.Tenant, rec.ID)
	var current int64
	if old != nil {
		if old.writer.id != rec.Identity {
			return 0, backend.HeldByAnother(rec.ID)
		}
		if !old.expired(now) {
			current = old.version
		}
	}
	if current != expect {
		return 0, backend.VersionConflict(rec.ID, expect, current)
	}
	d.dims = dims
	return d.store(rec, old), nil
}

func (p *postings) insert(e *entry) {
	if len(p.list) == 0 || e.created > p.tailNanos || e.created == p.tailNanos && e.id > p.tailID {
		p.list = append(p.list, e)
		p.tailNanos, p.tailID = e.created, e.id
		return
	}
	i := sort.Search(len(p.list), func(i int) bool { return newer(p.list[i], e) })
	p.list = slices.Insert(p.list, i, e)
}

// newer reports whether a comes before b in List order.
func newer(a, b *entry) bool {
	if a.created != b.created {
		return a.created > b.created
	}
	return a.id > b.id
}

// remove marks e dead, drops it from byID and compacts posting lists in
// which dead entries have become the majority. The caller holds d.mu.
func (d *Driver) remove(e *entry) {
	e.dead = true
	d.byID.remove(e)
	if e.vector != nil {
		d.vecs.remove(e)
	}
	for _, p := range e.writer.lists {
		p.dead++
		if p.dead*2 > len(p.list) {
			p.list = slices.DeleteFunc(p.list, func(x *entry) bool { return x.dead })
			p.dead = 0
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
		list := d.byIDs(q.Filter.Identity.Tenant, q.IDs)
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

// byIDs returns the entries tenant holds under the given ids, oldest
// first (posting order). The caller holds d.mu.
func (d *Driver) byIDs(tenant string, ids []string) []*entry {
	var out []*entry
	for _, id := range ids {
		if e := d.byID.get(tenant, id); e != nil {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *entry) int {
		switch {
		case a == b:
			return 0
		case newer(a, b):
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
	now, err := d.clock.Nanos()
	if err != nil {
		return nil, err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	list := d.candidates(&q)
	var out []memory.Record
	if q.Limit > 0 {
		out = make([]memory.Record, 0, min(q.Limit, len(list)))
	}
	m := newMatcher(q)
	for i := len(list) - 1; i >= 0; i-- {
		e := list[i]
		if e.dead || e.expired(now) || !m.matches(e) {
			continue
		}
		out = append(out, e.record())
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
	list := d.candidates(&q)
	m := newMatcher(q)
	for _, e := range list {
		if !e.dead && m.matches(e) {
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
	now, err := d.clock.Nanos()
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	var doomed []*entry
	d.byID.each(func(e *entry) {
		if e.expired(now) {
			doomed = append(doomed, e)
		}
	})
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
	d.byID = idIndex{}
	d.index = nil
	d.idents = nil
	d.vecs = vectorRefs{}
	d.work.mu.Lock()
	d.work.queues = nil
	d.work.mu.Unlock()
	return nil
}

// matcher applies a query to entries, deciding the identity filter once
// per writer: consecutive entries of a posting list mostly share one.
type matcher struct {
	filter memory.Filter
	rest   backend.Query // kinds, key and ids, checked per entry
	last   *writer
	ok     bool
}

func newMatcher(q backend.Query) *matcher {
	return &matcher{filter: q.Filter, rest: q}
}

func (m *matcher) matches(e *entry) bool {
	if e.writer != m.last {
		m.last, m.ok = e.writer, m.filter.Matches(e.writer.id)
	}
	return m.ok && e.matchesRest(&m.rest)
}

func cloneMetadata(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}
