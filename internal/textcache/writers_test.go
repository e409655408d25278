package textcache

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/rowcodec"
	"github.com/agentmem/memory/internal/writers"
)

// checkWriters checks that c's writers are exactly those holding
// records, each under its own identity with its own records' count.
func checkWriters(t *testing.T, what string, c *Cache, held map[Key]memory.Identity) {
	t.Helper()
	want := map[memory.Identity]int{}
	for _, w := range held {
		want[w]++
	}
	if c.groups.Len() != len(want) {
		t.Fatalf("%s: %d writers, want %d", what, c.groups.Len(), len(want))
	}
	c.groups.All(func(w memory.Identity, g *group) {
		if g.id != w || g.x.Len() != want[w] {
			t.Fatalf("%s: writer %+v holds %d records as %+v, want %d", what, w, g.x.Len(), g.id, want[w])
		}
	})
}

// TestWriters checks the cache's writers as records come and go across
// writers, and in a decoded cache; the writers' index itself is tested
// in package writers.
func TestWriters(t *testing.T) {
	rnd := rand.New(rand.NewPCG(16, 17))
	pool := []string{"", "a", "b", "c"}
	c := New()
	held := map[Key]memory.Identity{}
	for range 3000 {
		var w memory.Identity
		for _, s := range writers.Fields(&w) {
			*s = pool[rnd.IntN(len(pool))]
		}
		w.Tenant = pool[1+rnd.IntN(len(pool)-1)]
		// Ids repeat, so a Put may move a record to another writer.
		row := &Row{Fields: rowcodec.Fields{ID: fmt.Sprintf("r%d", rnd.IntN(2000)), Kind: memory.KindFact}}
		c.Put(w, row, randomText(rnd))
		held[Key{w.Tenant, row.ID}] = w
		if rnd.IntN(3) == 0 {
			k := Key{pool[1+rnd.IntN(len(pool)-1)], fmt.Sprintf("r%d", rnd.IntN(2000))}
			if c.Remove(k) != (held[k] != memory.Identity{}) {
				t.Fatalf("Remove(%v) disagrees with what was put", k)
			}
			delete(held, k)
		}
	}
	checkWriters(t, "after the puts", c, held)
	d, err := Decode(c.Encode(nil))
	if err != nil {
		t.Fatal(err)
	}
	checkWriters(t, "decoded", d, held)
	for k := range held {
		c.Remove(k)
	}
	if c.groups.Len() != 0 || c.Len() != 0 {
		t.Errorf("with every record removed, %d writers and %d records are kept", c.groups.Len(), c.Len())
	}
}
