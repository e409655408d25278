package textcache

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/rowcodec"
	"github.com/agentmem/memory/internal/varint"
	"github.com/agentmem/memory/internal/varint/varinttest"
)

// randomCache returns a cache of n random records of a few writers, some
// replaced or removed, and the records it holds.
func randomCache(rnd *rand.Rand, n int) (*Cache, map[Key]stored) {
	writers := []memory.Identity{
		{Tenant: "a", User: "u0", Session: "s0"}, {Tenant: "a", User: "u1", Agent: "ag", Session: "s1"},
		{Tenant: "b", Squad: "sq", Instance: "i"},
	}
	c := New()
	ref := map[Key]stored{}
	for range n {
		w := writers[rnd.IntN(len(writers))]
		row := &Row{Fields: rowcodec.Fields{ID: fmt.Sprintf("r%04d", rnd.IntN(n/2+1)), Kind: []memory.Kind{memory.KindFact, memory.KindTurn}[rnd.IntN(2)],
			Key: fmt.Sprintf("k%d", rnd.IntN(3)), Created: rnd.Int64N(1 << 50),
			Speaker: []string{"", "Ann", "Bo Li"}[rnd.IntN(3)], Asks: rnd.IntN(3) == 0}}
		if rnd.IntN(4) == 0 {
			row.Expires = rnd.Int64N(1 << 50)
		}
		k := Key{w.Tenant, row.ID}
		if rnd.IntN(6) == 0 {
			c.Remove(k)
			delete(ref, k)
			continue
		}
		content := randomText(rnd)
		c.Put(w, row, content)
		ref[k] = stored{w, row, content}
	}
	return c, ref
}

// sameSearch checks that a and b rank queries alike.
func sameSearch(t *testing.T, what string, a, b *Cache, rnd *rand.Rand) {
	t.Helper()
	if a.Len() != b.Len() {
		t.Fatalf("%s: %d records, want %d", what, b.Len(), a.Len())
	}
	for _, q := range []driver.Query{
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "a"}}},
		{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldUser, Identity: memory.Identity{Tenant: "a", User: "u1"}}, Kinds: []memory.Kind{memory.KindTurn}},
		{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "b"}}, Key: "k2"},
	} {
		for range 10 {
			text, now := randomText(rnd), rnd.Int64N(1<<50)
			fa, err := a.Search(q, text, 10, now)
			ia, sa := idsAndScores(fa)
			if err != nil {
				t.Fatal(err)
			}
			fb, err := b.Search(q, text, 10, now)
			ib, sb := idsAndScores(fb)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ia, sa) != fmt.Sprint(ib, sb) {
				t.Fatalf("%s: %q finds %v %v, want %v %v", what, text, ib, sb, ia, sa)
			}
			for i := range fa {
				if fa[i].Ref != fb[i].Ref {
					t.Fatalf("%s: %q gives the Ref %+v, want %+v", what, text, fb[i].Ref, fa[i].Ref)
				}
				if fa[i].WriterScore != fb[i].WriterScore {
					t.Fatalf("%s: %q gives %s writer score %v, want %v", what, text, fb[i].Ref.ID, fb[i].WriterScore, fa[i].WriterScore)
				}
			}
		}
	}
}

// TestSnapshotRoundTrip checks that a decoded snapshot searches as the
// cache encoded, encodes to the same bytes, holds the same rows and takes
// further changes as the original does.
func TestSnapshotRoundTrip(t *testing.T) {
	rnd := rand.New(rand.NewPCG(8, 9))
	c, ref := randomCache(rnd, 3000)
	data := c.Encode(nil)
	d, err := Decode(data)
	if err != nil {
		t.Fatalf("Decode of what Encode wrote: %v", err)
	}
	sameSearch(t, "the decoded cache", c, d, rnd)
	if d.expiring != c.expiring {
		t.Errorf("the decoded cache counts %d expiring records, want %d", d.expiring, c.expiring)
	}
	for k, s := range ref {
		got := d.byKey.Get(k.Tenant, k.ID)
		if got == nil || got.g.id != s.writer {
			t.Fatalf("the decoded cache holds %+v under %v, want a row of %+v", got, k, s.writer)
		}
		g, w := *got, *s.row
		g.g, w.g, g.sameHash, w.sameHash, g.doc, w.doc = nil, nil, nil, nil, 0, 0
		if g != w {
			t.Fatalf("the decoded cache holds %+v under %v, want %+v", g, k, w)
		}
	}
	if again := d.Encode(nil); !bytes.Equal(again, data) {
		t.Errorf("the decoded cache encodes to %d other bytes (of %d)", len(again), len(data))
	}
	for range 500 {
		w := memory.Identity{Tenant: "a", User: "u0", Session: "s0"}
		row := &Row{Fields: rowcodec.Fields{ID: fmt.Sprintf("r%04d", rnd.IntN(2000)), Kind: memory.KindFact}}
		text := randomText(rnd)
		c.Put(w, row, text)
		d.Put(w, &Row{Fields: rowcodec.Fields{ID: row.ID, Kind: row.Kind}}, text)
		k := Key{"b", fmt.Sprintf("r%04d", rnd.IntN(1500))}
		if c.Remove(k) != d.Remove(k) {
			t.Fatalf("Remove(%v) disagrees between the original and the decoded cache", k)
		}
	}
	sameSearch(t, "the decoded cache after changes", c, d, rnd)
	if e, err := Decode(New().Encode(nil)); err != nil || e.Len() != 0 {
		t.Errorf("Decode of an empty cache's snapshot = %v, %v", e, err)
	}
}

