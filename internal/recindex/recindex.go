package recindex

import (
	"iter"
	"slices"
	"sort"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/idmap"
	"github.com/agentmem/memory/internal/lexical"
)

// Index holds the live entries of a store by tenant and id and in posting
// lists by identity field. The zero value is not usable; call New.
type Index[E, W any] struct {
	ids     idmap.Map[*Entry[E, W]]
	lists   map[listKey]*postings[E, W]
	writers map[memory.Identity]*Writer[E, W]
	last    *Writer[E, W]                 // the writer of the last entry put, a cache
	batch   map[idKey]int                 // scratch for Versions: the last index of each key in a batch
	texts   bool                          // whether writers' text indexes are kept; see text.go
	corpus  *lexical.Corpus[*Entry[E, W]] // the text indexes' terms, while texts are on
	kinds   lexical.Tagger[memory.Kind]   // the text indexes' tags of kinds
	// expiring counts the live entries that expire: while there are
	// none, a text search that names no key or ids reads no entry of the
	// candidates it ranks.
	expiring int
}

// idKey is what ids are unique under: a tenant and an id.
type idKey struct{ tenant, id string }

// listKey names one posting list: the records whose field equals value
// within tenant. The tenant's own list has field FieldTenant and no value.
type listKey struct {
	field  memory.Field
	tenant string
	value  string
}

// indexedFields are the identity fields with posting lists of their own,
// besides the tenant.
var indexedFields = []memory.Field{memory.FieldUser, memory.FieldAgent, memory.FieldInstance, memory.FieldSquad, memory.FieldSession}

// postings holds entries oldest first (the reverse of List order), so the
// newest records of a scope are read off its end. Removed entries are
// marked dead and compacted away once they are the majority.
type postings[E, W any] struct {
	list []*Entry[E, W]
	dead int
	// writers are the writers whose records the list holds, for searches
	// that go writer by writer. Posting lists are never dropped, so a
	// writer's lists stay the index's.
	writers []*Writer[E, W]
	// tail is the List-order key of the newest entry ever inserted, so the
	// common insert — a record newer than all others — is an append
	// without reading any entry.
	tailNanos int64
	tailID    string
}

// New returns an empty index.
func New[E, W any]() *Index[E, W] {
	return &Index[E, W]{ids: idmap.New[*Entry[E, W]](0), lists: map[listKey]*postings[E, W]{},
		writers: map[memory.Identity]*Writer[E, W]{}, batch: map[idKey]int{}}
}

// Len returns the number of live entries.
func (x *Index[E, W]) Len() int { return x.ids.Len() }

// Get returns the entry tenant holds under id, or nil.
func (x *Index[E, W]) Get(tenant, id string) *Entry[E, W] { return x.ids.Get(tenant, id) }

// All yields every live entry, in no order. The caller must not change the
// index while it iterates.
func (x *Index[E, W]) All() iter.Seq[*Entry[E, W]] {
	return x.ids.All()
}

// Put stores e, a new entry written by who, and returns the entry it
// replaces — the one who's tenant held under e's id, now removed — or nil.
func (x *Index[E, W]) Put(e *Entry[E, W], who memory.Identity) (replaced *Entry[E, W]) {
	h := x.ids.Hash(who.Tenant, e.ID)
	if old := x.ids.GetHashed(h, who.Tenant, e.ID); old != nil {
		x.Remove(old)
		replaced = old
	}
	w := x.last
	if w == nil || w.Identity != who {
		w = x.writerOf(who)
		x.last = w
	}
	e.writer = w
	x.ids.AddHashed(h, e)
	if e.HasExpires {
		x.expiring++
	}
	for _, p := range w.lists {
		p.insert(e)
	}
	if x.texts {
		x.indexText(e)
	}
	return replaced
}

