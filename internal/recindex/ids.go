package recindex

import "hash/maphash"

// idIndex finds entries by tenant and record id (ids are unique per
// tenant). It is keyed by a 64-bit hash of the two rather than by the
// strings: a map with integer keys probes without reading the id's bytes
// and holds no key pointers for the garbage collector to trace. Keys whose
// hashes collide share a slot, chained through Entry.sameHash, and every
// lookup compares the tenant and id themselves.
type idIndex[E, W any] struct {
	seed  maphash.Seed
	slots map[uint64]*Entry[E, W]
	n     int
	// weak replaces the hash of the id in tests, to make ids collide.
	weak func(string) uint64
}

// idKey is what ids are unique under: a tenant and an id.
type idKey struct{ tenant, id string }

func newIDIndex[E, W any]() idIndex[E, W] {
	return idIndex[E, W]{seed: maphash.MakeSeed(), slots: map[uint64]*Entry[E, W]{}}
}

func (x *idIndex[E, W]) hash(tenant, id string) uint64 {
	if x.weak != nil {
		return x.weak(id)
	}
	var h maphash.Hash
	h.SetSeed(x.seed)
	h.WriteString(tenant)
	h.WriteByte(0) // tenants hold no NUL, so the pair reads back one way
	h.WriteString(id)
	return h.Sum64()
}

// get returns the entry tenant holds under id, or nil.
func (x *idIndex[E, W]) get(tenant, id string) *Entry[E, W] {
	return x.getHashed(x.hash(tenant, id), tenant, id)
}

// getHashed is get with the key's hash h already computed.
func (x *idIndex[E, W]) getHashed(h uint64, tenant, id string) *Entry[E, W] {
	for e := x.slots[h]; e != nil; e = e.sameHash {
		if e.ID == id && e.writer.Identity.Tenant == tenant {
			return e
		}
	}
	return nil
}

// add indexes e, whose writer is set and whose tenant and id are not
// indexed yet.
func (x *idIndex[E, W]) add(e *Entry[E, W]) { x.addHashed(x.hash(e.writer.Identity.Tenant, e.ID), e) }

// addHashed is add with the hash h of e's tenant and id already computed.
func (x *idIndex[E, W]) addHashed(h uint64, e *Entry[E, W]) {
	e.sameHash = x.slots[h]
	x.slots[h] = e
	x.n++
}

// remove drops e from the index.
func (x *idIndex[E, W]) remove(e *Entry[E, W]) {
	h := x.hash(e.writer.Identity.Tenant, e.ID)
	head := x.slots[h]
	switch {
	case head == e && e.sameHash == nil:
		delete(x.slots, h)
	case head == e:
		x.slots[h] = e.sameHash
	default:
		for p := head; p != nil; p = p.sameHash {
			if p.sameHash == e {
				p.sameHash = e.sameHash
				break
			}
		}
	}
	e.sameHash = nil
	x.n--
}

// each calls fn for every indexed entry until fn returns false.
func (x *idIndex[E, W]) each(fn func(*Entry[E, W]) bool) {
	for _, head := range x.slots {
		for e := head; e != nil; e = e.sameHash {
			if !fn(e) {
				return
			}
		}
	}
}
