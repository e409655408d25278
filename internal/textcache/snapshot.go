package textcache

import (
	"encoding/binary"
	"runtime"
	"slices"
	"sync"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/hugepages"
	"github.com/agentmem/memory/internal/idmap"
	"github.com/agentmem/memory/internal/lexical"
	"github.com/agentmem/memory/internal/rowcodec"
	"github.com/agentmem/memory/internal/varint"
	"github.com/agentmem/memory/internal/writers"
)

// A snapshot is a Cache's content encoded (Encode), for a driver to store
// beside the records so that a new process reads it instead of analysing
// every text again (Decode): the magic "ATC", a format byte, then
//
//	analyzer             lexical.AnalyzerVersion of the encoding process
//	rows                 how many records, in all
//	groups               how many writers
//	per writer, in identity order:
//	  identity           tenant, user, agent, instance, squad, session
//	  n                  how many of its records
//	  index              its lexical.Index, encoded (Index.Encode), as
//	                     a string
//	  row × n            its fields (package rowcodec), in the order
//	                     of its index's documents
//
// Strings are a uvarint length and the bytes, counts uvarints, times
// zig-zag varints (package varint). A writer's index comes before its
// rows so that Decode can decode the two at once.
const (
	snapshotMagic  = "ATC"
	snapshotFormat = 3
)

// Encode appends the cache's content to dst in the snapshot format and
// returns it. It only reads the cache.
func (c *Cache) Encode(dst []byte) []byte {
	ws := make([]memory.Identity, 0, c.groups.Len())
	c.groups.All(func(w memory.Identity, _ *group) { ws = append(ws, w) })
	slices.SortFunc(ws, writers.Compare)
	dst = append(dst, snapshotMagic...)
	dst = append(dst, snapshotFormat)
	dst = varint.AppendString(dst, lexical.AnalyzerVersion())
	dst = binary.AppendUvarint(dst, uint64(c.byKey.Len()))
	dst = binary.AppendUvarint(dst, uint64(len(ws)))
	var index []byte
	for _, w := range ws {
		g, _ := c.groups.Get(w)
		dst = rowcodec.AppendIdentity(dst, w)
		var refs []*Row
		index, refs = g.x.Encode(index[:0])
		dst = binary.AppendUvarint(dst, uint64(len(refs)))
		dst = binary.AppendUvarint(dst, uint64(len(index)))
		dst = append(dst, index...)
		for _, r := range refs {
			dst = rowcodec.Append(dst, &r.Fields)
		}
	}
	return dst
}

// Decode returns the Cache a snapshot holds (Encode). It refuses, with
// memory.ErrInvalidArgument, a snapshot encoded by code that analyses
// text otherwise (another lexical.AnalyzerVersion) and anything Encode
// could not have written: another magic or format, counts the remaining
// bytes cannot hold, a writer or a record twice, bytes left over, or an
// index lexical.DecodeIndex refuses. Whatever the input, it allocates
// memory in proportion to len(data), and never panics.
//
// The records of a decoded cache share allocations: a record removed
// later keeps its memory until every record decoded with it is gone.
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
	return memory.Errorf(memory.ErrInvalidArgument, "textcache: decode snapshot: "+format, args...)
}