// TestDecodeRefuses checks that damaged snapshots are refused with
// memory.ErrInvalidArgument: every prefix of a good one, every byte of it
// changed, and one of another analyzer.
func TestDecodeRefuses(t *testing.T) {
	rnd := rand.New(rand.NewPCG(10, 11))
	c, _ := randomCache(rnd, 40)
	good := c.Encode(nil)
	for n := range len(good) {
		if _, err := Decode(good[:n]); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Fatalf("Decode of the first %d of %d bytes = %v, want ErrInvalidArgument", n, len(good), err)
		}
	}
	for i := range good {
		bad := bytes.Clone(good)
		bad[i] ^= 0xff
		if _, err := Decode(bad); err != nil && !errors.Is(err, memory.ErrInvalidArgument) {
			t.Fatalf("Decode with byte %d changed = %v, want nil or ErrInvalidArgument", i, err)
		}
	}
	other := append([]byte(snapshotMagic+"\x01"), varint.AppendString(nil, "0-another")...)
	other = append(other, good[len(other):]...)
	if _, err := Decode(other); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Decode of another analyzer's snapshot = %v, want ErrInvalidArgument", err)
	}
	if _, err := Decode(append(bytes.Clone(good), 0)); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Decode with a byte left over = %v, want ErrInvalidArgument", err)
	}
}

// decodeStreamed decodes data with DecodeStream off a stream of length n,
// fed in pieces of random sizes on another goroutine.
func decodeStreamed(rnd *rand.Rand, data []byte, n int) (*Cache, error) {
	return DecodeStream(varinttest.Feed(rnd, data, n, len(data)/5+8))
}

// TestDecodeStream checks that decoding off a stream fed in pieces, each
// writer's index on a goroutine, gives what Decode does, and that a
// stream ending short is refused.
func TestDecodeStream(t *testing.T) {
	defer func(n int) { inline = n }(inline)
	inline = 0 // every index on a goroutine
	rnd := rand.New(rand.NewPCG(14, 15))
	c, _ := randomCache(rnd, 3000)
	data := c.Encode(nil)
	for range 20 {
		d, err := decodeStreamed(rnd, data, len(data))
		if err != nil {
			t.Fatal(err)
		}
		if again := d.Encode(nil); !bytes.Equal(again, data) {
			t.Fatalf("the cache decoded off a stream encodes to %d other bytes (of %d)", len(again), len(data))
		}
		sameSearch(t, "the cache decoded off a stream", c, d, rnd)
	}
	for range 200 {
		n := rnd.IntN(len(data))
		if _, err := decodeStreamed(rnd, data[:n], len(data)); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Fatalf("a stream ending after %d of %d bytes: %v, want ErrInvalidArgument", n, len(data), err)
		}
	}
}

// FuzzDecode checks that Decode refuses or accepts any input without
// panicking, and that a cache it accepts searches and takes changes.
func FuzzDecode(f *testing.F) {
	rnd := rand.New(rand.NewPCG(12, 13))
	for _, n := range []int{0, 3, 20} {
		c, _ := randomCache(rnd, n)
		f.Add(c.Encode(nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Decode(data)
		s, serr := decodeStreamed(rand.New(rand.NewPCG(uint64(len(data)), 1)), data, len(data))
		if (err == nil) != (serr == nil) {
			t.Fatalf("Decode: %v; off a stream: %v", err, serr)
		}
		if err == nil && !bytes.Equal(c.Encode(nil), s.Encode(nil)) {
			t.Fatal("the caches decoded whole and off a stream differ")
		}
		if err != nil {
			if !errors.Is(err, memory.ErrInvalidArgument) {
				t.Fatalf("Decode failed with %v, not ErrInvalidArgument", err)
			}
			return
		}
		q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "a"}}}
		if _, err := c.Search(q, "parcel tea", 5, 0); err != nil {
			t.Fatal(err)
		}
		for r := range c.byKey.All() {
			c.Remove(Key{r.g.id.Tenant, r.ID})
			break
		}
		c.Put(memory.Identity{Tenant: "a"}, &Row{Fields: rowcodec.Fields{ID: "new"}}, "parcel")
	})
}
