package veccache

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/rowcodec"
	"github.com/agentmem/memory/internal/varint"
	"github.com/agentmem/memory/internal/varint/varinttest"
	"github.com/agentmem/memory/internal/vecindex"
	"github.com/agentmem/memory/internal/writers"
)

var (
	snapshotPool  = []string{"", "a", "b"}
	snapshotKinds = []memory.Kind{memory.KindFact, memory.KindTurn, ""}
)

func snapshotIdentity(rnd *rand.Rand) memory.Identity {
	p := snapshotPool
	return memory.Identity{Tenant: p[1+rnd.IntN(2)], User: p[rnd.IntN(3)], Agent: p[rnd.IntN(3)], Session: p[rnd.IntN(3)]}
}

// randomCache makes n random changes to a cache of dims dimensions —
// puts, replacements across writers, removals — and returns it with its
// model.
func randomCache(rnd *rand.Rand, n, dims int) (*Cache, map[Key]held) {
	c := &Cache{}
	model := map[Key]held{}
	for range n {
		w := snapshotIdentity(rnd)
		row := Row{Fields: rowcodec.Fields{ID: fmt.Sprint("r", rnd.IntN(max(1, n/2))), Kind: snapshotKinds[rnd.IntN(3)], Key: snapshotPool[rnd.IntN(3)],
			Speaker: snapshotPool[rnd.IntN(3)], Created: int64(rnd.IntN(50)) - 10, Asks: rnd.IntN(2) == 0}}
		if rnd.IntN(4) == 0 {
			row.Expires = int64(1 + rnd.IntN(100))
		}
		k := Key{w.Tenant, row.ID}
		if rnd.IntN(5) == 0 {
			c.Remove(k)
			delete(model, k)
			continue
		}
		vec := randomVector(rnd, dims)
		c.Put(w, row, vec)
		model[k] = held{w, row, vec}
	}
	return c, model
}

// checkAgainst checks c's searches, Refs and counts against model.
func checkAgainst(t *testing.T, what string, rnd *rand.Rand, c *Cache, model map[Key]held, dims int) {
	t.Helper()
	if c.Len() != len(model) {
		t.Fatalf("%s: %d vectors, the model %d", what, c.Len(), len(model))
	}
	expiring := 0
	for _, h := range model {
		if h.row.Expires != 0 {
			expiring++
		}
	}
	if c.expiring != expiring {
		t.Fatalf("%s: %d expiring, the model %d", what, c.expiring, expiring)
	}
	for range 30 {
		q := driver.Query{Filter: memory.Filter{Identity: snapshotIdentity(rnd), Match: memory.Field(rnd.IntN(int(memory.AllFields) + 1))}}
		if rnd.IntN(3) == 0 {
			q.Kinds = []memory.Kind{snapshotKinds[rnd.IntN(2)]}
		}
		vec, k, now := randomVector(rnd, dims), 1+rnd.IntN(30), int64(rnd.IntN(120))
		got, err := c.Search(q, vec, k, now)
		if err != nil {
			t.Fatal(err)
		}
		if want := reference(model, q, vec, k, now); !slices.Equal(got, want) {
			t.Fatalf("%s: Search(%+v, k=%d, now=%d):\n got %v\nwant %v", what, q, k, now, got, want)
		}
	}
}

// decodeStreamed decodes data off a stream of length n fed in random
// pieces.
func decodeStreamed(rnd *rand.Rand, data []byte, n int) (*Cache, error) {
	return DecodeStream(varinttest.Feed(rnd, data, n, 2+rnd.IntN(700)))
}

