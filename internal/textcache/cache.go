package textcache

import (
	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/idmap"
	"github.com/agentmem/memory/internal/lexical"
	"github.com/agentmem/memory/internal/rowcodec"
	"github.com/agentmem/memory/internal/writers"
)

// Key is what record ids are unique under: a tenant and an id.
type Key struct{ Tenant, ID string }

// Row is what a text search needs of a record besides its text and its
// writer: what the query's kinds, key, ids and expiry test, List order
// for ties, and the rest of the record's driver.Ref. The cache keeps each
// writer's identity once, for all the writer's rows.
type Row struct {
	rowcodec.Fields
	doc int32 // its document id in its writer's index (lexical.NewSlottedIndex)
	g   *group
	// sameHash is the next row of the Cache's byKey slot (idmap).
	sameHash *Row
}

// rowDoc is where a row keeps its document id in its writer's index.
func rowDoc(r *Row) *int32 { return &r.doc }

// HashKey returns the tenant and id r is found under (idmap.Element).
func (r *Row) HashKey() (tenant, id string) { return r.g.id.Tenant, r.ID }

// SameHash returns r's link in its idmap slot's chain (idmap.Element).
func (r *Row) SameHash() **Row { return &r.sameHash }

// group is one writer's records: its identity and its texts' index.
type group struct {
	id memory.Identity
	x  *lexical.Index[*Row]
}

// RowOf returns the Row of rec, which the caller has validated.
func RowOf(rec memory.Record) *Row { return &Row{Fields: rowcodec.Of(rec)} }

// Change is one record a committed write stored or removed.
type Change struct {
	Key     Key
	Removed bool
	Writer  memory.Identity // of a stored record
	Row     *Row            // of a stored record
	Content string          // of a stored record
}

// ChangesOf returns the changes of storing recs, in order (a later
// occurrence of an id replaces an earlier one).
func ChangesOf(recs []memory.Record) []Change {
	out := make([]Change, len(recs))
	for i, r := range recs {
		out[i] = Change{Key: Key{r.Identity.Tenant, r.ID}, Writer: r.Identity, Row: RowOf(r), Content: r.Content}
	}
	return out
}

// Cache holds records' analysed texts in one lexical.Index per writer
// identity, all in one lexical.Corpus. The zero Cache is not ready; New is.
type Cache struct {
	corpus *lexical.Corpus[*Row]
	groups writers.Index[*group]
	byKey  idmap.Map[*Row]
	kinds  map[memory.Kind]memory.Kind // one copy of each kind's name
	// kindTags tags each kind's records in the indexes
	// (lexical.Index.AddTagged), so a search names kinds by tag and reads
	// no record to refuse another kind.
	kindTags lexical.Tagger[memory.Kind]
	// speakers holds one copy of each speaker's name: a conversation has
	// few, said thousands of times.
	speakers map[string]string
	// expiring counts the records held that expire: while there are
	// none, a search that names no kinds, key or ids reads no Row of the
	// candidates it ranks.
	expiring int
	matched  matched // the writers' indexes that recent filters matched
}

// New returns an empty Cache.
func New() *Cache {
	return &Cache{corpus: lexical.NewCorpus[*Row](), byKey: idmap.New[*Row](0), kinds: map[memory.Kind]memory.Kind{}, speakers: map[string]string{}}
}

// Len returns how many records the cache holds. A record without content
// is not held: it can match no search.
func (c *Cache) Len() int { return c.byKey.Len() }

// Has reports whether the cache holds the record stored under k.
func (c *Cache) Has(k Key) bool { return c.byKey.Get(k.Tenant, k.ID) != nil }

// Put adds row, of a record written by w, with its content, replacing
// the record held under the same key (whatever its writer). A record
// without content is only removed. The cache keeps row, which must not
// be put again. Its cost is linear in len(content).
func (c *Cache) Put(w memory.Identity, row *Row, content string) {
	k := Key{w.Tenant, row.ID}
	c.Remove(k)
	if content == "" {
		return
	}
	g, _ := c.groups.Get(w)
	if g == nil {
		g = &group{id: w, x: c.corpus.NewSlottedIndex(rowDoc)}
		c.groups.Put(w, g)
		c.matched.forget()
	}
	if kind, ok := c.kinds[row.Kind]; ok {
		row.Kind = kind
	} else {
		c.kinds[row.Kind] = row.Kind
	}
	if row.Speaker != "" {
		if sp, ok := c.speakers[row.Speaker]; ok {
			row.Speaker = sp
		} else {
			c.speakers[row.Speaker] = row.Speaker
		}
	}
	row.g = g
	g.x.AddTagged(row, content, c.kindTags.Of(row.Kind))
	c.byKey.Add(row)
	if row.Expires != 0 {
		c.expiring++
	}
}

// Remove drops the record held under k, and reports whether there was one.
func (c *Cache) Remove(k Key) bool {
	old := c.byKey.Get(k.Tenant, k.ID)
	if old == nil {
		return false
	}
	g := old.g
	g.x.Remove(old)
	if g.x.Len() == 0 {
		c.groups.Delete(g.id)
		c.matched.forget()
	}
	c.byKey.Remove(old)
	if old.Expires != 0 {
		c.expiring--
	}
	return true
}

// Apply makes ch: it removes the record of a removal and puts that of a
// stored record.
func (c *Cache) Apply(ch Change) {
	if ch.Removed {
		c.Remove(ch.Key)
		return
	}
	c.Put(ch.Writer, ch.Row, ch.Content)
}

// Pack lays the memory of the cache's indexes out anew
// (lexical.Corpus.Pack): a driver packs once it has loaded the cache
// whole, which adds its texts in the order they are read, scattering
// each writer's postings. Writes go on packing it from time to time.
func (c *Cache) Pack() { c.corpus.Pack() }
