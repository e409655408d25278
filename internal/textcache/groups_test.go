package textcache

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/agentmem/memory"
)

// checkMatching checks that matching finds, for random filters, exactly
// the writers a test of every writer finds, and that byField indexes
// every writer under its six field values and nothing else.
func checkMatching(t *testing.T, what string, c *Cache, rnd *rand.Rand, pool []string) {
	t.Helper()
	entries := 0
	for _, set := range c.byField {
		if len(set) == 0 {
			t.Fatalf("%s: an empty set of writers is kept", what)
		}
		entries += len(set)
	}
	if entries != 6*len(c.groups) {
		t.Fatalf("%s: byField holds %d entries for %d writers, want 6 each", what, entries, len(c.groups))
	}
	for _, g := range c.groups {
		for i, s := range identityFields(&g.id) {
			if _, ok := c.byField[fieldValue{i, *s}][g]; !ok {
				t.Fatalf("%s: writer %+v is not found by field %d", what, g.id, i)
			}
		}
	}
	for range 300 {
		f := memory.Filter{Match: memory.Field(rnd.IntN(int(memory.AllFields) + 1))}
		for _, s := range identityFields(&f.Identity) {
			*s = pool[rnd.IntN(len(pool))]
		}
		want := map[*group]bool{}
		for w, g := range c.groups {
			if f.Matches(w) {
				want[g] = true
			}
		}
		got := map[*group]bool{}
		c.matching(f, func(g *group) {
			if got[g] {
				t.Fatalf("%s: matching gave writer %+v twice", what, g.id)
			}
			got[g] = true
		})
		if len(got) != len(want) {
			t.Fatalf("%s: filter %+v matches %d writers, want %d", what, f, len(got), len(want))
		}
		for g := range want {
			if !got[g] {
				t.Fatalf("%s: filter %+v misses writer %+v", what, f, g.id)
			}
		}
	}
}

// TestMatching checks the writers' index as writers come and go, and in
// a decoded cache.
func TestMatching(t *testing.T) {
	rnd := rand.New(rand.NewPCG(16, 17))
	pool := []string{"", "a", "b", "c"}
	c := New()
	var keys []Key
	for i := range 3000 {
		var w memory.Identity
		for _, s := range identityFields(&w) {
			*s = pool[rnd.IntN(len(pool))]
		}
		w.Tenant = pool[1+rnd.IntN(len(pool)-1)]
		row := &Row{ID: fmt.Sprintf("r%d", i), Kind: memory.KindFact}
		c.Put(w, row, randomText(rnd))
		keys = append(keys, Key{w.Tenant, row.ID})
		if rnd.IntN(3) == 0 {
			k := keys[rnd.IntN(len(keys))]
			c.Remove(k)
		}
		if i%500 == 0 {
			checkMatching(t, fmt.Sprintf("after %d puts", i+1), c, rnd, pool)
		}
	}
	checkMatching(t, "after the puts", c, rnd, pool)
	d, err := Decode(c.Encode(nil))
	if err != nil {
		t.Fatal(err)
	}
	checkMatching(t, "decoded", d, rnd, pool)
	for _, k := range keys {
		c.Remove(k)
	}
	if len(c.groups) != 0 || len(c.byField) != 0 {
		t.Errorf("with every record removed, %d writers and %d field values are kept", len(c.groups), len(c.byField))
	}
}
