package qdrantserver

import (
	"context"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

func plainCollection(t *testing.T, c *qdrant.Client, name string) {
	t.Helper()
	if err := c.CreateCollection(context.Background(), &qdrant.CreateCollection{CollectionName: name,
		VectorsConfig: qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 2, Distance: qdrant.Distance_Cosine})}); err != nil {
		t.Fatal(err)
	}
}

const (
	uuidLow  = "00000000-0000-0000-0000-00000000000a"
	uuidHigh = "f0000000-0000-0000-0000-000000000001"
)

// TestScrollPaging: scroll returns points by id, integers before UUIDs
// (Qdrant's ExtendedPointId is `enum { NumId(u64), Uuid(Uuid) }` with a
// derived order), and next_page_offset is where the next page starts.
// UUIDs are given in any form and returned canonical.
func TestScrollPaging(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	plainCollection(t, c, "p")
	var ps []*qdrant.PointStruct
	for _, id := range []*qdrant.PointId{qdrant.NewID("F0000000000000000000000000000001"), qdrant.NewIDNum(5), qdrant.NewID(uuidLow),
		qdrant.NewIDNum(3), qdrant.NewIDNum(1), qdrant.NewIDNum(4), qdrant.NewIDNum(2)} {
		ps = append(ps, &qdrant.PointStruct{Id: id, Vectors: qdrant.NewVectors(1, 1)})
	}
	upsert(t, c, "p", ps...)
	var pages [][]string
	var offset *qdrant.PointId
	for {
		got, next, err := c.ScrollAndOffset(ctx, &qdrant.ScrollPoints{CollectionName: "p", Limit: qdrant.PtrOf(uint32(3)), Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, retrievedIDs(got))
		if next == nil {
			break
		}
		offset = next
	}
	want := [][]string{{"1", "2", "3"}, {"4", "5", uuidLow}, {uuidHigh}}
	if len(pages) != len(want) {
		t.Fatalf("pages %v, want %v", pages, want)
	}
	for i := range want {
		if !sameStrings(pages[i], want[i]) {
			t.Fatalf("pages %v, want %v", pages, want)
		}
	}
	_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "p", Points: []*qdrant.PointStruct{{Id: qdrant.NewID("not-a-uuid"), Vectors: qdrant.NewVectors(1, 1)}}})
	wantCode(t, err, codes.InvalidArgument)
}

// TestDeleteByFilter counts before and after deleting by filter and by ids.
func TestDeleteByFilter(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	plainCollection(t, c, "p")
	for i := int64(1); i <= 6; i++ {
		upsert(t, c, "p", &qdrant.PointStruct{Id: qdrant.NewIDNum(uint64(i)), Vectors: qdrant.NewVectors(1, float32(i)),
			Payload: qdrant.NewValueMap(map[string]any{"tenant": map[bool]string{true: "a", false: "b"}[i%2 == 0]})})
	}
	tenantA := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("tenant", "a")}}
	if n := must(c.Count(ctx, &qdrant.CountPoints{CollectionName: "p", Filter: tenantA}))(t); n != 3 {
		t.Fatalf("before: %d, want 3", n)
	}
	res := must(c.Delete(ctx, &qdrant.DeletePoints{CollectionName: "p", Wait: wait, Points: qdrant.NewPointsSelectorFilter(tenantA)}))(t)
	if res.GetStatus() != qdrant.UpdateStatus_Completed {
		t.Fatalf("status %v", res.GetStatus())
	}
	if n := must(c.Count(ctx, &qdrant.CountPoints{CollectionName: "p", Filter: tenantA}))(t); n != 0 {
		t.Fatalf("after: %d, want 0", n)
	}
	if n := must(c.Count(ctx, &qdrant.CountPoints{CollectionName: "p"}))(t); n != 3 {
		t.Fatalf("left: %d, want 3", n)
	}
	must(c.Delete(ctx, &qdrant.DeletePoints{CollectionName: "p", Wait: wait, Points: qdrant.NewPointsSelector(qdrant.NewIDNum(1), qdrant.NewIDNum(99))}))(t)
	got := must(c.Scroll(ctx, &qdrant.ScrollPoints{CollectionName: "p"}))(t)
	if !sameStrings(retrievedIDs(got), []string{"3", "5"}) {
		t.Fatalf("left %v, want [3 5]", retrievedIDs(got))
	}
}

