package lexical

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agentmem/memory/internal/varint"
)

// slotRef is a reference that keeps its own document id.
type slotRef struct {
	n   int
	doc int32
}

func slotOf(r *slotRef) *int32 { return &r.doc }

// TestSlottedIndexAgrees runs random adds and removes, compactions among
// them, on a mapped and a slotted index side by side, and checks that
// they agree on every answer: Len, Removed, Has, Stats, searches, Refs
// and their encodings, also once the slotted one is decoded slotted.
func TestSlottedIndexAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	mapped, slotted := NewIndex[int](), NewSlottedIndex(slotOf)
	refs := map[int]*slotRef{}
	var live []int
	bySlot := ByScore(func(a, b *slotRef) bool { return a.n > b.n })
	numbers := func(hits []Hit[*slotRef]) []Hit[int] {
		out := make([]Hit[int], len(hits))
		for i, h := range hits {
			out[i] = Hit[int]{Ref: h.Ref.n, Score: h.Score}
		}
		return out
	}
	agree := func(step int, x *Index[*slotRef], refs map[int]*slotRef, what string) {
		t.Helper()
		// A decoded index holds no removed documents.
		if x.Len() != mapped.Len() || x == slotted && x.Removed() != mapped.Removed() {
			t.Fatalf("step %d, %s: Len %d Removed %d, mapped %d %d", step, what, x.Len(), x.Removed(), mapped.Len(), mapped.Removed())
		}
		for range 5 {
			n := rng.IntN(step + 2)
			r := refs[n]
			if r == nil {
				r = &slotRef{n: n, doc: int32(rng.IntN(step + 2))} // a stale slot
			}
			if x.Has(r) != mapped.Has(n) {
				t.Fatalf("step %d, %s: Has(%d) %v, mapped %v", step, what, n, x.Has(r), mapped.Has(n))
			}
		}
		q := NewQuery(randomQuery(rng))
		if a, b := x.Stats(&q), mapped.Stats(&q); a.Docs != b.Docs || a.Length != b.Length || !slices.Equal(a.DF, b.DF) {
			t.Fatalf("step %d, %s: Stats %+v, mapped %+v", step, what, a, b)
		}
		got, err := x.Search(&q, DefaultParams(), NewTopK(5, bySlot), nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := mapped.Search(&q, DefaultParams(), NewTopK(5, byID), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(numbers(got), want) {
			t.Fatalf("step %d, %s: Search %v, mapped %v", step, what, numbers(got), want)
		}
		var a, b []int
		for r := range x.Refs() {
			a = append(a, r.n)
		}
		for r := range mapped.Refs() {
			b = append(b, r)
		}
		if !slices.Equal(a, b) {
			t.Fatalf("step %d, %s: Refs %v, mapped %v", step, what, a, b)
		}
		ea, ra := x.Encode(nil)
		eb, rb := mapped.Encode(nil)
		if !bytes.Equal(ea, eb) || len(ra) != len(rb) {
			t.Fatalf("step %d, %s: the encodings differ", step, what)
		}
	}
	for step := range 3000 {
		if len(live) > 0 && rng.IntN(2) == 0 {
			i := rng.IntN(len(live))
			n := live[i]
			live = slices.Delete(live, i, i+1)
			if !slotted.Remove(refs[n]) || !mapped.Remove(n) || slotted.Remove(refs[n]) {
				t.Fatalf("step %d: Remove of %d", step, n)
			}
		} else {
			text := randomText(rng, rng.IntN(12))
			r := &slotRef{n: step, doc: int32(rng.IntN(step + 1))} // its slot starts stale
			refs[step] = r
			if !slotted.Add(r, text) || !mapped.Add(step, text) || slotted.Add(r, "again") {
				t.Fatalf("step %d: Add", step)
			}
			live = append(live, step)
		}
		agree(step, slotted, refs, "slotted")
		if step%97 == 0 {
			data, order := slotted.Encode(nil)
			fresh := make([]*slotRef, len(order))
			freshRefs := map[int]*slotRef{}
			for i, r := range order {
				fresh[i] = &slotRef{n: r.n, doc: int32(rng.IntN(3))}
				freshRefs[r.n] = fresh[i]
			}
			dec, err := DecodeIndexFrom(varint.Reader{B: data}, fresh, slotOf)
			if err != nil {
				t.Fatal(err)
			}
			y := NewCorpus[*slotRef]().Attach(dec)
			agree(step, y, freshRefs, "decoded slotted")
		}
	}
	data, order := slotted.Encode(nil)
	if len(order) > 1 {
		twice := slices.Clone(order)
		twice[1] = twice[0]
		if _, err := DecodeIndexFrom(varint.Reader{B: data}, twice, slotOf); err == nil {
			t.Error("a slotted decode took one reference for two documents")
		}
		withNil := slices.Clone(order)
		withNil[1] = nil
		if _, err := DecodeIndexFrom(varint.Reader{B: data}, withNil, slotOf); err == nil {
			t.Error("a slotted decode took a nil reference")
		}
	}
}

// TestMarksWrap checks that a search's marks (scratch.unmark) still tell
// its partitions apart when the generation wraps: a partition marked by
// an earlier search is not taken for one of this one.
func TestMarksWrap(t *testing.T) {
	c := NewCorpus[int]()
	a, b := c.NewIndex(), c.NewIndex()
	a.Add(1, "alpha")
	b.Add(2, "alpha")
	s := new(scratch)
	if parts, _ := distinct([]*Index[int]{a, b}, s); len(parts) != 2 {
		t.Fatalf("%d partitions", len(parts))
	}
	// b's mark is left at the generation the wrap comes back to.
	s.gen = math.MaxUint32
	s.marks[b.num] = 1
	parts, got := distinct([]*Index[int]{a, a, b}, s)
	if got != c || len(parts) != 2 || parts[0] != a || parts[1] != b {
		t.Fatalf("after the wrap: %d partitions, corpus %v", len(parts), got == c)
	}
	if k, ok := s.placeOf(b.num); !ok || k != 1 {
		t.Fatalf("b at %d, %v", k, ok)
	}
}
