// Package writers keeps one value per writer identity and finds those a
// memory.Filter matches, testing only the writers that hold the value of
// the filter's field fewest writers hold, so that a search of one scope
// among thousands costs what its own writers do. The text cache keeps
// each writer's lexical index here, the vector copies each writer's
// vectors.
package writers

import (
	"cmp"

	"github.com/agentmem/memory"
)

// Fields returns pointers to w's fields in the order of memory.Field's
// bits: field i is memory.Field(1) << i.
func Fields(w *memory.Identity) [6]*string {
	return [6]*string{&w.Tenant, &w.User, &w.Agent, &w.Instance, &w.Squad, &w.Session}
}

// Compare orders identities field by field, in the order of Fields: the
// order the snapshots of the text and vector caches encode writers in.
func Compare(a, b memory.Identity) int {
	fa, fb := Fields(&a), Fields(&b)
	for i := range fa {
		if c := cmp.Compare(*fa[i], *fb[i]); c != 0 {
			return c
		}
	}
	return 0
}

// fieldValue is one identity field's value: field i of Fields holding v.
type fieldValue struct {
	i int
	v string
}

// entry is one writer and its value, and where it is in the writers of
// each of its fields' values (holders.list).
type entry[V any] struct {
	id memory.Identity // its strings those of its holders
	v  V
	at [6]int32
}

// holders are the writers holding one field's value, in no particular
// order, and the value, one copy for all of them: a filter compares a
// writer's fields with strings that are one, which needs no read of
// their bytes.
type holders[V any] struct {
	value string
	list  []*entry[V]
}

// Index holds a value of type V for each of a set of writer identities.
// The zero Index is empty and ready to use; it is not safe for concurrent
// writes.
type Index[V any] struct {
	all map[memory.Identity]*entry[V]
	// byField finds the writers holding each identity field's value.
	byField map[fieldValue]*holders[V]
}

// Len returns how many writers x holds.
func (x *Index[V]) Len() int { return len(x.all) }

// Get returns the value of writer w, and whether x holds one.
func (x *Index[V]) Get(w memory.Identity) (V, bool) {
	if e := x.all[w]; e != nil {
		return e.v, true
	}
	var zero V
	return zero, false
}

// Put sets writer w's value, replacing the one x held.
func (x *Index[V]) Put(w memory.Identity, v V) {
	if e := x.all[w]; e != nil {
		e.v = v
		return
	}
	if x.all == nil {
		x.all = map[memory.Identity]*entry[V]{}
		x.byField = map[fieldValue]*holders[V]{}
	}
	e := &entry[V]{id: w, v: v}
	for i, s := range Fields(&e.id) {
		k := fieldValue{i, *s}
		h := x.byField[k]
		if h == nil {
			h = &holders[V]{value: *s}
			x.byField[k] = h
		}
		*s = h.value
		e.at[i] = int32(len(h.list))
		h.list = append(h.list, e)
	}
	x.all[e.id] = e
}

// Delete removes writer w and its value, if x holds it.
func (x *Index[V]) Delete(w memory.Identity) {
	e := x.all[w]
	if e == nil {
		return
	}
	delete(x.all, w)
	for i, s := range Fields(&e.id) {
		k := fieldValue{i, *s}
		h := x.byField[k]
		last := len(h.list) - 1
		moved := h.list[last]
		h.list[e.at[i]] = moved
		moved.at[i] = e.at[i]
		h.list[last] = nil
		h.list = h.list[:last]
		switch {
		case last == 0:
			delete(x.byField, k)
		case cap(h.list) >= 64 && last < cap(h.list)/4:
			h.list = append([]*entry[V](nil), h.list...) // release the longer array
		}
	}
}

// All calls fn with every writer and its value, in no particular order.
func (x *Index[V]) All(fn func(memory.Identity, V)) {
	for id, e := range x.all {
		fn(id, e.v)
	}
}

// Matching calls fn with the value of every writer f matches, in no
// particular order. It tests only the writers holding the value of one
// field f matches, the field fewest writers hold. (recindex's smallest
// chooses among its per-field posting lists the same way; those hold
// records, these writers.)
func (x *Index[V]) Matching(f memory.Filter, fn func(V)) {
	var fewest *holders[V]
	for i, s := range Fields(&f.Identity) {
		if !f.Match.Has(memory.Field(1) << i) {
			continue
		}
		h := x.byField[fieldValue{i, *s}]
		if h == nil {
			return
		}
		if fewest == nil || len(h.list) < len(fewest.list) {
			fewest = h
		}
		// The filter's strings become the writers' own, so that
		// comparing them needs no read of their bytes.
		*s = h.value
	}
	narrowed := fewest != nil
	if !narrowed {
		for _, e := range x.all {
			fn(e.v)
		}
		return
	}
	for _, e := range fewest.list {
		if f.Matches(e.id) {
			fn(e.v)
		}
	}
}
