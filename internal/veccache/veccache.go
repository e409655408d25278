// Package veccache holds a store's vectors in memory for exact search,
// grouped by writer identity (package writers), so that a search scores
// only the vectors of the writers its filter matches, and answers with
// each winner's driver.Ref without reading a record. The SQLite driver
// keeps its vectors here, and the PostgreSQL driver when asked to search
// in the process; each driver decides how its copy stays current.
package veccache

import (
	"slices"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/rowcodec"
	"github.com/agentmem/memory/internal/vecindex"
	"github.com/agentmem/memory/internal/writers"
)

// Key is what record ids are unique under: a tenant and an id.
type Key struct{ Tenant, ID string }

// Row is what a search needs of a record besides its vector and its
// writer: what the query's kinds, key, ids and expiry test, List order
// for ties, and the rest of the record's driver.Ref.
type Row struct {
	rowcodec.Fields // Speaker is Metadata[memory.SpeakerKey], Asks driver.Asks(Content)
	group           *group
}

// RowOf returns the Row of rec.
func RowOf(rec memory.Record) Row { return Row{Fields: rowcodec.Of(rec)} }

// ref returns the driver.Ref of the record row is.
func (row *Row) ref() driver.Ref { return row.Fields.Ref(row.group.id) }

// Change is one record a committed write stored or removed.
type Change struct {
	Key     Key
	Removed bool
	Writer  memory.Identity // of a stored record
	Row     Row             // of a stored record
	Vector  []float32       // of a stored record; nil: stored without one
}

// ChangesOf returns the changes of storing recs, in order (a later
// occurrence of an id replaces an earlier one). The changes share the
// records' vectors, which Put copies.
func ChangesOf(recs []memory.Record) []Change {
	out := make([]Change, len(recs))
	for i, r := range recs {
		out[i] = Change{Key: Key{r.Identity.Tenant, r.ID}, Writer: r.Identity, Row: RowOf(r), Vector: r.Vector}
	}
	return out
}

// group is the vectors of one writer identity.
type group struct {
	id  memory.Identity
	set *vecindex.Set
}

// Cache holds records' vectors, each writer's in a vecindex.Set. The zero
// Cache is empty and ready to use. A Cache is not safe for concurrent
// use: its drivers search it under a read lock and change it under the
// write lock.
type Cache struct {
	groups writers.Index[*group]
	byKey  map[Key]vecindex.Ref
	rows   []Row // by Ref; freed rows are reused
	free   []vecindex.Ref
	// expiring counts the rows that expire: while there are none, a
	// search that names no kinds, key or ids tests no row.
	expiring int
	// speakers holds one copy of each speaker's name: a conversation
	// has few, said thousands of times.
	speakers map[string]string
}

// Len returns how many vectors the cache holds.
func (c *Cache) Len() int { return len(c.byKey) }

// Reserve makes room for n vectors of dims dimensions of writer w, as a
// load that has counted them does: its set then grows once, not by
// halves, each growth copying what it held. It is an optimisation only;
// a writer reserved but never put holds nothing.
func (c *Cache) Reserve(w memory.Identity, dims, n int) {
	if dims < 1 || dims > vecindex.MaxDims || n < 1 {
		return
	}
	if g, ok := c.groups.Get(w); ok {
		g.set.Grow(n)
		return
	}
	set := vecindex.NewSet(dims)
	set.Grow(n)
	c.groups.Put(w, &group{id: w, set: set})
	c.rows = slices.Grow(c.rows, n)
}

