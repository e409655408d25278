package qdrantserver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/qdrant/go-client/qdrant"
)

// TestOrderIndexFollowsChanges checks ordered scrolls against the order
// computed from scratch while points are upserted, replaced, deleted and
// their payloads set, overwritten, cleared and partly deleted, after the
// order index was built: every scroll, ascending or descending, from a
// start or not, filtered, returns the points that pass in (value, id)
// order, as many as the limit.
func TestOrderIndexFollowsChanges(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	plainCollection(t, c, "ix")
	createIndex(t, c, "ix", "n", qdrant.FieldType_FieldTypeInteger, nil)
	rng := rand.New(rand.NewPCG(7, 11))
	type shadow struct {
		n     []int64 // the values of n: none, one or two
		state string
	}
	model := map[uint64]shadow{}
	payload := func(s shadow) map[string]any {
		m := map[string]any{"state": s.state}
		switch len(s.n) {
		case 1:
			m["n"] = s.n[0]
		case 2:
			m["n"] = []any{s.n[0], s.n[1]}
		}
		return m
	}
	random := func() shadow {
		s := shadow{state: []string{"pending", "done"}[rng.IntN(2)]}
		for range rng.IntN(3) {
			s.n = append(s.n, int64(rng.IntN(20)))
		}
		return s
	}
	ids := func(ids ...uint64) *qdrant.PointsSelector {
		var ps []*qdrant.PointId
		for _, id := range ids {
			ps = append(ps, qdrant.NewIDNum(id))
		}
		return qdrant.NewPointsSelector(ps...)
	}
	for step := range 400 {
		id := uint64(rng.IntN(40))
		switch op := rng.IntN(6); op {
		case 0, 1: // upsert: a new point, or a replacement
			s := random()
			upsert(t, c, "ix", &qdrant.PointStruct{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectors(1, 0), Payload: qdrant.NewValueMap(payload(s))})
			model[id] = s
		case 2:
			must(c.Delete(ctx, &qdrant.DeletePoints{CollectionName: "ix", Wait: wait, Points: ids(id)}))(t)
			delete(model, id)
		case 3: // set payload: a new n, the state kept
			s, ok := model[id]
			if !ok {
				continue
			}
			s.n = []int64{int64(rng.IntN(20))}
			must(c.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "ix", Wait: wait, PointsSelector: ids(id), Payload: qdrant.NewValueMap(map[string]any{"n": s.n[0]})}))(t)
			model[id] = s
		case 4: // overwrite payload
			if _, ok := model[id]; !ok {
				continue
			}
			s := random()
			must(c.OverwritePayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "ix", Wait: wait, PointsSelector: ids(id), Payload: qdrant.NewValueMap(payload(s))}))(t)
			model[id] = s
		case 5: // delete n, or clear everything
			s, ok := model[id]
			if !ok {
				continue
			}
			if rng.IntN(2) == 0 {
				must(c.DeletePayload(ctx, &qdrant.DeletePayloadPoints{CollectionName: "ix", Wait: wait, PointsSelector: ids(id), Keys: []string{"n"}}))(t)
				s.n = nil
			} else {
				must(c.ClearPayload(ctx, &qdrant.ClearPayloadPoints{CollectionName: "ix", Wait: wait, Points: ids(id)}))(t)
				s = shadow{}
			}
			model[id] = s
		}
		desc := rng.IntN(2) == 0
		limit := 1 + rng.IntN(30)
		var from *int64
		if rng.IntN(2) == 0 {
			from = qdrant.PtrOf(int64(rng.IntN(20)))
		}
		ob := &qdrant.OrderBy{Key: "n"}
		if desc {
			ob.Direction = qdrant.Direction_Desc.Enum()
		}
		if from != nil {
			ob.StartFrom = qdrant.NewStartFromInt(*from)
		}
		got := orderedIDs(must(c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "ix", OrderBy: ob, Limit: qdrant.PtrOf(uint32(limit)),
			Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword("state", "pending")}}}))(t))

		type entry struct {
			n  int64
			id uint64
		}
		var want []entry
		for id, s := range model {
			if s.state != "pending" {
				continue
			}
			for i, n := range s.n {
				if i == 1 && n == s.n[0] {
					continue // one entry per distinct value
				}
				if from != nil && ((!desc && n < *from) || (desc && n > *from)) {
					continue
				}
				want = append(want, entry{n, id})
			}
		}
		slices.SortFunc(want, func(a, b entry) int {
			if a.n != b.n {
				return int(a.n - b.n)
			}
			return int(int64(a.id) - int64(b.id))
		})
		if desc {
			slices.Reverse(want)
		}
		wantS := []string{}
		for _, e := range want[:min(limit, len(want))] {
			wantS = append(wantS, fmt.Sprintf("%d@%d", e.id, e.n))
		}
		if !slices.Equal(got, wantS) {
			t.Fatalf("step %d (desc %v, limit %d, from %v): got %v, want %v", step, desc, limit, from, got, wantS)
		}
	}
}