// TestSnapshotRoundTrip checks that a decoded cache, read whole or off a
// stream, with its sets decoded inline or on goroutines, searches as its
// model does, encodes to the same bytes, and takes changes afterwards.
func TestSnapshotRoundTrip(t *testing.T) {
	defer func(n int) { inlineSet = n }(inlineSet)
	rnd := rand.New(rand.NewPCG(21, 22))
	for _, inline := range []int{inlineSet, 0} {
		inlineSet = inline
		for _, n := range []int{0, 1, 40, 3000} {
			const dims = 6
			c, model := randomCache(rnd, n, dims)
			data := c.Encode(nil)
			for _, stream := range []bool{false, true} {
				what := fmt.Sprintf("%d changes, stream %v, inline below %d", n, stream, inline)
				var d *Cache
				var err error
				if stream {
					d, err = decodeStreamed(rnd, data, len(data))
				} else {
					d, err = Decode(data)
				}
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if !bytes.Equal(d.Encode(nil), data) {
					t.Fatalf("%s: the decoded cache encodes differently", what)
				}
				if !slices.Equal(allRefs(d), allRefs(c)) {
					t.Fatalf("%s: Refs differ", what)
				}
				checkAgainst(t, what, rnd, d, model, dims)
				// Changes after decoding: replacements, new records, removals.
				after := map[Key]held{}
				for k, h := range model {
					after[k] = h
				}
				for i := range 200 {
					w := snapshotIdentity(rnd)
					row := Row{Fields: rowcodec.Fields{ID: fmt.Sprint("r", rnd.IntN(max(1, n/2)+50)), Kind: memory.KindFact, Created: int64(i)}}
					k := Key{w.Tenant, row.ID}
					if rnd.IntN(3) == 0 {
						d.Remove(k)
						delete(after, k)
						continue
					}
					vec := randomVector(rnd, dims)
					d.Put(w, row, vec)
					after[k] = held{w, row, vec}
				}
				checkAgainst(t, what+", changed after", rnd, d, after, dims)
			}
		}
	}
}

// allRefs returns c's Refs in one order, of ids repeated across tenants
// too.
func allRefs(c *Cache) []driver.Ref {
	refs := c.Refs()
	slices.SortStableFunc(refs, func(a, b driver.Ref) int {
		return cmp.Or(driver.CompareRefs(a, b), cmp.Compare(a.Identity.Tenant, b.Identity.Tenant))
	})
	return refs
}

// snapshotOf writes a snapshot by hand, for the refusals Encode cannot
// produce: each writer's rows as given, with a set of the given
// dimension and row count.
type handWriter struct {
	w          memory.Identity
	ids        []string
	dims, rows int
}

func snapshotOf(total int, ws []handWriter) []byte {
	dst := append([]byte(snapshotMagic), snapshotFormat)
	dst = binary.AppendUvarint(dst, uint64(total))
	dst = binary.AppendUvarint(dst, uint64(len(ws)))
	for _, hw := range ws {
		w := hw.w
		for _, s := range writers.Fields(&w) {
			dst = varint.AppendString(dst, *s)
		}
		dst = binary.AppendUvarint(dst, uint64(len(hw.ids)))
		set := vecindex.NewSet(hw.dims)
		for i := range hw.rows {
			v := make([]float32, hw.dims)
			v[0] = float32(i + 1)
			set.Add(vecindex.Ref(i), v)
		}
		enc, _ := set.Encode(nil)
		dst = varint.AppendString(dst, string(enc))
		for _, id := range hw.ids {
			dst = varint.AppendString(dst, id)
			dst = append(dst, 0, 0, 0, 0, 0) // kind, key, created, expires, speaker
			dst = append(dst, 0)             // flags
		}
	}
	return dst
}

