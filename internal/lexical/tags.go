package lexical

// Tagger gives values of type K, such as record kinds, the tags
// documents carry (Index.AddTagged) and builds the Query.Tags that admit
// some of them: 1 to 62, in the order values come, and OtherTag for every
// value after those. A search for values that all have tags of their own
// then knows a document's value from its tag, without reading its
// record. The zero Tagger is ready; it is not safe for concurrent writes.
type Tagger[K comparable] struct {
	of map[K]uint8
}

// OtherTag is the tag of every value past the first 62 a Tagger saw.
const OtherTag = 63

// Of returns k's tag, giving it one if it has none.
func (g *Tagger[K]) Of(k K) uint8 {
	if t, ok := g.of[k]; ok {
		return t
	}
	if g.of == nil {
		g.of = map[K]uint8{}
	}
	t := uint8(len(g.of) + 1)
	if t >= OtherTag {
		return OtherTag
	}
	g.of[k] = t
	return t
}

// Own returns how many values have tags of their own.
func (g *Tagger[K]) Own() int { return len(g.of) }

// Query returns the Query.Tags admitting the documents tagged with one of
// ks, and whether those documents hold only values of ks: not when one
// of ks may have OtherTag, which other values share, so the caller must
// still check each document's value. Tags 0 means no document has one of
// ks.
func (g *Tagger[K]) Query(ks []K) (tags uint64, only bool) {
	only = true
	full := len(g.of)+1 >= OtherTag
	for _, k := range ks {
		t, ok := g.of[k]
		if !ok && full {
			t, ok = OtherTag, true
		}
		if ok {
			tags |= 1 << t
			only = only && t != OtherTag
		}
	}
	return tags, only
}