// writerOf returns the shared writer of id, creating it and its posting
// lists on first sight.
func (x *Index[E, W]) writerOf(id memory.Identity) *Writer[E, W] {
	if w := x.writers[id]; w != nil {
		return w
	}
	w := &Writer[E, W]{Identity: id}
	keys := []listKey{{field: memory.FieldTenant, tenant: id.Tenant}}
	for _, f := range indexedFields {
		if v := id.Get(f); v != "" {
			keys = append(keys, listKey{field: f, tenant: id.Tenant, value: v})
		}
	}
	for _, k := range keys {
		p := x.lists[k]
		if p == nil {
			p = &postings[E, W]{}
			x.lists[k] = p
		}
		w.lists = append(w.lists, p)
		p.writers = append(p.writers, w)
	}
	x.writers[id] = w
	return w
}

// Remove removes e, a live entry, and compacts the posting lists in which
// removed entries have become the majority.
func (x *Index[E, W]) Remove(e *Entry[E, W]) {
	e.dead = true
	x.ids.Remove(e)
	if e.HasExpires {
		x.expiring--
	}
	if x.texts {
		unindexText(e)
	}
	for _, p := range e.writer.lists {
		p.dead++
		if p.dead*2 > len(p.list) {
			p.list = slices.DeleteFunc(p.list, func(x *Entry[E, W]) bool { return x.dead })
			p.dead = 0
		}
	}
}

// insert adds e in List order: an append when e is the newest, as it
// almost always is.
func (p *postings[E, W]) insert(e *Entry[E, W]) {
	if len(p.list) == 0 || e.Created > p.tailNanos || e.Created == p.tailNanos && e.ID > p.tailID {
		p.list = append(p.list, e)
		p.tailNanos, p.tailID = e.Created, e.ID
		return
	}
	i := sort.Search(len(p.list), func(i int) bool { return newer(p.list[i], e) })
	p.list = slices.Insert(p.list, i, e)
}

// Versions checks a batch of records before any of it is stored, and
// returns the version each is stored at: one more than that of the record
// it replaces, earlier in the batch or in the index, or 1. A record that
// a later one of the batch replaces gets 0: the caller need not store it.
// It fails with driver.HeldByAnother when a record's tenant holds its id
// under another writer, in the index or earlier in the batch.
//
// Versions uses scratch space of the index: the caller holds its lock
// exclusively.
func (x *Index[E, W]) Versions(recs []memory.Record) ([]int64, error) {
	versions := make([]int64, len(recs))
	batch := len(recs) > 1
	if batch {
		defer clear(x.batch)
	}
	for i, r := range recs {
		k := idKey{r.Identity.Tenant, r.ID}
		owner, version := r.Identity, int64(1)
		j, dup := 0, false
		if batch {
			j, dup = x.batch[k]
		}
		if dup {
			owner, version = recs[j].Identity, versions[j]+1
			versions[j] = 0
		} else if e := x.ids.Get(k.tenant, k.id); e != nil {
			owner, version = e.writer.Identity, e.Version+1
		}
		if owner != r.Identity {
			return nil, driver.HeldByAnother(r.ID)
		}
		versions[i] = version
		if batch {
			x.batch[k] = i
		}
	}
	return versions, nil
}

// SwapVersion checks a compare-and-swap of rec at now (unix nanoseconds):
// the live record its tenant holds under its id must have version expect,
// 0 meaning none (an expired record counts as none). It returns the
// version rec is stored at, one more than that of any record it replaces,
// live or expired. It fails with driver.HeldByAnother when another writer
// holds the id, and with driver.VersionConflict when the version differs.
func (x *Index[E, W]) SwapVersion(rec memory.Record, expect, now int64) (int64, error) {
	var stored, current int64
	if old := x.ids.Get(rec.Identity.Tenant, rec.ID); old != nil {
		if old.writer.Identity != rec.Identity {
			return 0, driver.HeldByAnother(rec.ID)
		}
		stored = old.Version
		if !old.Expired(now) {
			current = old.Version
		}
	}
	if current != expect {
		return 0, driver.VersionConflict(rec.ID, expect, current)
	}
	return stored + 1, nil
}

