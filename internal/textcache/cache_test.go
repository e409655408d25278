package textcache

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/lexical"
	"github.com/agentmem/memory/internal/rowcodec"
)

// stored is a record as the test's reference holds it.
type stored struct {
	writer  memory.Identity
	row     *Row
	content string
}

var words = strings.Fields("parcel parcels late delivery order refund tea green coffee the a is of again ship courier paris café 2024")

func randomText(rnd *rand.Rand) string {
	n := 1 + rnd.IntN(12)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[rnd.IntN(len(words))]
	}
	return strings.Join(ws, " ")
}

// TestSearchMatchesReference puts, replaces and removes random records of
// several writers and checks every search against lexical.Rank over the
// records the filter matches: the same ids, order and scores.
func TestSearchMatchesReference(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	writers := []memory.Identity{
		{Tenant: "a", User: "u0", Session: "s0"}, {Tenant: "a", User: "u0", Session: "s1"},
		{Tenant: "a", User: "u1", Session: "s0"}, {Tenant: "b", User: "u0", Session: "s0"},
	}
	c := New()
	ref := map[Key]stored{}
	for step := range 3000 {
		id := fmt.Sprintf("r%03d", rnd.IntN(300))
		w := writers[rnd.IntN(len(writers))]
		k := Key{w.Tenant, id}
		switch {
		case rnd.IntN(5) == 0:
			if got, want := c.Remove(k), ref[k].row != nil; got != want {
				t.Fatalf("step %d: Remove(%v) = %v, want %v", step, k, got, want)
			}
			delete(ref, k)
		default:
			// Mostly facts and turns, and 70 other kinds, more than
			// kinds have tags of their own (lexical.OtherTag).
			kind := []memory.Kind{memory.KindFact, memory.KindTurn}[rnd.IntN(2)]
			if rnd.IntN(4) == 0 {
				kind = memory.Kind(fmt.Sprintf("kind-%d", rnd.IntN(70)))
			}
			row := &Row{Fields: rowcodec.Fields{ID: id, Kind: kind,
				Key: fmt.Sprintf("k%d", rnd.IntN(3)), Created: int64(rnd.IntN(50)),
				Speaker: []string{"", "Ann", "Bo"}[rnd.IntN(3)], Asks: rnd.IntN(4) == 0}}
			if rnd.IntN(6) == 0 {
				row.Expires = int64(1 + rnd.IntN(100))
			}
			content := randomText(rnd)
			if rnd.IntN(20) == 0 {
				content = ""
			}
			c.Apply(Change{Key: k, Writer: w, Row: row, Content: content})
			if content == "" {
				delete(ref, k)
			} else {
				ref[k] = stored{w, row, content}
			}
		}
		if c.Len() != len(ref) {
			t.Fatalf("step %d: Len = %d, want %d", step, c.Len(), len(ref))
		}
		expiring := 0
		for _, s := range ref {
			if s.row.Expires != 0 {
				expiring++
			}
		}
		if c.expiring != expiring {
			t.Fatalf("step %d: %d records counted as expiring, want %d", step, c.expiring, expiring)
		}
		if step%50 == 0 {
			checkSearches(t, step, c, ref, writers, rnd)
		}
	}
	// With no record expiring, and no key or ids named, a search reads
	// no record to choose among kinds that have tags of their own.
	for k, s := range ref {
		if s.row.Expires != 0 {
			c.Remove(k)
			delete(ref, k)
		}
	}
	if c.expiring != 0 {
		t.Fatalf("%d records counted as expiring, want none", c.expiring)
	}
	for i := range 20 {
		checkSearches(t, 3000+i, c, ref, writers, rnd)
	}
	if c.kindTags.Own() != lexical.OtherTag-1 {
		t.Fatalf("%d kinds have tags of their own: the test means to use them all, and OtherTag", c.kindTags.Own())
	}
}

// checkSearches checks searches of c, of several queries, against
// lexical.Rank over the records ref holds, and c.WriterRefs.
func checkSearches(t *testing.T, step int, c *Cache, ref map[Key]stored, writers []memory.Identity, rnd *rand.Rand) {
	t.Helper()
	// A kind of the records held that has no tag of its own, if any.
	var other []memory.Kind
	for _, s := range ref {
		if c.kindTags.Of(s.row.Kind) == lexical.OtherTag {
			other = append(other, s.row.Kind)
			break
		}
	}
	for _, q := range []driver.Query{
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "a"}}},
		{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldUser, Identity: memory.Identity{Tenant: "a", User: "u0"}}, Kinds: []memory.Kind{memory.KindFact}},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "b"}}, Key: "k1"},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "a"}}, IDs: []string{"r001", "r002", "r100"}},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "a"}}, Kinds: []memory.Kind{memory.KindTurn, "kind-3"}},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "a"}}, Kinds: []memory.Kind{"kind-66"}},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "a"}}, Kinds: []memory.Kind{"kind-1", "absent"}},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "a"}}, Kinds: append(other, memory.KindFact)},
	} {
		text, k, now := randomText(rnd), 1+rnd.IntN(20), int64(rnd.IntN(100))
		found, err := c.Search(q, text, k, now)
		ids, scores := idsAndScores(found)
		if err != nil {
			t.Fatal(err)
		}
		var docs []lexical.Doc[*Row]
		for _, s := range ref {
			if q.Filter.Matches(s.writer) {
				docs = append(docs, lexical.Doc[*Row]{Ref: s.row, Text: s.content})
			}
		}
		keep := func(r *Row) bool { return (r.Expires == 0 || now < r.Expires) && q.MatchesRest(r.ID, r.Kind, r.Key) }
		want, err := lexical.Rank(text, docs, lexical.DefaultParams(), k, lexical.ByScore(func(a, b *Row) bool {
			if a.Created != b.Created {
				return a.Created > b.Created
			}
			return a.ID > b.ID
		}), keep)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != len(want) {
			t.Fatalf("step %d, %q: %d hits %v, want %d", step, text, len(ids), ids, len(want))
		}
		for i, h := range want {
			if ids[i] != h.Ref.ID || math.Abs(scores[i]-h.Score) > 1e-9 {
				t.Fatalf("step %d, %q: hit %d is %s (%v), want %s (%v)", step, text, i, ids[i], scores[i], h.Ref.ID, h.Score)
			}
			if got, want := found[i].Ref, refOf(ref[Key{found[i].Ref.Identity.Tenant, h.Ref.ID}]); got != want {
				t.Fatalf("step %d, %q: hit %d's Ref is %+v, want %+v", step, text, i, got, want)
			}
		}
		checkWriterRefs(t, c, q, writers, ref, now)
	}
}

