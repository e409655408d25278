package fs

import (
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// entry is one stored record as the index holds it: times as unix
// nanoseconds and the identity shared with every record of its writer.
type entry struct {
	id         string
	kind       memory.Kind
	label      string
	key        string
	content    string
	metadata   map[string]string
	created    int64
	expires    int64
	hasExpires bool
	tokens     int
	version    int64
	vector     []float32
	w          *writer
	size       int64 // bytes of the record's encoding in the log
	dead       bool
}

// newEntry returns r at the given version, copying what the caller could
// change afterwards.
func newEntry(r memory.Record, version int64, size int) *entry {
	e := &entry{id: r.ID, kind: r.Kind, label: r.Label, key: r.Key, content: r.Content,
		metadata: cloneMetadata(r.Metadata), tokens: r.Tokens, version: version,
		vector: slices.Clone(r.Vector), size: int64(size)}
	e.created, _ = memory.UnixNanos(r.Created)
	if !r.Expires.IsZero() {
		e.expires, _ = memory.UnixNanos(r.Expires)
		e.hasExpires = true
	}
	return e
}

// record returns the stored Record, times in UTC, with its own metadata
// map and vector.
func (e *entry) record() memory.Record {
	r := memory.Record{ID: e.id, Kind: e.kind, Identity: e.w.id, Label: e.label, Key: e.key,
		Content: e.content, Metadata: cloneMetadata(e.metadata), Created: time.Unix(0, e.created).UTC(),
		Tokens: e.tokens, Version: e.version, Vector: slices.Clone(e.vector)}
	if e.hasExpires {
		r.Expires = time.Unix(0, e.expires).UTC()
	}
	return r
}

// expired reports whether e has expired at now (unix nanoseconds).
func (e *entry) expired(now int64) bool { return e.hasExpires && now >= e.expires }

// matches reports whether e passes q: filter, kinds, key and ids.
func (e *entry) matches(q *backend.Query) bool {
	if q.Key != "" && e.key != q.Key {
		return false
	}
	if len(q.Kinds) > 0 && !slices.Contains(q.Kinds, e.kind) {
		return false
	}
	if len(q.IDs) > 0 && !slices.Contains(q.IDs, e.id) {
		return false
	}
	return q.Filter.Matches(e.w.id)
}

// newer reports whether a comes before b in List order.
func newer(a, b *entry) bool {
	if a.created != b.created {
		return a.created > b.created
	}
	return a.id > b.id
}

// writer is one distinct identity and the posting lists its records are
// in.
type writer struct {
	id    memory.Identity
	lists []*postings
}

// postings holds the entries of one (tenant, field, value) oldest first,
// the reverse of List order, so the newest records of a scope are read off
// its end. Removed entries are marked dead and dropped once they are the
// majority.
type postings struct {
	list []*entry
	dead int
}

// insert adds e in order: an append when e is the newest, as it almost
// always is.
func (p *postings) insert(e *entry) {
	n := len(p.list)
	if n == 0 || newer(e, p.list[n-1]) {
		p.list = append(p.list, e)
		return
	}
	i := sort.Search(n, func(i int) bool { return newer(p.list[i], e) })
	p.list = slices.Insert(p.list, i, e)
}

// listKey names a posting list: the records whose field equals value in
// tenant. The tenant's own list has field FieldTenant and no value.
type listKey struct {
	field  memory.Field
	tenant string
	value  string
}

var indexedFields = []memory.Field{memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession}

// index is a replica of the log's state in memory: every live record by
// tenant and id and in per-field posting lists, the store's vector
// dimension and the bytes of live record encodings (to decide
// compaction).
type index struct {
	byID    map[idKey]*entry
	lists   map[listKey]*postings
	writers map[memory.Identity]*writer
	dims    int
	live    int64
	// format is the format of the log the index reads. For a format-1
	// log, whose tombstones name ids alone, tenantOf finds the tenant
	// holding a live id (ids were unique per store then).
	format   int
	tenantOf map[string]string
}

// idKey is what record ids are unique under: a tenant and an id.
type idKey struct{ tenant, id string }

// slot returns what e is stored under.
func (e *entry) slot() idKey { return idKey{e.w.id.Tenant, e.id} }

func newIndex(h logHeader) *index {
	x := &index{byID: map[idKey]*entry{}, lists: map[listKey]*postings{}, writers: map[memory.Identity]*writer{}, dims: h.dims, format: h.format}
	if h.format == logFormatIDOnly {
		x.tenantOf = map[string]string{}
	}
	return x
}

// writerOf returns the shared writer of id, creating it on first sight.
func (x *index) writerOf(id memory.Identity) *writer {
	if w := x.writers[id]; w != nil {
		return w
	}
	w := &writer{id: id}
	keys := []listKey{{field: memory.FieldTenant, tenant: id.Tenant}}
	for _, f := range indexedFields {
		if v := id.Get(f); v != "" {
			keys = append(keys, listKey{field: f, tenant: id.Tenant, value: v})
		}
	}
	for _, k := range keys {
		p := x.lists[k]
		if p == nil {
			p = &postings{}
			x.lists[k] = p
		}
		w.lists = append(w.lists, p)
	}
	x.writers[id] = w
	return w
}

// put adds e, written by who, replacing any entry its tenant holds under
// its id.
func (x *index) put(e *entry, who memory.Identity) {
	k := idKey{who.Tenant, e.id}
	if old := x.byID[k]; old != nil {
		x.remove(old)
	}
	e.w = x.writerOf(who)
	if e.vector != nil && x.dims == 0 {
		x.dims = len(e.vector)
	}
	x.byID[k] = e
	if x.tenantOf != nil {
		x.tenantOf[e.id] = who.Tenant
	}
	x.live += e.size
	for _, p := range e.w.lists {
		p.insert(e)
	}
}

// remove drops e from the index.
func (x *index) remove(e *entry) {
	e.dead = true
	delete(x.byID, e.slot())
	if x.tenantOf != nil {
		delete(x.tenantOf, e.id)
	}
	x.live -= e.size
	for _, p := range e.w.lists {
		p.dead++
		if p.dead*2 > len(p.list) {
			p.list = slices.DeleteFunc(p.list, func(e *entry) bool { return e.dead })
			p.dead = 0
		}
	}
}

// apply applies a decoded operation.
func (x *index) apply(op decoded) {
	for _, r := range op.puts {
		x.put(r.e, r.who)
	}
	for _, k := range op.deletes {
		if x.tenantOf != nil {
			k.tenant = x.tenantOf[k.id]
		}
		if e := x.byID[k]; e != nil {
			x.remove(e)
		}
	}
}

// candidates returns entries that include every live record q can match,
// and whether they are in posting order (oldest first): the named ids, in
// no order, or the smallest posting list of q's filter. They may include
// dead entries, and entries q does not match.
//
// When q names ids, the candidates are exactly those records, so it clears
// q.IDs for the caller's per-entry match.
func (x *index) candidates(q *backend.Query) (list []*entry, ordered bool) {
	if len(q.IDs) > 0 {
		out := make([]*entry, 0, len(q.IDs))
		seen := make(map[*entry]bool, len(q.IDs))
		for _, id := range q.IDs {
			if e := x.byID[idKey{q.Filter.Identity.Tenant, id}]; e != nil && !seen[e] {
				seen[e] = true
				out = append(out, e)
			}
		}
		q.IDs = nil
		return out, false
	}
	id := q.Filter.Identity
	best := x.lists[listKey{field: memory.FieldTenant, tenant: id.Tenant}]
	if best == nil {
		return nil, true
	}
	for _, f := range indexedFields {
		if !q.Filter.Match.Has(f) || id.Get(f) == "" {
			continue
		}
		p := x.lists[listKey{field: f, tenant: id.Tenant, value: id.Get(f)}]
		if p == nil {
			return nil, true
		}
		if len(p.list) < len(best.list) {
			best = p
		}
	}
	return best.list, true
}

// newest returns the entries q matches that have not expired at now, in
// List order, at most q.Limit of them when it is set.
func (x *index) newest(q backend.Query, now int64) []*entry {
	list, ordered := x.candidates(&q)
	var out []*entry
	if !ordered {
		for _, e := range list {
			if !e.dead && !e.expired(now) && e.matches(&q) {
				out = append(out, e)
			}
		}
		slices.SortFunc(out, func(a, b *entry) int {
			switch {
			case a == b:
				return 0
			case newer(a, b):
				return -1
			}
			return 1
		})
		if q.Limit > 0 && len(out) > q.Limit {
			out = out[:q.Limit]
		}
		return out
	}
	if q.Limit > 0 {
		out = make([]*entry, 0, min(q.Limit, len(list)))
	}
	for i := len(list) - 1; i >= 0; i-- {
		e := list[i]
		if e.dead || e.expired(now) || !e.matches(&q) {
			continue
		}
		out = append(out, e)
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out
}

// matching returns the entries q matches, live or expired, in no order.
func (x *index) matching(q *backend.Query) []*entry {
	var out []*entry
	list, _ := x.candidates(q)
	for _, e := range list {
		if !e.dead && e.matches(q) {
			out = append(out, e)
		}
	}
	return out
}

func cloneMetadata(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}
