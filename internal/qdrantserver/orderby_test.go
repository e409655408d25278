package qdrantserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

// orderedIDs renders a result as "id@value" pairs.
func orderedIDs(ps []*qdrant.RetrievedPoint) []string {
	out := []string{}
	for _, p := range ps {
		v := p.GetOrderValue()
		var s string
		switch x := v.GetVariant().(type) {
		case *qdrant.OrderValue_Int:
			s = fmt.Sprint(x.Int)
		case *qdrant.OrderValue_Float:
			s = fmt.Sprint(x.Float)
		default:
			s = "none"
		}
		out = append(out, idString(p.GetId())+"@"+s)
	}
	return out
}

// createIndex creates a payload index and fails the test on error.
func createIndex(t *testing.T, c *qdrant.Client, name, field string, ft qdrant.FieldType, params *qdrant.PayloadIndexParams) {
	t.Helper()
	must(c.CreateFieldIndex(context.Background(), &qdrant.CreateFieldIndexCollection{CollectionName: name, Wait: wait,
		FieldName: field, FieldType: ft.Enum(), FieldIndexParams: params}))(t)
}

// TestScrollOrderByIndex: order_by needs an index that serves Range
// conditions. Qdrant's docs (concepts/points, "Order points by payload
// key"): "Qdrant therefore requires a payload index which supports Range
// filtering conditions on the field used for order_by". In the source,
// Segment::filtered_read_by_index_ordered (lib/segment/src/segment/
// order_by.rs) looks the key up with FieldIndex::as_numeric, which is Some
// only for IntIndex, DatetimeIndex and FloatIndex; an integer index with
// `range: false` builds only an IntMapIndex (index_selector.rs:
// `integer_params.range.unwrap_or(true).then(...)`). Otherwise it fails with
// OperationError::MissingRangeIndexForOrderBy, "No range index for
// `order_by` key: `{key}`. Please create one to use `order_by`. ...",
// converted to CollectionError::bad_input (InvalidArgument over gRPC).
func TestScrollOrderByIndex(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	plainCollection(t, c, "o")
	upsert(t, c, "o", &qdrant.PointStruct{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(1, 0),
		Payload: qdrant.NewValueMap(map[string]any{"n": 1, "k": 1})})
	req := func(key string) *qdrant.ScrollPoints {
		return &qdrant.ScrollPoints{CollectionName: "o", OrderBy: &qdrant.OrderBy{Key: key}}
	}
	_, err := c.Scroll(ctx, req("n"))
	wantCode(t, err, codes.InvalidArgument)
	if !strings.Contains(err.Error(), "No range index for `order_by` key: `n`") {
		t.Fatalf("error %v", err)
	}
	createIndex(t, c, "o", "n", qdrant.FieldType_FieldTypeKeyword, nil)
	_, err = c.Scroll(ctx, req("n"))
	wantCode(t, err, codes.InvalidArgument)
	createIndex(t, c, "o", "k", qdrant.FieldType_FieldTypeInteger,
		qdrant.NewPayloadIndexParamsInt(&qdrant.IntegerIndexParams{Lookup: qdrant.PtrOf(true), Range: qdrant.PtrOf(false)}))
	_, err = c.Scroll(ctx, req("k"))
	wantCode(t, err, codes.InvalidArgument)
	for _, ft := range []qdrant.FieldType{qdrant.FieldType_FieldTypeInteger, qdrant.FieldType_FieldTypeFloat, qdrant.FieldType_FieldTypeDatetime} {
		createIndex(t, c, "o", "n", ft, nil)
		must(c.Scroll(ctx, req("n")))(t)
	}
}

