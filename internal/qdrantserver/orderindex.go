package qdrantserver

import (
	"slices"

	"github.com/qdrant/go-client/qdrant"
)

// orderIndex is the points of a collection ordered by the values of one
// range-indexed key, as order_by reads them: an entry per distinct value
// of a point, sorted by value and then by point id. A collection builds
// one on the first ordered scroll by a key and keeps it up to date on
// every change of its points (track, untrack), so that an ordered scroll
// walks the points in order and stops at its limit instead of checking
// every point and sorting those that pass.
type orderIndex struct {
	typ     qdrant.PayloadSchemaType
	key     path
	entries []orderedEntry
}

// compareEntries orders entries by value, then by point id.
func compareEntries(a, b orderedEntry) int {
	if c := a.value.compare(b.value); c != 0 {
		return c
	}
	switch {
	case a.p.id == b.p.id:
		return 0
	case a.p.id.less(b.p.id):
		return -1
	}
	return 1
}

// entriesOf returns p's entries in an index of typ on key: one per
// distinct value.
func entriesOf(typ qdrant.PayloadSchemaType, key path, p *point) []orderedEntry {
	var out []orderedEntry
	for _, v := range indexedValues(typ, key.get(p.payload)) {
		if !slices.ContainsFunc(out, func(e orderedEntry) bool { return e.value.compare(v) == 0 }) {
			out = append(out, orderedEntry{value: v, p: p})
		}
	}
	return out
}

// orderIndexOf returns the collection's index on key, of type typ,
// building it when there is none (or one of another type).
func (c *collection) orderIndexOf(name string, key path, typ qdrant.PayloadSchemaType) *orderIndex {
	c.orderMu.Lock()
	defer c.orderMu.Unlock()
	if ix, ok := c.ordered[name]; ok && ix.typ == typ {
		return ix
	}
	ix := &orderIndex{typ: typ, key: key}
	for _, p := range c.points {
		ix.entries = append(ix.entries, entriesOf(typ, key, p)...)
	}
	slices.SortFunc(ix.entries, compareEntries)
	if c.ordered == nil {
		c.ordered = map[string]*orderIndex{}
	}
	c.ordered[name] = ix
	return ix
}

// track adds p, just stored, to the collection's order indexes.
func (c *collection) track(p *point) {
	for _, ix := range c.ordered {
		for _, e := range entriesOf(ix.typ, ix.key, p) {
			i, _ := slices.BinarySearchFunc(ix.entries, e, compareEntries)
			ix.entries = slices.Insert(ix.entries, i, e)
		}
	}
}

// untrack removes p, about to be replaced, edited or deleted, from the
// collection's order indexes. p's payload must be the one track saw.
func (c *collection) untrack(p *point) {
	for _, ix := range c.ordered {
		for _, e := range entriesOf(ix.typ, ix.key, p) {
			if i, found := slices.BinarySearchFunc(ix.entries, e, compareEntries); found {
				ix.entries = slices.Delete(ix.entries, i, i+1)
			}
		}
	}
}
