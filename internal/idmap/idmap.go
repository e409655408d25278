// Package idmap finds records by tenant and id (ids are unique per
// tenant), for the drivers' in-process copies of their records.
//
// A Map is keyed by a 64-bit hash of the two rather than by the strings:
// a map with integer keys probes without reading the id's bytes, takes
// 16 bytes a slot instead of 40, and holds no key pointers for the
// garbage collector to trace. Elements whose keys hash alike share a
// slot, chained through a link each element carries (Element.SameHash),
// and every lookup compares the tenant and id themselves.
package idmap

import (
	"hash/maphash"
	"iter"
)

// Element is what a Map holds: a pointer to a record type that says
// what it is found under and carries the link of its slot's chain.
type Element[P any] interface {
	comparable
	// HashKey returns the tenant and id the element is found under. They
	// must not change while the element is in a Map.
	HashKey() (tenant, id string)
	// SameHash returns the element's link to the next element of its
	// slot, which only the Map sets.
	SameHash() *P
}

// Map finds elements by tenant and id. The zero Map is not ready; New is.
type Map[P Element[P]] struct {
	seed  maphash.Seed
	slots map[uint64]P
	n     int
	// weak replaces the hash of the id in tests, to make ids collide.
	weak func(string) uint64
}

// New returns an empty Map with room for about hint elements.
func New[P Element[P]](hint int) Map[P] {
	return Map[P]{seed: maphash.MakeSeed(), slots: make(map[uint64]P, hint)}
}

// Len returns how many elements m holds.
func (m *Map[P]) Len() int { return m.n }

// Hash returns the hash m files tenant's id under, for GetHashed and
// AddHashed.
func (m *Map[P]) Hash(tenant, id string) uint64 {
	if m.weak != nil {
		return m.weak(id)
	}
	var h maphash.Hash
	h.SetSeed(m.seed)
	h.WriteString(tenant)
	h.WriteByte(0) // tenants hold no NUL, so the pair reads back one way
	h.WriteString(id)
	return h.Sum64()
}

// Get returns the element tenant holds under id, or the zero P.
func (m *Map[P]) Get(tenant, id string) P { return m.GetHashed(m.Hash(tenant, id), tenant, id) }

// GetHashed is Get with the key's hash h already computed.
func (m *Map[P]) GetHashed(h uint64, tenant, id string) P {
	var none P
	for e := m.slots[h]; e != none; e = *e.SameHash() {
		if t, i := e.HashKey(); i == id && t == tenant {
			return e
		}
	}
	return none
}

// Add adds p, whose key m does not hold yet.
func (m *Map[P]) Add(p P) { m.AddHashed(m.Hash(p.HashKey()), p) }

// AddHashed is Add with the hash h of p's key already computed.
func (m *Map[P]) AddHashed(h uint64, p P) {
	*p.SameHash() = m.slots[h]
	m.slots[h] = p
	m.n++
}

// Remove drops p, which m holds.
func (m *Map[P]) Remove(p P) {
	var none P
	h := m.Hash(p.HashKey())
	head := m.slots[h]
	switch {
	case head == p && *p.SameHash() == none:
		delete(m.slots, h)
	case head == p:
		m.slots[h] = *p.SameHash()
	default:
		for e := head; e != none; e = *e.SameHash() {
			if next := e.SameHash(); *next == p {
				*next = *p.SameHash()
				break
			}
		}
	}
	*p.SameHash() = none
	m.n--
}

// All yields every element m holds, in no order. m must not change
// meanwhile.
func (m *Map[P]) All() iter.Seq[P] {
	return func(yield func(P) bool) {
		var none P
		for _, head := range m.slots {
			for e := head; e != none; e = *e.SameHash() {
				if !yield(e) {
					return
				}
			}
		}
	}
}
