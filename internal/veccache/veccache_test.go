package veccache

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/rowcodec"
	"github.com/agentmem/memory/internal/vecmath"
)

// held is the test's model of one stored record.
type held struct {
	w   memory.Identity
	row Row
	vec []float32
}

// reference scores every held record q matches at now against vec, as
// Search promises: cosine of the normalised vectors, best first, ties
// newest first then by id descending.
func reference(model map[Key]held, q driver.Query, vec []float32, k int, now int64) []driver.RefMatch {
	nq := make([]float32, len(vec))
	vecmath.Normalize(nq, vec)
	var out []driver.RefMatch
	for _, h := range model {
		r := h.row
		if !q.Filter.Matches(h.w) || (r.Expires != 0 && now >= r.Expires) || !q.MatchesRest(r.ID, r.Kind, r.Key) {
			continue
		}
		nv := make([]float32, len(h.vec))
		vecmath.Normalize(nv, h.vec)
		out = append(out, driver.RefMatch{Ref: driver.Ref{ID: r.ID, Kind: r.Kind, Identity: h.w, Created: time.Unix(0, r.Created).UTC(),
			Speaker: r.Speaker, Asks: r.Asks}, Score: float64(vecmath.Dot(nq, nv))})
	}
	slices.SortFunc(out, func(a, b driver.RefMatch) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return driver.CompareRefs(a.Ref, b.Ref)
	})
	return out[:min(k, len(out))]
}

func randomVector(rnd *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(rnd.IntN(5) - 2) // few values: equal scores happen
	}
	v[rnd.IntN(dims)] += 0.5 // never the zero vector
	return v
}

// TestSearchMatchesReference puts, replaces (also across writers) and
// removes random records, and checks every search against scoring every
// record: the same refs, order and scores.
func TestSearchMatchesReference(t *testing.T) {
	const dims = 8
	rnd := rand.New(rand.NewPCG(3, 4))
	pool := []string{"", "a", "b"}
	kinds := []memory.Kind{memory.KindFact, memory.KindTurn, memory.KindSummary}
	var c Cache
	model := map[Key]held{}
	randomIdentity := func() memory.Identity {
		w := memory.Identity{Tenant: pool[1+rnd.IntN(2)], User: pool[rnd.IntN(3)], Session: pool[rnd.IntN(3)]}
		return w
	}
	for i := range 4000 {
		w := randomIdentity()
		row := Row{Fields: rowcodec.Fields{ID: fmt.Sprint("r", rnd.IntN(600)), Kind: kinds[rnd.IntN(len(kinds))], Key: pool[rnd.IntN(3)],
			Speaker: pool[rnd.IntN(3)], Created: int64(rnd.IntN(50)), Asks: rnd.IntN(2) == 0}}
		if rnd.IntN(4) == 0 {
			row.Expires = int64(1 + rnd.IntN(100))
		}
		k := Key{w.Tenant, row.ID}
		switch rnd.IntN(6) {
		case 0:
			if c.Remove(k) != (model[k].vec != nil) {
				t.Fatalf("Remove(%v) disagrees with the model", k)
			}
			delete(model, k)
		case 1:
			c.Apply(Change{Key: k, Writer: w, Row: row}) // stored without a vector
			delete(model, k)
		default:
			vec := randomVector(rnd, dims)
			c.Apply(Change{Key: k, Writer: w, Row: row, Vector: vec})
			model[k] = held{w, row, vec}
		}
		if c.Len() != len(model) {
			t.Fatalf("after %d changes the cache holds %d vectors, the model %d", i+1, c.Len(), len(model))
		}
		if i%40 != 0 {
			continue
		}
		q := driver.Query{Filter: memory.Filter{Identity: randomIdentity(), Match: memory.Field(rnd.IntN(int(memory.AllFields) + 1))}}
		if rnd.IntN(3) == 0 {
			q.Kinds = []memory.Kind{kinds[rnd.IntN(len(kinds))]}
		}
		if rnd.IntN(4) == 0 {
			q.Key = pool[1+rnd.IntN(2)]
		}
		vec, k2, now := randomVector(rnd, dims), 1+rnd.IntN(30), int64(rnd.IntN(120))
		got, err := c.Search(q, vec, k2, now)
		if err != nil {
			t.Fatal(err)
		}
		if want := reference(model, q, vec, k2, now); !slices.Equal(got, want) {
			t.Fatalf("after %d changes, Search(%+v, k=%d, now=%d):\n got %v\nwant %v", i+1, q, k2, now, got, want)
		}
	}
	want := make([]driver.Ref, 0, len(model))
	for _, h := range model {
		want = append(want, driver.Ref{ID: h.row.ID, Kind: h.row.Kind, Identity: h.w, Created: time.Unix(0, h.row.Created).UTC(), Speaker: h.row.Speaker, Asks: h.row.Asks})
	}
	// Ids repeat across tenants: order each list wholly before comparing.
	byTenantToo := func(a, b driver.Ref) int {
		return cmp.Or(driver.CompareRefs(a, b), cmp.Compare(a.Identity.Tenant, b.Identity.Tenant))
	}
	slices.SortFunc(want, byTenantToo)
	got := c.Refs()
	slices.SortStableFunc(got, byTenantToo)
	if !slices.Equal(got, want) {
		t.Fatalf("Refs differ from the model's")
	}
	for k := range model {
		c.Remove(k)
	}
	if c.Len() != 0 || c.groups.Len() != 0 || c.expiring != 0 {
		t.Errorf("emptied, the cache keeps %d vectors, %d writers, %d expiring", c.Len(), c.groups.Len(), c.expiring)
	}
}

