package recindex

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agentmem/memory"
)

// TestIDIndexCollisions forces every id into one of three slots and checks
// that lookups, removal from the head, middle and tail of a chain, and
// iteration all see exactly the indexed entries. Every id is held by two
// tenants, whose entries share a chain and must never be mistaken for
// each other.
func TestIDIndexCollisions(t *testing.T) {
	type entry = Entry[int, int]
	x := newIDIndex[int, int]()
	x.weak = func(id string) uint64 { return uint64(len(id) % 3) }
	tenants := []*Writer[int, int]{{Identity: memory.Identity{Tenant: "acme", Agent: "a"}}, {Identity: memory.Identity{Tenant: "evil", Agent: "a"}}}
	key := func(i, tenant int) idKey {
		return idKey{tenants[tenant].Identity.Tenant, fmt.Sprintf("id-%d%s", i, "xyz"[:i%3])}
	}
	live := map[idKey]*entry{}
	for i := range 30 {
		for w := range tenants {
			k := key(i, w)
			e := &entry{ID: k.id, writer: tenants[w]}
			x.add(e)
			live[k] = e
		}
	}
	name := func(k idKey) string { return k.tenant + "/" + k.id }
	check := func() {
		t.Helper()
		for k, e := range live {
			if got := x.get(k.tenant, k.id); got != e {
				t.Fatalf("get(%q, %q) = %p, want %p", k.tenant, k.id, got, e)
			}
		}
		if got := x.get("acme", "absent"); got != nil {
			t.Fatalf("get(absent) = %v, want nil", got)
		}
		if got := x.get("nobody", "id-0"); got != nil {
			t.Fatalf("get of another tenant's id = %v, want nil", got)
		}
		var seen []string
		x.each(func(e *entry) bool {
			seen = append(seen, name(idKey{e.writer.Identity.Tenant, e.ID}))
			return true
		})
		slices.Sort(seen)
		want := make([]string, 0, len(live))
		for k := range live {
			want = append(want, name(k))
		}
		slices.Sort(want)
		if !slices.Equal(seen, want) {
			t.Fatalf("each saw %v, want %v", seen, want)
		}
		if x.n != len(live) {
			t.Fatalf("the index counts %d entries, holds %d", x.n, len(live))
		}
	}
	check()
	// Remove in an order that hits chain heads, middles and tails, one
	// tenant's entry of an id at a time.
	for n, i := range []int{29, 0, 15, 14, 1, 2, 3, 28, 27, 16} {
		k := key(i, n%2)
		x.remove(live[k])
		delete(live, k)
		if x.get(k.tenant, k.id) != nil {
			t.Fatalf("%q still found after remove", name(k))
		}
		check()
	}
	for id, e := range live {
		x.remove(e)
		delete(live, id)
	}
	check()
	if len(x.slots) != 0 {
		t.Fatalf("%d slots left after removing everything", len(x.slots))
	}
}
