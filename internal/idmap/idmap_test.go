package idmap

import (
	"fmt"
	"slices"
	"testing"
)

// elem is an element of the tests' maps.
type elem struct {
	tenant, id string
	next       *elem
}

func (e *elem) HashKey() (string, string) { return e.tenant, e.id }
func (e *elem) SameHash() **elem          { return &e.next }

type idKey struct{ tenant, id string }

// TestCollisions forces every id into one of three slots and checks that
// lookups, removal from the head, middle and tail of a chain, and
// iteration all see exactly the elements held. Every id is held by two
// tenants, whose elements share a chain and must never be mistaken for
// each other.
func TestCollisions(t *testing.T) {
	x := New[*elem](0)
	x.weak = func(id string) uint64 { return uint64(len(id) % 3) }
	tenants := []string{"acme", "evil"}
	key := func(i, tenant int) idKey {
		return idKey{tenants[tenant], fmt.Sprintf("id-%d%s", i, "xyz"[:i%3])}
	}
	live := map[idKey]*elem{}
	for i := range 30 {
		for w := range tenants {
			k := key(i, w)
			e := &elem{tenant: k.tenant, id: k.id}
			x.Add(e)
			live[k] = e
		}
	}
	name := func(k idKey) string { return k.tenant + "/" + k.id }
	check := func() {
		t.Helper()
		for k, e := range live {
			if got := x.Get(k.tenant, k.id); got != e {
				t.Fatalf("Get(%q, %q) = %p, want %p", k.tenant, k.id, got, e)
			}
		}
		if got := x.Get("acme", "absent"); got != nil {
			t.Fatalf("Get(absent) = %v, want nil", got)
		}
		if got := x.Get("nobody", "id-0"); got != nil {
			t.Fatalf("Get of another tenant's id = %v, want nil", got)
		}
		var seen []string
		for e := range x.All() {
			seen = append(seen, name(idKey{e.tenant, e.id}))
		}
		slices.Sort(seen)
		want := make([]string, 0, len(live))
		for k := range live {
			want = append(want, name(k))
		}
		slices.Sort(want)
		if !slices.Equal(seen, want) {
			t.Fatalf("each saw %v, want %v", seen, want)
		}
		if x.Len() != len(live) {
			t.Fatalf("the map counts %d elements, holds %d", x.Len(), len(live))
		}
	}
	check()
	// Remove in an order that hits chain heads, middles and tails, one
	// tenant's entry of an id at a time.
	for n, i := range []int{29, 0, 15, 14, 1, 2, 3, 28, 27, 16} {
		k := key(i, n%2)
		x.Remove(live[k])
		delete(live, k)
		if x.Get(k.tenant, k.id) != nil {
			t.Fatalf("%q still found after Remove", name(k))
		}
		check()
	}
	for id, e := range live {
		x.Remove(e)
		delete(live, id)
	}
	check()
	if len(x.slots) != 0 {
		t.Fatalf("%d slots left after removing everything", len(x.slots))
	}
}