// TestPutRefusesUnscorable checks that a vector the search cannot score
// is not kept, and that it removes what the key held.
func TestPutRefusesUnscorable(t *testing.T) {
	var c Cache
	w := memory.Identity{Tenant: "t"}
	c.Put(w, Row{Fields: rowcodec.Fields{ID: "a"}}, []float32{1, 0})
	c.Put(w, Row{Fields: rowcodec.Fields{ID: "a"}}, []float32{0, 0})
	if c.Len() != 0 || c.groups.Len() != 0 {
		t.Fatalf("a zero vector replaced a stored one: %d vectors, %d writers", c.Len(), c.groups.Len())
	}
	c.Put(w, Row{Fields: rowcodec.Fields{ID: "b"}}, []float32{1, 0})
	got, err := c.Search(driver.Query{Filter: memory.Filter{Identity: w, Match: memory.FieldTenant}}, []float32{1, 1}, 5, 0)
	if err != nil || len(got) != 1 || got[0].Ref.ID != "b" {
		t.Fatalf("Search = %v, %v; want b alone", got, err)
	}
	if _, err := c.Search(driver.Query{Filter: memory.Filter{Identity: w, Match: memory.FieldTenant}}, []float32{0, 0}, 5, 0); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("a zero query: %v, want memory.ErrInvalidArgument", err)
	}
}

// TestReserve checks that reserving room changes nothing a search sees,
// for a writer then filled and for one never filled.
func TestReserve(t *testing.T) {
	var c Cache
	a, b := memory.Identity{Tenant: "t", User: "a"}, memory.Identity{Tenant: "t", User: "b"}
	c.Reserve(a, 2, 3)
	c.Reserve(b, 2, 5)
	c.Reserve(a, 0, 3) // refused: no dimension
	for i := range 3 {
		c.Put(a, Row{Fields: rowcodec.Fields{ID: fmt.Sprint("a", i), Created: int64(i)}}, []float32{1, float32(i)})
	}
	if c.Len() != 3 {
		t.Fatalf("%d vectors, want 3", c.Len())
	}
	got, err := c.Search(driver.Query{Filter: memory.Filter{Identity: a, Match: memory.FieldTenant}}, []float32{1, 0}, 10, 0)
	if err != nil || len(got) != 3 || got[0].Ref.ID != "a0" {
		t.Fatalf("Search = %v, %v; want a0 first of 3", got, err)
	}
	for i := range 3 {
		c.Remove(Key{"t", fmt.Sprint("a", i)})
	}
	if c.Len() != 0 {
		t.Fatalf("%d vectors left", c.Len())
	}
}