// Put stores row, of a record written by w, with its vector, replacing
// the record held under the same key (whatever its writer). A record
// without a vector, or with one the search cannot score (the zero vector,
// or one holding a NaN or an infinity), is only removed. vec's dimension
// must be that of the cache's other vectors; the cache keeps its own copy.
func (c *Cache) Put(w memory.Identity, row Row, vec []float32) {
	k := Key{w.Tenant, row.ID}
	c.Remove(k)
	if vec == nil {
		return
	}
	g, _ := c.groups.Get(w)
	if g == nil {
		g = &group{id: w, set: vecindex.NewSet(len(vec))}
	}
	var ref vecindex.Ref
	if n := len(c.free); n > 0 {
		ref = c.free[n-1]
	} else {
		ref = vecindex.Ref(len(c.rows))
	}
	if !g.set.Add(ref, vec) {
		return
	}
	if n := len(c.free); n > 0 {
		c.free = c.free[:n-1]
	} else {
		c.rows = append(c.rows, Row{})
	}
	if g.set.Len() == 1 {
		c.groups.Put(w, g)
	}
	if row.Speaker != "" {
		if c.speakers == nil {
			c.speakers = map[string]string{}
		}
		if name, ok := c.speakers[row.Speaker]; ok {
			row.Speaker = name
		} else {
			c.speakers[row.Speaker] = row.Speaker
		}
	}
	row.group = g
	c.rows[ref] = row
	if c.byKey == nil {
		c.byKey = map[Key]vecindex.Ref{}
	}
	c.byKey[k] = ref
	if row.Expires != 0 {
		c.expiring++
	}
}

// Remove drops the record held under k, and reports whether there was one.
func (c *Cache) Remove(k Key) bool {
	ref, ok := c.byKey[k]
	if !ok {
		return false
	}
	row := &c.rows[ref]
	g := row.group
	g.set.Remove(ref)
	if g.set.Len() == 0 {
		c.groups.Delete(g.id)
	}
	delete(c.byKey, k)
	if row.Expires != 0 {
		c.expiring--
	}
	*row = Row{}
	c.free = append(c.free, ref)
	return true
}

// Apply makes ch: it removes the record of a removal and puts that of a
// stored record.
func (c *Cache) Apply(ch Change) {
	if ch.Removed {
		c.Remove(ch.Key)
		return
	}
	c.Put(ch.Writer, ch.Row, ch.Vector)
}

// Search scores the vectors of the writers q's filter matches against
// vec by cosine similarity and returns the k best that pass q's kinds,
// key and ids and have not expired at now (unix nanoseconds), as
// driver.VectorRanker describes: best first, ties newest first, then by
// id descending, each match the record's Ref. vec's dimension must be the
// cache's; a zero or non-finite vec is memory.ErrInvalidArgument.
func (c *Cache) Search(q driver.Query, vec []float32, k int, now int64) ([]driver.RefMatch, error) {
	var sets []*vecindex.Set
	c.groups.Matching(q.Filter, func(g *group) { sets = append(sets, g.set) })
	if len(sets) == 0 {
		return nil, nil
	}
	rows := c.rows
	var accept func(vecindex.Ref) bool // nil: every row
	if c.expiring > 0 || q.NamesRest() {
		accept = func(ref vecindex.Ref) bool {
			r := &rows[ref]
			return (r.Expires == 0 || now < r.Expires) && q.MatchesRest(r.ID, r.Kind, r.Key)
		}
	}
	tie := func(a, b vecindex.Ref) int {
		ra, rb := &rows[a], &rows[b]
		switch {
		case ra.Created != rb.Created:
			if ra.Created > rb.Created {
				return -1
			}
			return 1
		case ra.ID > rb.ID:
			return -1
		case ra.ID < rb.ID:
			return 1
		}
		return 0
	}
	hits, err := vecindex.Search(sets, vec, k, accept, tie)
	if err != nil {
		return nil, memory.Wrap(memory.ErrInvalidArgument, err, "vector search")
	}
	out := make([]driver.RefMatch, len(hits))
	for i, h := range hits {
		out[i] = driver.RefMatch{Ref: rows[h.Ref].ref(), Score: float64(h.Score)}
	}
	return out, nil
}

// Refs returns the Refs of every record the cache holds, in List order,
// for tests.
func (c *Cache) Refs() []driver.Ref {
	out := make([]driver.Ref, 0, len(c.byKey))
	for _, ref := range c.byKey {
		out = append(out, c.rows[ref].ref())
	}
	slices.SortFunc(out, driver.CompareRefs)
	return out
}
