package qdrantserver

import (
	"context"
	"testing"

	"github.com/qdrant/go-client/qdrant"
)

// TestPayloadByFilter: SetPayload, OverwritePayload and DeletePayload
// select points by filter (points_selector = filter) as well as by ids, the
// filter read when the operation runs. This is the mark, count, delete
// recipe a driver uses to learn how many points a delete removed: Qdrant's
// DeletePoints returns only an UpdateResult {operation_id, status}, no count.
//
// Count answers exactly whether exact is true or false. Qdrant's API
// reference (v1.17, count points): "exact (boolean, optional, default:
// true) — If true, count exact number of points. If false, count
// approximate number of points faster. Approximate count might be
// unreliable during the indexing process." This server always counts
// exactly, which an approximate count is allowed to be; a test that needs
// the approximation to differ cannot be written against it.
func TestPayloadByFilter(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	plainCollection(t, c, "m")
	for i := uint64(1); i <= 6; i++ {
		upsert(t, c, "m", &qdrant.PointStruct{Id: qdrant.NewIDNum(i), Vectors: qdrant.NewVectors(1, 0),
			Payload: qdrant.NewValueMap(map[string]any{"tenant": map[bool]string{true: "a", false: "b"}[i <= 4], "dead": i == 4, "n": int64(i)})})
	}
	count := func(f *qdrant.Filter, exact bool) uint64 {
		t.Helper()
		return must(c.Count(ctx, &qdrant.CountPoints{CollectionName: "m", Filter: f, Exact: qdrant.PtrOf(exact)}))(t)
	}
	live := func(conds ...*qdrant.Condition) *qdrant.Filter {
		return &qdrant.Filter{Must: append(conds, qdrant.NewMatchBool("dead", false))}
	}

	// 1. Mark: one SetPayload over a filter, excluding points already dead.
	res := must(c.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "m", Wait: wait,
		PointsSelector: qdrant.NewPointsSelectorFilter(live(qdrant.NewMatch("tenant", "a"))),
		Payload:        qdrant.NewValueMap(map[string]any{"dead": true, "del": "tok1"})}))(t)
	if res.GetStatus() != qdrant.UpdateStatus_Completed {
		t.Fatalf("status %v", res.GetStatus())
	}
	// A second marker with the same filter finds nothing left to mark.
	must(c.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "m", Wait: wait,
		PointsSelector: qdrant.NewPointsSelectorFilter(live(qdrant.NewMatch("tenant", "a"))),
		Payload:        qdrant.NewValueMap(map[string]any{"dead": true, "del": "tok2"})}))(t)
	// 2. Count exactly, and inexactly (the same here).
	tok1 := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("del", "tok1")}}
	tok2 := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("del", "tok2")}}
	for _, exact := range []bool{true, false} {
		if n := count(tok1, exact); n != 3 {
			t.Fatalf("marked tok1 (exact %v): %d, want 3", exact, n)
		}
		if n := count(tok2, exact); n != 0 {
			t.Fatalf("marked tok2 (exact %v): %d, want 0", exact, n)
		}
		if n := count(live(), exact); n != 2 {
			t.Fatalf("live (exact %v): %d, want 2", exact, n)
		}
	}
	if n := must(c.Count(ctx, &qdrant.CountPoints{CollectionName: "m"}))(t); n != 6 {
		t.Fatalf("count with exact unset: %d, want 6", n)
	}
	// 3. Delete what was marked.
	must(c.Delete(ctx, &qdrant.DeletePoints{CollectionName: "m", Wait: wait, Points: qdrant.NewPointsSelectorFilter(tok1)}))(t)
	if got := retrievedIDs(must(c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "m"}))(t)); !sameStrings(got, []string{"4", "5", "6"}) {
		t.Fatalf("left %v, want [4 5 6]", got)
	}

	// OverwritePayload and DeletePayload by filter touch only the points
	// passing it.
	big := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewRange("n", &qdrant.Range{Gte: qdrant.PtrOf(5.0)})}}
	must(c.DeletePayload(ctx, &qdrant.DeletePayloadPoints{CollectionName: "m", Wait: wait,
		PointsSelector: qdrant.NewPointsSelectorFilter(big), Keys: []string{"tenant"}}))(t)
	if n := count(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewIsEmpty("tenant")}}, true); n != 2 {
		t.Fatalf("without tenant: %d, want 2", n)
	}
	must(c.OverwritePayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "m", Wait: wait,
		PointsSelector: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchInt("n", 6)}}),
		Payload:        qdrant.NewValueMap(map[string]any{"only": "x"})}))(t)
	got := must(c.Get(ctx, &qdrant.GetPoints{CollectionName: "m", Ids: []*qdrant.PointId{qdrant.NewIDNum(5), qdrant.NewIDNum(6)}}))(t)
	if pl := got[1].GetPayload(); len(pl) != 1 || pl["only"].GetStringValue() != "x" {
		t.Fatalf("overwritten payload %v", pl)
	}
	if pl := got[0].GetPayload(); len(pl) != 2 || pl["n"].GetIntegerValue() != 5 {
		t.Fatalf("untouched payload %v", pl)
	}
}