// checkWriterRefs checks c.WriterRefs for q and every writer against the
// records ref holds.
func checkWriterRefs(t *testing.T, c *Cache, q driver.Query, writers []memory.Identity, ref map[Key]stored, now int64) {
	t.Helper()
	got := c.WriterRefs(q, append(writers, memory.Identity{Tenant: "a", User: "nobody"}), now)
	if len(got) != len(writers)+1 {
		t.Fatalf("WriterRefs of %d writers returned %d lists", len(writers)+1, len(got))
	}
	for i, w := range writers {
		var want []driver.Ref
		for _, s := range ref {
			r := s.row
			if s.writer == w && q.Filter.Matches(w) && (r.Expires == 0 || now < r.Expires) && q.MatchesRest(r.ID, r.Kind, r.Key) {
				want = append(want, refOf(s))
			}
		}
		slices.SortFunc(want, driver.CompareRefs)
		if !slices.Equal(got[i], want) {
			t.Fatalf("WriterRefs(%+v) for writer %+v at %d:\n got %+v\nwant %+v", q, w, now, got[i], want)
		}
	}
	if got[len(writers)] != nil {
		t.Fatalf("WriterRefs of a writer without records: %+v", got[len(writers)])
	}
}

// refOf is the driver.Ref of a stored record.
func refOf(s stored) driver.Ref {
	return driver.Ref{ID: s.row.ID, Kind: s.row.Kind, Identity: s.writer, Created: time.Unix(0, s.row.Created).UTC(),
		Speaker: s.row.Speaker, Asks: s.row.Asks}
}

// TestPutMovesAcrossWriters checks that a record put again under another
// writer of its tenant leaves the first writer's index.
func TestPutMovesAcrossWriters(t *testing.T) {
	c := New()
	a := memory.Identity{Tenant: "t", User: "a"}
	b := memory.Identity{Tenant: "t", User: "b"}
	c.Put(a, &Row{Fields: rowcodec.Fields{ID: "x"}}, "parcel")
	c.Put(b, &Row{Fields: rowcodec.Fields{ID: "x"}}, "parcel")
	qa := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldUser, Identity: a}}
	if found, _ := c.Search(qa, "parcel", 5, 0); len(found) != 0 {
		t.Errorf("writer a's search found %v after x moved to writer b", found)
	}
	if c.Len() != 1 || c.groups.Len() != 1 {
		t.Errorf("Len %d, %d writer groups; want 1 and 1", c.Len(), c.groups.Len())
	}
}

// idsAndScores returns the ids and scores of matches.
func idsAndScores(ms []driver.RefMatch) ([]string, []float64) {
	ids := make([]string, len(ms))
	scores := make([]float64, len(ms))
	for i, m := range ms {
		ids[i], scores[i] = m.Ref.ID, m.Score
	}
	return ids, scores
}

// TestSearchSeesWritersChange checks that a search finds the writers a
// filter matches as they are now, though the same filter was searched
// before a writer came or went (matched).
func TestSearchSeesWritersChange(t *testing.T) {
	c := New()
	tenant := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "a"}}}
	found := func(step string, want ...string) {
		t.Helper()
		for range 2 { // the second search reads what the first remembered
			got, err := c.Search(tenant, "porto", 10, 0)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, m := range got {
				ids = append(ids, m.Ref.ID)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, want) {
				t.Fatalf("%s: found %v, want %v", step, ids, want)
			}
		}
	}
	put := func(session, id string) {
		w := memory.Identity{Tenant: "a", User: "u", Session: session}
		c.Put(w, &Row{Fields: rowcodec.Fields{ID: id, Kind: memory.KindFact}}, "moved to porto")
	}
	put("s1", "r1")
	found("one writer", "r1")
	put("s2", "r2")
	found("a writer more", "r1", "r2")
	c.Remove(Key{"a", "r1"})
	if c.matched.parts != nil {
		t.Fatal("a writer went, and the cache still remembers the writers before")
	}
	found("a writer gone", "r2")
	put("s1", "r3")
	found("a writer back", "r2", "r3")
}
