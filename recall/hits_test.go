package recall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// TestHitSet checks the set against a map by id, with many records
// created at the same instant and Refs of one record held apart (as the
// two halves of a hybrid recall hold them).
func TestHitSet(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	created := map[string]time.Time{}
	refOf := func(id string) *driver.Ref {
		c, ok := created[id]
		if !ok {
			c = t0.Add(time.Duration(rnd.IntN(20)) * time.Second) // few instants: chains
			created[id] = c
		}
		return &driver.Ref{ID: id, Created: c.In(time.FixedZone("x", rnd.IntN(5)*3600))}
	}
	s := newHitSet(0)
	want := map[string]int{}
	for range 3000 {
		id := fmt.Sprint("r", rnd.IntN(400))
		ref := refOf(id)
		if rnd.IntN(2) == 0 {
			got, w, ok := s.find(ref), want[id], false
			if _, ok = want[id]; !ok {
				w = -1
			}
			if got != w {
				t.Fatalf("find(%s) = %d, want %d", id, got, w)
			}
			continue
		}
		i := s.add(ref)
		if w, ok := want[id]; ok && i != w {
			t.Fatalf("add(%s) = %d, want its hit %d", id, i, w)
		} else if !ok {
			if i != len(want) {
				t.Fatalf("add(%s) = %d, want a new hit %d", id, i, len(want))
			}
			want[id] = i
		}
		if s.hits[i].ref.ID != id {
			t.Fatalf("hit %d is %s, want %s", i, s.hits[i].ref.ID, id)
		}
	}
	if len(s.hits) != len(want) {
		t.Fatalf("%d hits for %d records", len(s.hits), len(want))
	}
}

// fixedSource is a source whose read finds every id among recs.
type fixedSource struct{ recs map[string]memory.Record }

func (s fixedSource) rank(context.Context, driver.Query, string, int) ([]driver.RefMatch, error) {
	return nil, nil
}

func (s fixedSource) writerRefs(context.Context, driver.Query, []memory.Identity) ([][]driver.Ref, error) {
	return nil, nil
}

func (s fixedSource) read(_ context.Context, _ driver.Query, ids []string) (map[string]memory.Record, error) {
	out := map[string]memory.Record{}
	for _, id := range ids {
		if r, ok := s.recs[id]; ok {
			out[id] = r
		}
	}
	return out, nil
}

// TestFusedReplacementReadOnce checks that a record the two halves saw
// under two creation times, replaced between their searches, is one
// result: fusion keeps two hits, read the first.
func TestFusedReplacementReadOnce(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lexical := []hit{{ref: &driver.Ref{ID: "a", Created: t0}, score: 2}, {ref: &driver.Ref{ID: "b", Created: t0}, score: 1}}
	vector := []hit{{ref: &driver.Ref{ID: "a", Created: t0.Add(time.Second)}, score: 0.9}, {ref: &driver.Ref{ID: "c", Created: t0}, score: 0.1}}
	fused := fuseScores(lexical, vector)
	if len(fused) != 4 {
		t.Fatalf("fusion gave %d hits, want 4 (a twice)", len(fused))
	}
	src := fixedSource{recs: map[string]memory.Record{"a": {ID: "a"}, "b": {ID: "b"}, "c": {ID: "c"}}}
	got, err := read(context.Background(), src, driver.Query{}, fused, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range got {
		ids = append(ids, h.rec.ID)
	}
	// Scaled, a and a' score 1, b and c 0; among equals the newer
	// first, then the greater id.
	if fmt.Sprint(ids) != "[a c b]" {
		t.Fatalf("read kept %v, want [a c b]", ids)
	}
}
