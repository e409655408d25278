package veccache

import (
	"encoding/binary"
	"slices"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/hugepages"
	"github.com/agentmem/memory/internal/rowcodec"
	"github.com/agentmem/memory/internal/varint"
	"github.com/agentmem/memory/internal/vecindex"
	"github.com/agentmem/memory/internal/writers"
)

// A snapshot is a Cache's content encoded (Encode), for a driver to store
// beside the records so that a new process reads its vectors as a search
// holds them — normalised and quantised — instead of reading every
// record's vector and preparing it again (Decode): the magic "AVC", a
// format byte, then
//
//	rows                 how many records, in all
//	groups               how many writers
//	per writer, in identity order (writers.Compare):
//	  identity           tenant, user, agent, instance, squad, session
//	  n                  how many of its records
//	  set                its vecindex.Set, encoded (Set.Encode), as a
//	                     string
//	  row × n            its fields (package rowcodec), in the order
//	                     of its set's rows
//
// Strings are a uvarint length and the bytes, counts uvarints, times
// zig-zag varints (package varint). A writer's set comes before its rows
// so that Decode can decode the two at once.
const (
	snapshotMagic  = "AVC"
	snapshotFormat = 1
)

// Encode appends the cache's content to dst in the snapshot format and
// returns it. It only reads the cache.
func (c *Cache) Encode(dst []byte) []byte {
	ws := make([]memory.Identity, 0, c.groups.Len())
	size := 0
	c.groups.All(func(w memory.Identity, g *group) {
		ws = append(ws, w)
		// The set, and about what a row's strings and times take.
		size += g.set.Len() * (5*g.set.Dims() + 8 + 48)
	})
	slices.SortFunc(ws, writers.Compare)
	dst = slices.Grow(dst, size)
	dst = append(dst, snapshotMagic...)
	dst = append(dst, snapshotFormat)
	dst = binary.AppendUvarint(dst, uint64(len(c.byKey)))
	dst = binary.AppendUvarint(dst, uint64(len(ws)))
	for _, w := range ws {
		g, _ := c.groups.Get(w)
		dst = rowcodec.AppendIdentity(dst, w)
		dst = binary.AppendUvarint(dst, uint64(g.set.Len()))
		dst = binary.AppendUvarint(dst, uint64(g.set.EncodedLen()))
		var refs []vecindex.Ref
		dst, refs = g.set.Encode(dst)
		for _, ref := range refs {
			r := &c.rows[ref]
			dst = rowcodec.Append(dst, &r.Fields)
		}
	}
	return dst
}

// Decode returns the Cache a snapshot holds (Encode). It refuses, with
// memory.ErrInvalidArgument, anything Encode could not have written:
// another magic or format, counts the remaining bytes cannot hold, a
// writer or a record twice, writers out of identity order, a writer
// without records, a set of another row count or dimension than the
// cache's others, a set vecindex.DecodeSet refuses, bytes left over.
// Whatever the input, it allocates memory in proportion to len(data),
// and never panics.
func Decode(data []byte) (*Cache, error) {
	return decode(varint.Reader{B: data, Fail: failDecode})
}

// DecodeStream is Decode reading the snapshot off s as its bytes arrive:
// it returns once s has ended (varint.Stream.End). A caller that checks
// the bytes whole once they have all arrived discards the Cache if they
// fail the check.
func DecodeStream(s *varint.Stream) (*Cache, error) {
	return decode(s.Reader(failDecode))
}

func failDecode(format string, args ...any) error {
	return memory.Errorf(memory.ErrInvalidArgument, "veccache: decode snapshot: "+format, args...)
}

func decode(r varint.Reader) (*Cache, error) {
	if err := r.Header(snapshotMagic, snapshotFormat, "a vector cache snapshot"); err != nil {
		return nil, err
	}
	// A writer takes at least 8 bytes: six empty strings, a count and a
	// set's length.
	total, err := r.Count(rowcodec.MinBytes, "records")
	if err != nil {
		return nil, err
	}
	groups, err := r.Count(8, "writers")
	if err != nil {
		return nil, err
	}
	c := &Cache{byKey: make(map[Key]vecindex.Ref, total), rows: hugepages.Make[Row](0, total), speakers: map[string]string{}}
	rd := rowcodec.Decoder{Speakers: c.speakers}
	dims := 0
	var prev memory.Identity
	for i := range groups {
		w, err := rowcodec.ReadIdentity(&r)
		if err != nil {
			return nil, err
		}
		if i > 0 && writers.Compare(prev, w) >= 0 {
			return nil, r.Fail("writer %+v out of order (or twice)", w)
		}
		prev = w
		n, err := r.Count(rowcodec.MinBytes, "records of a writer")
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, r.Fail("writer %+v without records", w)
		}
		if len(c.rows)+n > total {
			return nil, r.Fail("more records than the %d counted", total)
		}
		sr, err := r.Section("a set")
		if err != nil {
			return nil, err
		}
		base := len(c.rows)
		c.rows = c.rows[:base+n]
		g := &group{id: w}
		// The set holds the rows' Refs only, so a large one is decoded
		// on a goroutine while the rows are.
		done := make(chan decodedSet, 1)
		if sr.Left() <= inlineSet {
			done <- decodeSet(sr, base)
		} else {
			go func() { done <- decodeSet(sr, base) }()
		}
		err = decodeRows(&r, &rd, c, w, g, c.rows[base:])
		set := <-done
		switch {
		case err != nil:
			return nil, err
		case set.err != nil:
			return nil, set.err
		case set.set.Len() != n:
			return nil, r.Fail("a set of %d rows for %d records", set.set.Len(), n)
		case dims != 0 && set.set.Dims() != dims:
			return nil, r.Fail("sets of %d and %d dimensions", dims, set.set.Dims())
		}
		dims = set.set.Dims()
		g.set = set.set
		c.groups.Put(w, g)
	}
	if len(c.rows) != total {
		return nil, r.Fail("%d records, but %d counted", len(c.rows), total)
	}
	if left := r.Left(); left != 0 {
		return nil, r.Fail("%d bytes after the snapshot", left)
	}
	return c, nil
}

// inlineSet is the largest encoded set decoded without a goroutine:
// below it, starting one costs more than it saves. Tests lower it.
var inlineSet = 64 << 10

// decodedSet is a set decoded, or why it was not.
type decodedSet struct {
	set *vecindex.Set
	err error
}

// decodeSet decodes the set sr holds, all of it, its rows tagged from
// base.
func decodeSet(sr varint.Reader, base int) decodedSet {
	s, err := vecindex.DecodeSet(&sr, vecindex.Ref(base))
	if err == nil && sr.Left() != 0 {
		err = sr.Fail("%d bytes after a set", sr.Left())
	}
	return decodedSet{s, err}
}

// decodeRows decodes from r into rows the rows of writer w's group g.
func decodeRows(r *varint.Reader, rd *rowcodec.Decoder, c *Cache, w memory.Identity, g *group, rows []Row) error {
	base := len(c.rows) - len(rows)
	for i := range rows {
		row := &rows[i]
		row.group = g
		if err := rd.Read(r, &row.Fields); err != nil {
			return err
		}
		k := Key{w.Tenant, row.ID}
		if _, ok := c.byKey[k]; ok {
			return r.Fail("record %q of tenant %q twice", row.ID, w.Tenant)
		}
		c.byKey[k] = vecindex.Ref(base + i)
		if row.Expires != 0 {
			c.expiring++
		}
	}
	return nil
}