func decode(d varint.Reader) (*Cache, error) {
	if err := d.Header(snapshotMagic, snapshotFormat, "a text cache snapshot"); err != nil {
		return nil, err
	}
	analyzer, err := d.String("the analyzer version")
	if err != nil {
		return nil, err
	}
	if analyzer != lexical.AnalyzerVersion() {
		return nil, d.Fail("analysed by analyzer %s, this code's is %s", analyzer, lexical.AnalyzerVersion())
	}
	// A writer takes at least 8 bytes: six empty strings, a count and an
	// empty index.
	total, err := d.Count(rowcodec.MinBytes, "records")
	if err != nil {
		return nil, err
	}
	groups, err := d.Count(8, "writers")
	if err != nil {
		return nil, err
	}
	c := &Cache{corpus: lexical.NewCorpus[*Row](), byKey: idmap.New[*Row](total), kinds: map[memory.Kind]memory.Kind{}, speakers: map[string]string{}}
	indexes := indexDecoder{corpus: c.corpus}
	defer indexes.wait() // on an early return, let no decoding outlive Decode
	rd := rowDecoder{c: c, d: rowcodec.Decoder{Speakers: c.speakers}}
	for range groups {
		w, err := rowcodec.ReadIdentity(&d)
		if err != nil {
			return nil, err
		}
		if _, ok := c.groups.Get(w); ok {
			return nil, d.Fail("writer %+v twice", w)
		}
		n, err := d.Count(rowcodec.MinBytes, "records of a writer")
		if err != nil {
			return nil, err
		}
		if c.byKey.Len()+n > total {
			return nil, d.Fail("more records than the %d counted", total)
		}
		index, err := d.Section("an index")
		if err != nil {
			return nil, err
		}
		g := &group{id: w}
		slab := hugepages.Make[Row](n, n)
		refs := make([]*Row, n)
		for i := range slab {
			refs[i] = &slab[i]
		}
		// The index holds the rows' addresses only, so it is decoded
		// while the rows are.
		indexes.start(g, index, refs)
		for i := range slab {
			if err := rd.row(&d, w, g, &slab[i]); err != nil {
				return nil, err
			}
		}
		if n > 0 {
			c.groups.Put(w, g)
		}
	}
	if err := indexes.wait(); err != nil {
		return nil, err
	}
	for _, k := range rd.d.Kinds {
		c.kinds[k] = k
	}
	// The encoding keeps no tags: the rows' kinds give them again.
	c.groups.All(func(_ memory.Identity, g *group) {
		g.x.SetTags(func(r *Row) uint8 { return c.kindTags.Of(r.Kind) })
	})
	if c.byKey.Len() != total {
		return nil, d.Fail("%d records, but %d counted", c.byKey.Len(), total)
	}
	if left := d.Left(); left != 0 {
		return nil, d.Fail("%d bytes after the snapshot", left)
	}
	return c, nil
}

// rowDecoder decodes the rows of a snapshot into its cache c.
type rowDecoder struct {
	c *Cache
	d rowcodec.Decoder // its Speakers are c.speakers
}

// row decodes from d into r the next row, of writer w's group g.
func (rd *rowDecoder) row(d *varint.Reader, w memory.Identity, g *group, r *Row) error {
	c := rd.c
	r.g = g
	if err := rd.d.Read(d, &r.Fields); err != nil {
		return err
	}
	h := c.byKey.Hash(w.Tenant, r.ID)
	if c.byKey.GetHashed(h, w.Tenant, r.ID) != nil {
		return d.Fail("record %q of tenant %q twice", r.ID, w.Tenant)
	}
	c.byKey.AddHashed(h, r)
	if r.Expires != 0 {
		c.expiring++
	}
	return nil
}

// indexDecoder decodes writers' indexes, a large one on a goroutine of its
// own, up to one per processor at once, and attaches each to corpus.
type indexDecoder struct {
	corpus *lexical.Corpus[*Row]
	wg     sync.WaitGroup
	sem    chan struct{}
	mu     sync.Mutex // held to attach, and for err
	err    error      // the first decoding's error
}

// inline is the largest encoded index decoded without a goroutine: below
// it, starting one costs more than it saves. Tests lower it.
var inline = 64 << 10

// start decodes the index of group g, encoded in what d reads, with refs
// as its documents' references, setting g.x unless it fails.
func (id *indexDecoder) start(g *group, d varint.Reader, refs []*Row) {
	run := func() {
		dec, err := lexical.DecodeIndexFrom(d, refs, rowDoc)
		id.mu.Lock()
		defer id.mu.Unlock()
		if err != nil {
			if id.err == nil {
				id.err = err
			}
			return
		}
		g.x = id.corpus.Attach(dec)
	}
	if d.Left() <= inline {
		run()
		return
	}
	if id.sem == nil {
		id.sem = make(chan struct{}, runtime.GOMAXPROCS(0))
	}
	id.sem <- struct{}{}
	id.wg.Add(1)
	go func() {
		defer func() { <-id.sem; id.wg.Done() }()
		run()
	}()
}

// wait waits for every decoding started, and returns the first error.
func (id *indexDecoder) wait() error {
	id.wg.Wait()
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.err
}