// TestDecodeRefuses checks each refusal Decode promises, and that no cut
// of a snapshot decodes, whole or off a stream.
func TestDecodeRefuses(t *testing.T) {
	a, b := memory.Identity{Tenant: "t", User: "a"}, memory.Identity{Tenant: "t", User: "b"}
	good := snapshotOf(3, []handWriter{{a, []string{"x", "y"}, 2, 2}, {b, []string{"z"}, 2, 1}})
	if c, err := Decode(good); err != nil || c.Len() != 3 {
		t.Fatalf("the hand-written snapshot: %v, %v", c, err)
	}
	flags := slices.Clone(good)
	flags[len(flags)-1] = 2 // the last row's flags
	cases := map[string][]byte{
		"no magic":             []byte("ATC\x01"),
		"another format":       append([]byte(snapshotMagic), snapshotFormat+1),
		"a writer twice":       snapshotOf(2, []handWriter{{a, []string{"x"}, 2, 1}, {a, []string{"y"}, 2, 1}}),
		"writers out of order": snapshotOf(2, []handWriter{{b, []string{"x"}, 2, 1}, {a, []string{"y"}, 2, 1}}),
		"a record twice":       snapshotOf(2, []handWriter{{a, []string{"x"}, 2, 1}, {b, []string{"x"}, 2, 1}}),
		"a writer, no records": snapshotOf(0, []handWriter{{a, nil, 2, 0}}),
		"more than counted":    snapshotOf(1, []handWriter{{a, []string{"x", "y"}, 2, 2}}),
		"fewer than counted":   snapshotOf(3, []handWriter{{a, []string{"x", "y"}, 2, 2}}),
		"a set too short":      snapshotOf(2, []handWriter{{a, []string{"x", "y"}, 2, 1}}),
		"a set too long":       snapshotOf(1, []handWriter{{a, []string{"x"}, 2, 2}}),
		"dimensions differ":    snapshotOf(2, []handWriter{{a, []string{"x"}, 2, 1}, {b, []string{"y"}, 3, 1}}),
		"unknown flags":        flags,
		"bytes after":          append(slices.Clone(good), 0),
	}
	for n := range len(good) {
		cases[fmt.Sprintf("cut after %d bytes", n)] = good[:n]
	}
	rnd := rand.New(rand.NewPCG(23, 24))
	for name, data := range cases {
		if c, err := Decode(data); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("%s: Decode = %v, %v; want ErrInvalidArgument", name, c, err)
		}
		if c, err := decodeStreamed(rnd, data, len(data)); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("%s: DecodeStream = %v, %v; want ErrInvalidArgument", name, c, err)
		}
	}
	// A stream that ends short of its length.
	if c, err := decodeStreamed(rnd, good[:len(good)-3], len(good)); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("a stream ending short: %v, %v", c, err)
	}
}

// FuzzDecode checks that Decode refuses or accepts any input without
// panicking, alike whole and off a stream, and that a cache it accepts
// encodes back to the same bytes, searches and takes changes.
func FuzzDecode(f *testing.F) {
	rnd := rand.New(rand.NewPCG(25, 26))
	for _, n := range []int{0, 3, 20} {
		c, _ := randomCache(rnd, n, 3)
		f.Add(c.Encode(nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(data)
		s, serr := decodeStreamed(rand.New(rand.NewPCG(uint64(len(data)), 1)), data, len(data))
		if (err == nil) != (serr == nil) {
			t.Fatalf("Decode: %v; off a stream: %v", err, serr)
		}
		if err != nil {
			if !errors.Is(err, memory.ErrInvalidArgument) || !errors.Is(serr, memory.ErrInvalidArgument) {
				t.Fatalf("Decode failed with %v and %v, not ErrInvalidArgument", err, serr)
			}
			return
		}
		if !bytes.Equal(c.Encode(nil), data) || !bytes.Equal(s.Encode(nil), data) {
			t.Fatal("a decoded cache encodes differently")
		}
		q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "t"}}}
		var some *group
		c.groups.All(func(_ memory.Identity, g *group) { some = g })
		if some != nil {
			if _, err := c.Search(q, randomVector(rnd, some.set.Dims()), 5, 0); err != nil {
				t.Fatal(err)
			}
			c.Put(some.id, Row{Fields: rowcodec.Fields{ID: "new"}}, randomVector(rnd, some.set.Dims()))
		}
		for k := range c.byKey {
			c.Remove(k)
		}
		if c.Len() != 0 || c.groups.Len() != 0 {
			t.Fatalf("emptied, the cache holds %d vectors of %d writers", c.Len(), c.groups.Len())
		}
	})
}
