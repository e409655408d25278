package recindex

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

var (
	t0    = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	alice = memory.Identity{Tenant: "acme", User: "alice", Agent: "a", Session: "s1"}
	bob   = memory.Identity{Tenant: "acme", User: "bob", Agent: "a", Session: "s2"}
	evil  = memory.Identity{Tenant: "evil", User: "alice", Agent: "a", Session: "s1"}
)

func rec(who memory.Identity, id string, ms int) memory.Record {
	return memory.Record{ID: id, Kind: memory.KindTurn, Identity: who, Content: id, Created: t0.Add(time.Duration(ms) * time.Millisecond)}
}

// put stores recs as a driver does: versions first, then each record.
func put(t *testing.T, x *Index[int, int], recs ...memory.Record) {
	t.Helper()
	versions, err := x.Versions(recs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if versions[i] != 0 {
			x.Put(x.NewEntry(r, versions[i]), r.Identity)
		}
	}
}

func ids(recs []memory.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func at(match memory.Field, who memory.Identity) driver.Query {
	return driver.Query{Filter: memory.Filter{Match: match, Identity: who.Only(match)}}
}

// TestListOrder checks that List returns newest first (ties by id) however
// the records arrived, within the filter's scope and tenant, honouring the
// limit, expiry, and a query by ids.
func TestListOrder(t *testing.T) {
	x := New[int, int]()
	put(t, x, rec(alice, "c", 30), rec(alice, "a", 10), rec(bob, "b", 20))
	put(t, x, rec(alice, "e", 20), rec(alice, "d", 20), rec(evil, "z", 40))
	tenant := memory.FieldTenant
	if got, want := ids(x.List(at(tenant, alice), 0)), []string{"c", "e", "d", "b", "a"}; !slices.Equal(got, want) {
		t.Errorf("tenant listing %v, want %v", got, want)
	}
	user := memory.FieldTenant | memory.FieldUser
	if got, want := ids(x.List(at(user, alice), 0)), []string{"c", "e", "d", "a"}; !slices.Equal(got, want) {
		t.Errorf("alice's records %v, want %v", got, want)
	}
	q := at(user, alice)
	q.Limit = 2
	if got, want := ids(x.List(q, 0)), []string{"c", "e"}; !slices.Equal(got, want) {
		t.Errorf("with limit 2: %v, want %v", got, want)
	}
	q = at(tenant, alice)
	q.IDs = []string{"a", "z", "c", "a", "missing"}
	if got, want := ids(x.List(q, 0)), []string{"c", "a"}; !slices.Equal(got, want) {
		t.Errorf("by ids %v, want %v (z is another tenant's)", got, want)
	}
	r := rec(alice, "x", 50)
	r.Expires = t0.Add(time.Second)
	put(t, x, r)
	exp := t0.Add(time.Second).UnixNano()
	if got := ids(x.List(at(user, alice), exp-1)); got[0] != "x" {
		t.Errorf("before expiry: %v, want x first", got)
	}
	if got := ids(x.List(at(user, alice), exp)); slices.Contains(got, "x") {
		t.Errorf("at expiry: %v still holds x", got)
	}
	if got := x.Expired(exp); len(got) != 1 || got[0].ID != "x" {
		t.Errorf("Expired = %v, want x", got)
	}
	if got := x.Matching(at(user, alice)); len(got) != 5 || got[0].ID != "a" || got[4].ID != "x" {
		t.Errorf("Matching found %d entries, want 5 oldest first, expired included", len(got))
	}
}

// TestVersions checks the versions of a batch: a replaced record's plus
// one, counting repeats within the batch, with all but the last of a
// repeated id left out; and that a tenant's id held by another writer,
// stored or earlier in the batch, fails.
func TestVersions(t *testing.T) {
	x := New[int, int]()
	put(t, x, rec(alice, "a", 1))
	got, err := x.Versions([]memory.Record{rec(alice, "a", 2), rec(alice, "b", 3), rec(alice, "a", 4), rec(evil, "a", 5)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{0, 1, 3, 1}; !slices.Equal(got, want) {
		t.Errorf("versions %v, want %v", got, want)
	}
	for _, batch := range [][]memory.Record{
		{rec(bob, "a", 2)},
		{rec(alice, "n", 2), rec(bob, "n", 3)},
	} {
		if _, err := x.Versions(batch); !errors.Is(err, memory.ErrPermissionDenied) {
			t.Errorf("a batch writing another writer's id: %v, want memory.ErrPermissionDenied", err)
		}
	}
	if len(x.batch) != 0 {
		t.Errorf("Versions left %d keys of scratch", len(x.batch))
	}
}

// TestSwapVersion checks compare-and-swap decisions: against none, the
// live version, an expired record (which counts as none but whose version
// still grows), and another writer's id.
func TestSwapVersion(t *testing.T) {
	x := New[int, int]()
	if v, err := x.SwapVersion(rec(alice, "a", 1), 0, 0); err != nil || v != 1 {
		t.Fatalf("swap of a new id: %d, %v; want 1", v, err)
	}
	r := rec(alice, "a", 1)
	r.Expires = t0.Add(time.Second)
	put(t, x, r, r) // version 2
	live, expired := t0.UnixNano(), t0.Add(time.Second).UnixNano()
	if v, err := x.SwapVersion(r, 2, live); err != nil || v != 3 {
		t.Errorf("swap at the live version: %d, %v; want 3", v, err)
	}
	if _, err := x.SwapVersion(r, 1, live); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("swap at a stale version: %v, want memory.ErrConflict", err)
	}
	if v, err := x.SwapVersion(r, 0, expired); err != nil || v != 3 {
		t.Errorf("swap over an expired record: %d, %v; want 3", v, err)
	}
	if _, err := x.SwapVersion(rec(bob, "a", 1), 0, live); !errors.Is(err, memory.ErrPermissionDenied) {
		t.Errorf("swap of another writer's id: %v, want memory.ErrPermissionDenied", err)
	}
}

// TestRemoveCompacts checks that removed entries leave every read at once
// and leave the posting lists once they are the majority, and that Put
// returns the entry it replaces.
func TestRemoveCompacts(t *testing.T) {
	x := New[int, int]()
	for i := range 10 {
		put(t, x, rec(alice, fmt.Sprint(i), i))
	}
	old := x.Get("acme", "9")
	e := x.NewEntry(rec(alice, "9", 20), 2)
	if got := x.Put(e, alice); got != old || x.Get("acme", "9") != e {
		t.Fatalf("Put replaced %p, want %p", got, old)
	}
	list := x.lists[listKey{field: memory.FieldSession, tenant: "acme", value: "s1"}]
	if len(list.list) != 11 || list.dead != 1 {
		t.Fatalf("session list holds %d entries, %d dead; want 11, 1", len(list.list), list.dead)
	}
	for i := range 5 {
		x.Remove(x.Get("acme", fmt.Sprint(i)))
	}
	if len(list.list) != 5 || list.dead != 0 {
		t.Errorf("after removing 5 of 10 live: %d entries, %d dead; want the dead compacted away", len(list.list), list.dead)
	}
	if got, want := ids(x.List(at(memory.FieldTenant|memory.FieldSession, alice), 0)), []string{"9", "8", "7", "6", "5"}; !slices.Equal(got, want) {
		t.Errorf("after removals: %v, want %v", got, want)
	}
	if x.Len() != 5 {
		t.Errorf("Len = %d, want 5", x.Len())
	}
}

// TestWriters checks that Writers yields exactly the writers a filter
// matches, and that writers are interned: one per identity, shared by its
// entries, with the driver's Extra.
func TestWriters(t *testing.T) {
	x := New[int, int]()
	put(t, x, rec(alice, "a", 1), rec(bob, "b", 2), rec(alice, "c", 3), rec(evil, "d", 4))
	if x.Get("acme", "a").Writer() != x.Get("acme", "c").Writer() {
		t.Fatal("two records of one identity have different writers")
	}
	x.Get("acme", "a").Writer().Extra = 7
	for _, c := range []struct {
		q    driver.Query
		want []memory.Identity
	}{
		{at(memory.FieldTenant, alice), []memory.Identity{alice, bob}},
		{at(memory.FieldTenant|memory.FieldUser, alice), []memory.Identity{alice}},
		{at(memory.FieldTenant|memory.FieldUser, evil), []memory.Identity{evil}},
		{at(memory.FieldTenant|memory.FieldSession, memory.Identity{Tenant: "acme", Session: "none"}), nil},
	} {
		var got []memory.Identity
		for w := range x.Writers(c.q) {
			got = append(got, w.Identity)
			if w.Identity == alice && w.Extra != 7 {
				t.Errorf("alice's writer lost its Extra")
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Writers(%v) = %v, want %v", c.q.Filter, got, c.want)
		}
	}
}