// List returns the records q matches that have not expired at now, in
// List order, at most q.Limit of them when it is set.
func (x *Index[E, W]) List(q driver.Query, now int64) []memory.Record {
	list := x.candidates(&q)
	var out []memory.Record
	if q.Limit > 0 {
		out = make([]memory.Record, 0, min(q.Limit, len(list)))
	}
	m := matcher[E, W]{filter: q.Filter, rest: &q}
	for i := len(list) - 1; i >= 0; i-- {
		e := list[i]
		if e.dead || e.Expired(now) || !m.matches(e) {
			continue
		}
		out = append(out, e.Record())
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out
}

// Matching returns the live entries q matches, expired or not, oldest
// first: what a Delete of q removes.
func (x *Index[E, W]) Matching(q driver.Query) []*Entry[E, W] {
	var out []*Entry[E, W]
	list := x.candidates(&q)
	m := matcher[E, W]{filter: q.Filter, rest: &q}
	for _, e := range list {
		if !e.dead && m.matches(e) {
			out = append(out, e)
		}
	}
	return out
}

// Expired returns the entries that have expired at now (unix
// nanoseconds), in no order: what a Sweep removes.
func (x *Index[E, W]) Expired(now int64) []*Entry[E, W] {
	var out []*Entry[E, W]
	for e := range x.ids.All() {
		if e.Expired(now) {
			out = append(out, e)
		}
	}
	return out
}

// Writers yields the writers q's filter matches, found through the
// smallest writer list among the fields the filter names. Kinds, key and
// ids are the caller's to apply, per entry.
func (x *Index[E, W]) Writers(q driver.Query) iter.Seq[*Writer[E, W]] {
	return func(yield func(*Writer[E, W]) bool) {
		p := x.smallest(q.Filter, func(p *postings[E, W]) int { return len(p.writers) })
		if p == nil {
			return
		}
		for _, w := range p.writers {
			if q.Filter.Matches(w.Identity) && !yield(w) {
				return
			}
		}
	}
}

// candidates returns entries, oldest first, that include every live
// record q can match: the records under the ids q names, or else the
// smallest posting list of the fields q's filter names; nil when no
// record can match. They may include removed entries, and entries q does
// not match.
//
// When q names ids, the candidates are exactly those records, so it clears
// q.IDs for the caller's per-entry match.
func (x *Index[E, W]) candidates(q *driver.Query) []*Entry[E, W] {
	if len(q.IDs) > 0 {
		list := x.byIDs(q.Filter.Identity.Tenant, q.IDs)
		q.IDs = nil
		return list
	}
	p := x.smallest(q.Filter, func(p *postings[E, W]) int { return len(p.list) })
	if p == nil {
		return nil
	}
	return p.list
}

// smallest returns the posting list of f's tenant or of one of the fields
// f names, whichever is smallest by size; nil when one of them is empty,
// as then no record can match.
func (x *Index[E, W]) smallest(f memory.Filter, size func(*postings[E, W]) int) *postings[E, W] {
	id := f.Identity
	best := x.lists[listKey{field: memory.FieldTenant, tenant: id.Tenant}]
	if best == nil {
		return nil
	}
	for _, field := range indexedFields {
		v := id.Get(field)
		if !f.Match.Has(field) || v == "" {
			continue
		}
		p := x.lists[listKey{field: field, tenant: id.Tenant, value: v}]
		if p == nil {
			return nil
		}
		if size(p) < size(best) {
			best = p
		}
	}
	return best
}

// byIDs returns the entries tenant holds under the given ids, oldest
// first (posting order), each once.
func (x *Index[E, W]) byIDs(tenant string, ids []string) []*Entry[E, W] {
	var out []*Entry[E, W]
	for _, id := range ids {
		if e := x.ids.Get(tenant, id); e != nil {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *Entry[E, W]) int { return b.Compare(a) })
	return slices.Compact(out)
}

// matcher applies a query to entries, deciding the identity filter once
// per writer: consecutive entries of a posting list mostly share one.
type matcher[E, W any] struct {
	filter memory.Filter
	rest   *driver.Query // kinds, key and ids, checked per entry
	last   *Writer[E, W]
	ok     bool
}

func (m *matcher[E, W]) matches(e *Entry[E, W]) bool {
	if e.writer != m.last {
		m.last, m.ok = e.writer, m.filter.Matches(e.writer.Identity)
	}
	return m.ok && e.MatchesRest(m.rest)
}