// TestGetAndPayload: Get in the order asked, skipping missing ids; the
// payload operations; a payload index with is_tenant recorded.
func TestGetAndPayload(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	plainCollection(t, c, "p")
	upsert(t, c, "p",
		&qdrant.PointStruct{Id: qdrant.NewIDNum(1), Vectors: qdrant.NewVectors(3, 4), Payload: qdrant.NewValueMap(map[string]any{"a": 1, "b": map[string]any{"c": "x", "d": "y"}})},
		&qdrant.PointStruct{Id: qdrant.NewIDNum(2), Vectors: qdrant.NewVectors(0, 1), Payload: qdrant.NewValueMap(map[string]any{"a": 2})})
	got := must(c.Get(ctx, &qdrant.GetPoints{CollectionName: "p", Ids: []*qdrant.PointId{qdrant.NewIDNum(2), qdrant.NewIDNum(7), qdrant.NewIDNum(1)},
		WithPayload: qdrant.NewWithPayloadInclude("b.c"), WithVectors: qdrant.NewWithVectors(true)}))(t)
	if !sameStrings(retrievedIDs(got), []string{"2", "1"}) {
		t.Fatalf("ids %v", retrievedIDs(got))
	}
	if b := got[1].GetPayload()["b"].GetStructValue().GetFields(); len(got[1].GetPayload()) != 1 || len(b) != 1 || b["c"].GetStringValue() != "x" {
		t.Fatalf("payload %v, want only b.c", got[1].GetPayload())
	}
	if v := got[1].GetVectors().GetVector().GetDenseVector().GetData(); len(v) != 2 || v[0] != 0.6 || v[1] != 0.8 {
		t.Fatalf("vector %v, want the normalised [0.6 0.8]", v)
	}
	sel := qdrant.NewPointsSelector(qdrant.NewIDNum(1))
	must(c.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "p", Wait: wait, PointsSelector: sel, Payload: qdrant.NewValueMap(map[string]any{"e": true})}))(t)
	must(c.DeletePayload(ctx, &qdrant.DeletePayloadPoints{CollectionName: "p", Wait: wait, PointsSelector: sel, Keys: []string{"b.d", "a"}}))(t)
	got = must(c.Get(ctx, &qdrant.GetPoints{CollectionName: "p", Ids: []*qdrant.PointId{qdrant.NewIDNum(1)}, WithPayload: qdrant.NewWithPayload(true)}))(t)
	pl := got[0].GetPayload()
	if len(pl) != 2 || !pl["e"].GetBoolValue() || len(pl["b"].GetStructValue().GetFields()) != 1 {
		t.Fatalf("payload %v, want b.c and e", pl)
	}
	must(c.OverwritePayload(ctx, &qdrant.SetPayloadPoints{CollectionName: "p", Wait: wait, PointsSelector: sel, Payload: qdrant.NewValueMap(map[string]any{"z": 0})}))(t)
	got = must(c.Get(ctx, &qdrant.GetPoints{CollectionName: "p", Ids: []*qdrant.PointId{qdrant.NewIDNum(1)}, WithPayload: qdrant.NewWithPayload(true)}))(t)
	if pl := got[0].GetPayload(); len(pl) != 1 || pl["z"] == nil {
		t.Fatalf("payload %v, want only z", pl)
	}

	must(c.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: "p", Wait: wait, FieldName: "a",
		FieldType: qdrant.FieldType_FieldTypeKeyword.Enum(), FieldIndexParams: qdrant.NewPayloadIndexParamsKeyword(&qdrant.KeywordIndexParams{IsTenant: qdrant.PtrOf(true)})}))(t)
	info := must(c.GetCollectionInfo(ctx, "p"))(t)
	idx := info.GetPayloadSchema()["a"]
	if idx.GetDataType() != qdrant.PayloadSchemaType_Keyword || !idx.GetParams().GetKeywordIndexParams().GetIsTenant() || idx.GetPoints() != 1 {
		t.Fatalf("index %v", idx)
	}
	must(c.DeleteFieldIndex(ctx, &qdrant.DeleteFieldIndexCollection{CollectionName: "p", Wait: wait, FieldName: "a"}))(t)
	if len(must(c.GetCollectionInfo(ctx, "p"))(t).GetPayloadSchema()) != 0 {
		t.Fatal("index not deleted")
	}
}
