package writers

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/agentmem/memory"
)

// randomIdentity returns an identity of fields from pool, with a tenant.
func randomIdentity(rnd *rand.Rand, pool []string) memory.Identity {
	var w memory.Identity
	for _, s := range Fields(&w) {
		*s = pool[rnd.IntN(len(pool))]
	}
	w.Tenant = pool[1+rnd.IntN(len(pool)-1)]
	return w
}

// check checks that Matching finds, for random filters, exactly the
// writers a test of every writer finds, each once, and that byField
// indexes every writer under its six field values and nothing else.
func check(t *testing.T, what string, x *Index[int], want map[memory.Identity]int, rnd *rand.Rand, pool []string) {
	t.Helper()
	if x.Len() != len(want) {
		t.Fatalf("%s: %d writers, want %d", what, x.Len(), len(want))
	}
	entries := 0
	for k, h := range x.byField {
		if len(h.list) == 0 || h.value != k.v {
			t.Fatalf("%s: the holders of %q are %d, of value %q", what, k.v, len(h.list), h.value)
		}
		for j, e := range h.list {
			if e.at[k.i] != int32(j) || *Fields(&e.id)[k.i] != k.v {
				t.Fatalf("%s: writer %+v is at %d of the holders of %q, and says %d", what, e.id, j, k.v, e.at[k.i])
			}
		}
		entries += len(h.list)
	}
	if entries != 6*len(want) {
		t.Fatalf("%s: byField holds %d entries for %d writers, want 6 each", what, entries, len(want))
	}
	for w, v := range want {
		if got, ok := x.Get(w); !ok || got != v {
			t.Fatalf("%s: Get(%+v) = %d, %v; want %d", what, w, got, ok, v)
		}
		e := x.all[w]
		for i, s := range Fields(&w) {
			if h := x.byField[fieldValue{i, *s}]; h == nil || int(e.at[i]) >= len(h.list) || h.list[e.at[i]] != e {
				t.Fatalf("%s: writer %+v is not found by field %d", what, w, i)
			}
		}
	}
	all := 0
	x.All(func(w memory.Identity, v int) {
		if want[w] != v {
			t.Fatalf("%s: All gave %+v with %d, want %d", what, w, v, want[w])
		}
		all++
	})
	if all != len(want) {
		t.Fatalf("%s: All gave %d writers, want %d", what, all, len(want))
	}
	for range 300 {
		f := memory.Filter{Match: memory.Field(rnd.IntN(int(memory.AllFields) + 1)), Identity: randomIdentity(rnd, pool)}
		if rnd.IntN(4) == 0 {
			f.Identity.Tenant = "absent"
		}
		matched := map[int]bool{}
		for w, v := range want {
			if f.Matches(w) {
				matched[v] = true
			}
		}
		got := map[int]bool{}
		x.Matching(f, func(v int) {
			if got[v] {
				t.Fatalf("%s: Matching gave writer %d twice", what, v)
			}
			got[v] = true
		})
		if len(got) != len(matched) {
			t.Fatalf("%s: filter %+v matches %d writers, want %d", what, f, len(got), len(matched))
		}
		for v := range matched {
			if !got[v] {
				t.Fatalf("%s: filter %+v misses writer %d", what, f, v)
			}
		}
	}
}

// TestIndex checks the index against a map as writers come, change
// value and go.
func TestIndex(t *testing.T) {
	rnd := rand.New(rand.NewPCG(16, 17))
	pool := []string{"", "a", "b", "c"}
	var x Index[int]
	check(t, "empty", &x, nil, rnd, pool)
	want := map[memory.Identity]int{}
	for i := range 3000 {
		w := randomIdentity(rnd, pool)
		x.Put(w, i)
		want[w] = i
		if rnd.IntN(3) == 0 {
			d := randomIdentity(rnd, pool)
			x.Delete(d)
			delete(want, d)
		}
		if i%500 == 0 {
			check(t, fmt.Sprintf("after %d puts", i+1), &x, want, rnd, pool)
		}
	}
	check(t, "after the puts", &x, want, rnd, pool)
	for w := range want {
		x.Delete(w)
	}
	if x.Len() != 0 || len(x.byField) != 0 {
		t.Errorf("with every writer deleted, %d writers and %d field values are kept", x.Len(), len(x.byField))
	}
}

func ExampleIndex() {
	var x Index[string]
	x.Put(memory.Identity{Tenant: "acme", User: "ana", Session: "s1"}, "ana's first session")
	x.Put(memory.Identity{Tenant: "acme", User: "ana", Session: "s2"}, "ana's second session")
	x.Put(memory.Identity{Tenant: "acme", User: "bo", Session: "s1"}, "bo's session")
	x.Matching(memory.Filter{Identity: memory.Identity{Tenant: "acme", User: "bo"}, Match: memory.FieldTenant | memory.FieldUser}, func(v string) {
		fmt.Println(v)
	})
	// Output: bo's session
}