// TestScrollOrderBy pins how Qdrant 1.17 orders a scroll.
//
//   - The filter is applied inside the ordered read and limit counts what
//     passes it: filtered_read_by_index_ordered iterates
//     `payload_index.iter_filtered_points(condition, ...)` and keeps the top
//     `limit`.
//   - "Repeat a point for as many values as it has" (same function): a
//     point whose key holds [5, 40] comes back twice, at 5 and at 40. The
//     shard merges with `.kmerge_by(...).dedup()`, which drops only equal
//     (value, id) pairs. Qdrant's maintainers confirm it (qdrant-client
//     #1465: "Local mode works the same way the remote"; qdrant #9192).
//   - A point without the key, or with a value the index does not take (a
//     string in an integer index: the integer index's get_value is
//     `num.as_i64()`), has no values in the index and is left out.
//   - start_from is inclusive: `Direction::Asc => value >= &start_from,
//     Direction::Desc => value <= &start_from`.
//   - No next_page_offset. Docs: "When you use the `order_by` parameter,
//     pagination is disabled. When sorting is based on a non-unique value,
//     it is not possible to rely on an ID offset. Thus, next_page_offset is
//     not returned within the response." The collection's scroll_by sets
//     `next_page_offset = None` whenever `order_by.is_some()`.
//   - An id offset is refused (local shard scroll_by): "Cannot use an
//     `offset` when using `order_by`. ..." as bad input.
//   - Each point carries its order_value.
//
// Tie order: Qdrant leaves it unspecified. Within a segment it sorts with
// `page.sort_unstable_by_key(|(value, _)| *value)`, by value only, so
// points with equal values come back in an order that depends on segment
// layout, and with a limit which of them make the cut is arbitrary. This
// server breaks ties by point id in the direction of the order (ascending
// for asc, descending for desc), the comparator of Qdrant's cross-shard
// merge; a driver must not rely on it.
func TestScrollOrderBy(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	plainCollection(t, c, "o")
	pt := func(id uint64, tenant string, created any) *qdrant.PointStruct {
		pl := map[string]any{"tenant": tenant}
		if created != nil {
			pl["created"] = created
		}
		return &qdrant.PointStruct{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectors(1, 0), Payload: qdrant.NewValueMap(pl)}
	}
	upsert(t, c, "o", pt(1, "a", 30), pt(2, "a", 10), pt(3, "a", 20), pt(4, "a", 20), pt(5, "a", []any{5, 40}),
		pt(6, "a", nil), pt(7, "a", "x"), pt(8, "b", 20))
	createIndex(t, c, "o", "created", qdrant.FieldType_FieldTypeInteger, nil)
	tenantA := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("tenant", "a")}}
	scroll := func(dir qdrant.Direction, from *qdrant.StartFrom, limit uint32) []string {
		t.Helper()
		got, next, err := c.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: "o", Filter: tenantA, Limit: qdrant.PtrOf(limit),
			OrderBy: &qdrant.OrderBy{Key: "created", Direction: dir.Enum(), StartFrom: from}})
		if err != nil {
			t.Fatal(err)
		}
		if next != nil {
			t.Fatalf("next_page_offset %v with order_by", next)
		}
		return orderedIDs(got)
	}
	for _, tc := range []struct {
		dir   qdrant.Direction
		from  *qdrant.StartFrom
		limit uint32
		want  []string
	}{
		{qdrant.Direction_Asc, nil, 10, []string{"5@5", "2@10", "3@20", "4@20", "1@30", "5@40"}},
		{qdrant.Direction_Asc, nil, 3, []string{"5@5", "2@10", "3@20"}},
		{qdrant.Direction_Desc, nil, 3, []string{"5@40", "1@30", "4@20"}},
		{qdrant.Direction_Asc, qdrant.NewStartFromInt(20), 3, []string{"3@20", "4@20", "1@30"}},
		{qdrant.Direction_Desc, qdrant.NewStartFromInt(20), 10, []string{"4@20", "3@20", "2@10", "5@5"}},
		{qdrant.Direction_Asc, qdrant.NewStartFromFloat(20.5), 10, []string{"1@30", "5@40"}},
	} {
		if got := scroll(tc.dir, tc.from, tc.limit); !sameStrings(got, tc.want) {
			t.Errorf("%v from %v limit %d: %v, want %v", tc.dir, tc.from, tc.limit, got, tc.want)
		}
	}
	// The documented way to page: start_from the last value, excluding the
	// ids already seen at it.
	got := must(c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "o", Limit: qdrant.PtrOf(uint32(2)),
		Filter:  &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("tenant", "a")}, MustNot: []*qdrant.Condition{qdrant.NewHasID(qdrant.NewIDNum(3))}},
		OrderBy: &qdrant.OrderBy{Key: "created", StartFrom: qdrant.NewStartFromInt(20)}}))(t)
	if ids := orderedIDs(got); !sameStrings(ids, []string{"4@20", "1@30"}) {
		t.Fatalf("next page %v", ids)
	}
	// Payload is returned by default, as in any scroll.
	if got[0].GetPayload()["tenant"].GetStringValue() != "a" {
		t.Fatalf("payload %v", got[0].GetPayload())
	}
	_, err := c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "o", Offset: qdrant.NewIDNum(1), OrderBy: &qdrant.OrderBy{Key: "created"}})
	wantCode(t, err, codes.InvalidArgument)
	if !strings.Contains(err.Error(), "Cannot use an `offset` when using `order_by`") {
		t.Fatalf("error %v", err)
	}
}

// TestScrollOrderByDatetimeAndFloat: a datetime index orders RFC 3339
// strings and stores them as microseconds (the datetime ValueIndexer adds
// `x.timestamp_micros()`), which is the order_value returned; a float index
// takes integers and floats alike (its get_value is `value.as_f64()`).
func TestScrollOrderByDatetimeAndFloat(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	plainCollection(t, c, "o")
	at := func(id uint64, s string, score any) *qdrant.PointStruct {
		return &qdrant.PointStruct{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectors(1, 0),
			Payload: qdrant.NewValueMap(map[string]any{"at": s, "score": score})}
	}
	upsert(t, c, "o", at(1, "2024-01-02T00:00:00Z", 2.5), at(2, "2024-01-01T00:00:00Z", 1), at(3, "2024-01-03T00:00:00+01:00", 3.5))
	createIndex(t, c, "o", "at", qdrant.FieldType_FieldTypeDatetime, nil)
	createIndex(t, c, "o", "score", qdrant.FieldType_FieldTypeFloat, nil)
	got := must(c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "o",
		OrderBy: &qdrant.OrderBy{Key: "at", Direction: qdrant.Direction_Desc.Enum(), StartFrom: qdrant.NewStartFromDatetime("2024-01-02T00:00:00Z")}}))(t)
	day2 := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC).UnixMicro()
	want := []string{fmt.Sprintf("1@%d", day2), fmt.Sprintf("2@%d", day2-24*3600*1e6)}
	if ids := orderedIDs(got); !sameStrings(ids, want) {
		t.Fatalf("datetime desc %v, want %v", ids, want)
	}
	ts := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	got = must(c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "o",
		OrderBy: &qdrant.OrderBy{Key: "at", StartFrom: qdrant.NewStartFromTimestamp(ts.Unix(), 0)}}))(t)
	if ids := retrievedIDs(got); !sameStrings(ids, []string{"1", "3"}) {
		t.Fatalf("datetime asc from timestamp %v", ids)
	}
	got = must(c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "o", OrderBy: &qdrant.OrderBy{Key: "score"}}))(t)
	if ids := orderedIDs(got); !sameStrings(ids, []string{"2@1", "1@2.5", "3@3.5"}) {
		t.Fatalf("float asc %v", ids)
	}
}
