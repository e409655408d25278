package qdrantserver

import (
	"context"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

// versions returns "id=version" for every point, in id order.
func versions(t *testing.T, c *qdrant.Client, name string) []string {
	t.Helper()
	got := must(c.Scroll(context.Background(), &qdrant.ScrollPoints{CollectionName: name, Limit: qdrant.PtrOf(uint32(100))}))(t)
	out := []string{}
	for _, p := range got {
		out = append(out, idString(p.GetId())+"="+p.GetPayload()["v"].GetStringValue())
	}
	return out
}

// TestConditionalUpsert pins update_filter (v1.16) and update_mode (v1.17)
// on Upsert, per point, as retain_conditional_upsert_points
// (lib/shard/src/update/points/upsert.rs) decides:
//
//   - Upsert (default): "insert new points, update existing points that
//     match the condition": existing points failing the filter are dropped
//     from the operation (select_excluded_by_filter_ids), new points are
//     inserted. The proto comment: "Only points matching this filter will
//     be updated. Points that don't match will keep their current state.
//     New points will be inserted regardless of the filter." The docs: "By
//     default, a conditional update on a non-existent point behaves as a
//     regular upsert, inserting the point regardless of the filter."
//   - InsertOnly: "Insert a point only if it does not already exist. If a
//     point with the same ID exists, the operation is ignored." (docs,
//     "Update Mode"); the filter is not consulted.
//   - UpdateOnly: "Update a point only if it already exists. Points that do
//     not exist are not inserted." (docs); the source keeps points that
//     "exist AND are not excluded by the condition".
//   - update_mode insert_only or update_only without a filter uses
//     `Filter::default()`, "Empty filter matches all existing points"
//     (the REST/gRPC conversion of the upsert request).
//
// Skipped points are not an error: conditional_upsert returns the number
// upserted internally, but the response is the usual UpdateResult with
// status Completed, so a caller cannot tell from it what was written.
func TestConditionalUpsert(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	plainCollection(t, c, "u")
	pt := func(id uint64, v string) *qdrant.PointStruct {
		return &qdrant.PointStruct{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectors(1, 0), Payload: qdrant.NewValueMap(map[string]any{"v": v})}
	}
	upsert(t, c, "u", pt(1, "1"), pt(2, "1"))
	isV1 := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("v", "1")}}
	cond := func(mode *qdrant.UpdateMode, f *qdrant.Filter, ps ...*qdrant.PointStruct) {
		t.Helper()
		res := must(c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "u", Wait: wait, Points: ps, UpdateFilter: f, UpdateMode: mode}))(t)
		if res.GetStatus() != qdrant.UpdateStatus_Completed {
			t.Fatalf("status %v", res.GetStatus())
		}
	}

	// Default mode: 1 matches and is replaced, 3 is new and inserted.
	cond(nil, isV1, pt(1, "2"), pt(3, "2"))
	if got := versions(t, c, "u"); !sameStrings(got, []string{"1=2", "2=1", "3=2"}) {
		t.Fatalf("upsert: %v", got)
	}
	// 1 now fails the filter: skipped silently, keeping its state.
	cond(qdrant.UpdateMode_Upsert.Enum(), isV1, pt(1, "3"), pt(2, "3"))
	if got := versions(t, c, "u"); !sameStrings(got, []string{"1=2", "2=3", "3=2"}) {
		t.Fatalf("upsert, failing filter: %v", got)
	}
	// update_only: 4 is missing and not inserted; 1 fails the filter.
	isV2 := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("v", "2")}}
	cond(qdrant.UpdateMode_UpdateOnly.Enum(), isV2, pt(1, "4"), pt(2, "4"), pt(4, "4"))
	if got := versions(t, c, "u"); !sameStrings(got, []string{"1=4", "2=3", "3=2"}) {
		t.Fatalf("update_only: %v", got)
	}
	// update_only without a filter: every existing point, no new one.
	cond(qdrant.UpdateMode_UpdateOnly.Enum(), nil, pt(3, "5"), pt(5, "5"))
	if got := versions(t, c, "u"); !sameStrings(got, []string{"1=4", "2=3", "3=5"}) {
		t.Fatalf("update_only, no filter: %v", got)
	}
	// insert_only: existing points are left alone even if they pass the
	// filter; a new one is inserted even if a filter is given.
	cond(qdrant.UpdateMode_InsertOnly.Enum(), isV2, pt(2, "6"), pt(6, "6"))
	cond(qdrant.UpdateMode_InsertOnly.Enum(), nil, pt(1, "7"), pt(7, "7"))
	if got := versions(t, c, "u"); !sameStrings(got, []string{"1=4", "2=3", "3=5", "6=6", "7=7"}) {
		t.Fatalf("insert_only: %v", got)
	}

	// Compare-and-set on a version: of two writers expecting version 4,
	// the first wins and the second is skipped.
	isV4 := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("v", "4")}}
	cond(qdrant.UpdateMode_UpdateOnly.Enum(), isV4, pt(1, "a"))
	cond(qdrant.UpdateMode_UpdateOnly.Enum(), isV4, pt(1, "b"))
	if got := versions(t, c, "u"); got[0] != "1=a" {
		t.Fatalf("CAS: %v", got)
	}

	// A malformed filter (a bad payload path) is refused before anything
	// is written.
	_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "u", Wait: wait, Points: []*qdrant.PointStruct{pt(9, "9")},
		UpdateFilter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("v[", "1")}}})
	wantCode(t, err, codes.InvalidArgument)
	if got := versions(t, c, "u"); len(got) != 5 {
		t.Fatalf("after refused upsert: %v", got)
	}
}
