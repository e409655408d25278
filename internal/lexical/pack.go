package lexical

// A corpus packs its memory from time to time: the short postings lists
// of all its terms into one array, each term's partitions one after the
// other, and the lengths and tags of its small partitions' documents
// into one array each, partition after partition. Built one document at
// a time, a partition's postings of a term are an array of their own,
// grown where the allocator found room, and a search over a thousand
// small partitions waits on the memory of thousands of arrays in as many
// places; packed, it reads a term's postings off consecutive memory
// (BENCHMARKS.md says what that saves). Long lists and large partitions
// are left where they are: their arrays are long enough to read at
// speed, and a document added would move them out of the packed array
// again, leaving their old place behind. A caller that has just added
// many documents at once, loading a store, packs at the end (Pack).
//
// Each packed array is cut with no room to grow, so a partition that
// adds a posting, a length or a tag moves its own to a new array, and
// never writes over another's. The corpus packs again once the postings
// added and dropped since it last packed reach a quarter of those it
// held then (and packFloor): packing costs time linear in the postings,
// so its cost per posting added stays constant, and the memory that
// moved lists leave behind in the packed arrays stays within a quarter
// of the postings.

// packFloor is the fewest postings added or dropped that the corpus
// packs for: below it, packing saves nothing worth its time. Tests lower
// it.
var packFloor = 1 << 14

// The longest postings list, and the most documents a partition may
// have had, that pack moves into its arrays: a list of 64 postings is
// 512 bytes, eight cache lines read at speed wherever it is.
const (
	packList = 64
	packDocs = 1024
)

// grew counts n postings added to c's partitions, and packs c if due.
func (c *Corpus[R]) grew(n int) {
	c.added += n
	c.packIfDue()
}

// shrank counts n postings dropped from c's partitions, and packs c if
// due.
func (c *Corpus[R]) shrank(n int) {
	c.dropped += n
	c.packIfDue()
}

// packIfDue packs c once the postings added and dropped since it last
// packed reach the threshold.
func (c *Corpus[R]) packIfDue() {
	if c.added+c.dropped >= max(c.packed/4, packFloor) {
		c.Pack()
	}
}

// Pack lays the memory of c's partitions out anew, as a corpus does from
// time to time (see above), now. Its cost is linear in the postings of
// c's partitions; it must not run concurrently with a search of any of
// them, or with Add and Remove.
func (c *Corpus[R]) Pack() {
	total, short := 0, 0
	for _, tm := range c.terms {
		for j := range tm.parts {
			n := len(tm.parts[j].list)
			total += n
			if n <= packList {
				short += n
			}
		}
	}
	all := make([]posting, short)
	off := 0
	for _, tm := range c.terms {
		for j := range tm.parts {
			p := &tm.parts[j].postings
			if len(p.list) > packList {
				continue
			}
			end := off + copy(all[off:], p.list)
			p.list = all[off:end:end]
			off = end
		}
	}
	docs := 0
	for _, x := range c.byNum {
		if x != nil && len(x.lens) <= packDocs {
			docs += len(x.lens)
		}
	}
	lens, tags := make([]int32, docs), make([]uint8, docs)
	off = 0
	for _, x := range c.byNum {
		if x == nil || len(x.lens) > packDocs {
			continue
		}
		end := off + copy(lens[off:], x.lens)
		copy(tags[off:], x.tags)
		x.lens, x.tags = lens[off:end:end], tags[off:end:end]
		off = end
	}
	c.packed, c.added, c.dropped = total, 0, 0
}
