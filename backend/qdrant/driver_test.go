package qdrant_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	qc "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/qdrant"
	"github.com/agentmem/memory/internal/qdrantserver"
)

var t0 = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

// open returns a driver over a fresh collection on a server of its own,
// and a client of that server.
func open(t *testing.T, clock memory.Clock) (*qdrant.Driver, *qc.Client) {
	t.Helper()
	host, port := qdrantserver.Start(t)
	c := newClient(t, host, port)
	d, err := qdrant.New(context.Background(), qdrant.Options{Client: c, Collection: "mem", Clock: clock})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d, c
}

func tenantQuery(tenant string) driver.Query {
	return driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: tenant}}}
}

// TestPointID checks the point ids: a UUID of version 8 and RFC 9562's
// variant, the same for the same collection, tenant and id, different
// when any differs, including splits of the same bytes.
func TestPointID(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	id := qdrant.PointID("mem", "acme", "rec-1")
	if !uuid.MatchString(id) {
		t.Errorf("PointID = %q, not a version 8 UUID of variant 10", id)
	}
	if again := qdrant.PointID("mem", "acme", "rec-1"); again != id {
		t.Errorf("PointID is not deterministic: %q then %q", id, again)
	}
	seen := map[string]string{}
	for _, c := range [][3]string{
		{"mem", "acme", "rec-1"}, {"mem2", "acme", "rec-1"}, {"mem", "acme2", "rec-1"}, {"mem", "acme", "rec-2"},
		{"mem", "", "acmerec-1"}, {"mem", "acmerec-1", ""}, {"memacme", "", "rec-1"}, {"", "", ""},
	} {
		got := qdrant.PointID(c[0], c[1], c[2])
		if !uuid.MatchString(got) {
			t.Errorf("PointID%q = %q, not a version 8 UUID", c, got)
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("PointID%q = PointID%s = %s", c, prev, got)
		}
		seen[got] = fmt.Sprintf("%q", c)
	}
}

// TestPointIDGolden pins the derivation: it is the storage format, and a
// change would orphan every stored record.
func TestPointIDGolden(t *testing.T) {
	got := qdrant.PointID("mem", "acme", "rec-1")
	if want := goldenPointID; got != want {
		t.Errorf("PointID(mem, acme, rec-1) = %s, want %s", got, want)
	}
}

// TestReAddIsIdempotent checks that writing a record again writes its
// point again: one point, the later content, the next version.
func TestReAddIsIdempotent(t *testing.T) {
	d, c := open(t, nil)
	ctx := context.Background()
	who := memory.Identity{Tenant: "acme", User: "u"}
	fact := memory.NewFact(who, "likes tea", t0)
	for range 3 {
		if err := d.Put(ctx, []memory.Record{fact}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := c.Count(ctx, &qc.CountPoints{CollectionName: "mem", Exact: qc.PtrOf(true),
		Filter: &qc.Filter{Must: []*qc.Condition{qc.NewMatchKeyword("record_id", fact.ID)}}})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("a record written three times is %d points, want 1", n)
	}
	got, err := d.List(ctx, tenantQuery("acme"))
	if err != nil || len(got) != 1 || got[0].Version != 3 {
		t.Errorf("List = %+v, %v; want the fact at version 3", got, err)
	}
	pts, err := c.Get(ctx, &qc.GetPoints{CollectionName: "mem", Ids: []*qc.PointId{qc.NewID(qdrant.PointID("mem", "acme", fact.ID))}})
	if err != nil || len(pts) != 1 {
		t.Fatalf("Get of the fact's point id: %v, %v", pts, err)
	}
}

// expect builds the filters the translation table expects.
func kw(field, v string) *qc.Condition { return qc.NewMatchKeyword(field, v) }
func notDead() *qc.Condition           { return qc.NewMatchBool("dead", false) }
func sub(f *qc.Filter) *qc.Condition   { return qc.NewFilterAsCondition(f) }
func gt(field string, v float64) *qc.Condition {
	return qc.NewRange(field, &qc.Range{Gt: &v})
}

// live is "expires after s seconds and ns nanoseconds".
func live(s int64, ns float64) *qc.Condition {
	return sub(&qc.Filter{Should: []*qc.Condition{
		gt("expires_s", float64(s)),
		sub(&qc.Filter{Must: []*qc.Condition{qc.NewMatchInt("expires_s", s), gt("expires_ns", ns)}}),
	}})
}

// TestFilterTranslation is the table of queries and the Qdrant filters
// they become: identity fields as prefixed keywords, kinds as one
// match-any, the key, ids as point ids, never a marked point, and for
// List the expiry split into seconds and nanoseconds.
func TestFilterTranslation(t *testing.T) {
	now := t0.UnixNano() // 1741964966.535897932
	const s, ns = 1741964966, 535897932
	pre := (time.Date(1969, 12, 31, 23, 59, 59, 250, time.UTC)).UnixNano() // -0.999999750 s
	acme := memory.Identity{Tenant: "acme", User: "ann", Agent: "a", Session: "s1"}
	cases := []struct {
		name string
		got  *qc.Filter
		want *qc.Filter
	}{
		{"tenant", qdrant.ListFilterOf("mem", tenantQuery("acme"), now),
			&qc.Filter{Must: []*qc.Condition{kw("tenant", "=acme"), notDead(), live(s, ns)}}},
		{"the empty tenant", qdrant.ListFilterOf("mem", tenantQuery(""), now),
			&qc.Filter{Must: []*qc.Condition{kw("tenant", "="), notDead(), live(s, ns)}}},
		{"session level with an empty agent", qdrant.ListFilterOf("mem", driver.Query{Filter: memory.Filter{
			Match: memory.FieldTenant | memory.FieldUser | memory.FieldAgent | memory.FieldSession, Identity: acme.With(memory.FieldAgent, "")}}, now),
			&qc.Filter{Must: []*qc.Condition{kw("tenant", "=acme"), kw("user", "=ann"), kw("agent", "="), kw("session", "=s1"), notDead(), live(s, ns)}}},
		{"every narrowing", qdrant.ListFilterOf("mem", driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldSquad, Identity: memory.Identity{Tenant: "acme", Squad: "sq"}},
			Kinds: []memory.Kind{memory.KindFact, memory.KindDocument}, Key: "k/1", IDs: []string{"x", "y"}, Limit: 3}, now),
			&qc.Filter{Must: []*qc.Condition{kw("tenant", "=acme"), kw("squad", "=sq"), qc.NewMatchKeywords("kind", "fact", "document"), kw("key", "k/1"),
				qc.NewHasID(qc.NewID(qdrant.PointID("mem", "acme", "x")), qc.NewID(qdrant.PointID("mem", "acme", "y"))), notDead(), live(s, ns)}}},
		{"before 1970", qdrant.ListFilterOf("mem", tenantQuery("t"), pre),
			&qc.Filter{Must: []*qc.Condition{kw("tenant", "=t"), notDead(), live(-1, 250)}}},
		{"delete: expired records too", qdrant.DeleteFilterOf("mem", driver.Query{Filter: tenantQuery("acme").Filter, Key: "k", Limit: 1}),
			&qc.Filter{Must: []*qc.Condition{kw("tenant", "=acme"), kw("key", "k"), notDead()}}},
		{"sweep: every tenant", qdrant.SweepFilterOf(now),
			&qc.Filter{Must: []*qc.Condition{notDead(), sub(&qc.Filter{Should: []*qc.Condition{
				qc.NewRange("expires_s", &qc.Range{Lt: qc.PtrOf(float64(s))}),
				sub(&qc.Filter{Must: []*qc.Condition{qc.NewMatchInt("expires_s", s), qc.NewRange("expires_ns", &qc.Range{Lte: qc.PtrOf(float64(ns))})}}),
			}})}}},
	}
	for _, c := range cases {
		if !proto.Equal(c.got, c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, protojson.Format(c.got), protojson.Format(c.want))
		}
	}
}

// TestChunks checks the splitting of upserts: at most the point bound,
// at most the byte bound unless one point alone exceeds it, every point
// once and in order.
func TestChunks(t *testing.T) {
	who := memory.Identity{Tenant: "t"}
	pt := func(i, size int) *qc.PointStruct {
		p, err := qdrant.EncodeRecord("mem", memory.Record{ID: fmt.Sprint(i), Kind: memory.KindFact, Identity: who, Content: strings.Repeat("x", size), Created: t0}, 1)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	var small, mixed []*qc.PointStruct
	for i := range 1000 {
		small = append(small, pt(i, 10))
	}
	for i, size := range []int{1 << 20, 1 << 20, 1 << 20, 10, 5 << 20, 10, 10, 1 << 20} {
		mixed = append(mixed, pt(i, size))
	}
	for _, c := range []struct {
		name      string
		points    []*qc.PointStruct
		maxPoints int
		maxBytes  int
		want      []int // chunk lengths
	}{
		{"none", nil, 10, 100, nil},
		{"by count", small, qdrant.MaxUpsertPoints, qdrant.MaxUpsertBytes, []int{256, 256, 256, 232}},
		{"by bytes", mixed, qdrant.MaxUpsertPoints, qdrant.MaxUpsertBytes, []int{2, 2, 1, 3}},
		{"one point each", small[:3], 1, qdrant.MaxUpsertBytes, []int{1, 1, 1}},
	} {
		got := qdrant.Chunks(c.points, c.maxPoints, c.maxBytes)
		var lens []int
		next := 0
		for _, ch := range got {
			lens = append(lens, len(ch))
			size := 0
			for _, i := range ch {
				if i != next {
					t.Errorf("%s: point %d where %d was due", c.name, i, next)
				}
				next++
				size += proto.Size(c.points[i])
			}
			if len(ch) > 1 && size > c.maxBytes {
				t.Errorf("%s: a chunk of %d points is %d bytes, over %d", c.name, len(ch), size, c.maxBytes)
			}
		}
		if next != len(c.points) || !slices.Equal(lens, c.want) {
			t.Errorf("%s: chunk lengths %v (%d points), want %v (%d)", c.name, lens, next, c.want, len(c.points))
		}
	}
}

// TestWriteRaces makes another writer change a point between Put's read
// of it and its write, through a hook the tests have: another identity
// creating it (Put reports it held and stores nothing under it), the
// same identity replacing it (Put writes again over the new version),
// and a Delete marking it (Put writes again, a new record at version 1).
func TestWriteRaces(t *testing.T) {
	d, c := open(t, nil)
	other, _ := qdrant.New(context.Background(), qdrant.Options{Client: qdrant.ClientOf(d), Collection: d.Collection()})
	ctx := context.Background()
	ann := memory.Identity{Tenant: "t", User: "ann"}
	bob := memory.Identity{Tenant: "t", User: "bob"}
	rec := func(id string, who memory.Identity, content string) memory.Record {
		return memory.Record{ID: id, Kind: memory.KindFact, Identity: who, Content: content, Created: t0}
	}
	get := func(id string) memory.Record {
		t.Helper()
		q := tenantQuery("t")
		q.IDs = []string{id}
		got, err := d.List(ctx, q)
		if err != nil || len(got) != 1 {
			t.Fatalf("List of %s = %v, %v", id, got, err)
		}
		return got[0]
	}
	race := func(f func()) {
		once := false
		qdrant.BeforeWrite(d, func() {
			if !once {
				once = true
				f()
			}
		})
	}

	race(func() {
		if err := other.Put(ctx, []memory.Record{rec("created", ann, "ann's")}); err != nil {
			t.Error(err)
		}
	})
	if err := d.Put(ctx, []memory.Record{rec("created", bob, "bob's")}); !errors.Is(err, memory.ErrPermissionDenied) {
		t.Errorf("Put of a point another identity created meanwhile: %v, want memory.ErrPermissionDenied", err)
	}
	if got := get("created"); got.Identity != ann || got.Content != "ann's" || got.Version != 1 {
		t.Errorf("the point ann created meanwhile became %+v", got)
	}

	if err := d.Put(ctx, []memory.Record{rec("moved", ann, "first")}); err != nil {
		t.Fatal(err)
	}
	race(func() {
		if err := other.Put(ctx, []memory.Record{rec("moved", ann, "second")}); err != nil {
			t.Error(err)
		}
	})
	if err := d.Put(ctx, []memory.Record{rec("moved", ann, "third")}); err != nil {
		t.Fatal(err)
	}
	if got := get("moved"); got.Content != "third" || got.Version != 3 {
		t.Errorf("after a write that raced another: %q at version %d, want \"third\" at 3 (versions never repeat)", got.Content, got.Version)
	}

	if err := d.Put(ctx, []memory.Record{rec("marked", ann, "old")}); err != nil {
		t.Fatal(err)
	}
	race(func() { // a Delete that marks the point and has not removed it yet
		if _, err := c.SetPayload(ctx, &qc.SetPayloadPoints{CollectionName: "mem", Wait: qc.PtrOf(true),
			Payload:        qc.NewValueMap(map[string]any{"dead": true, "del": "unfinished", "del_at": time.Now().Unix()}),
			PointsSelector: qc.NewPointsSelector(qc.NewID(qdrant.PointID("mem", "t", "marked")))}); err != nil {
			t.Error(err)
		}
	})
	if err := d.Put(ctx, []memory.Record{rec("marked", ann, "new")}); err != nil {
		t.Fatal(err)
	}
	if got := get("marked"); got.Content != "new" || got.Version != 1 {
		t.Errorf("a record a Delete marked while it was written: %q at version %d, want \"new\" at 1 (a new record)", got.Content, got.Version)
	}
	qdrant.BeforeWrite(d, nil)
}

// TestMarkedPoints checks what a Delete that marked points and never
// finished leaves: the points are gone for List, Delete and Put (a new
// write starts at version 1), and Sweep removes them once the mark is
// stale, counting none of them.
func TestMarkedPoints(t *testing.T) {
	d, c := open(t, func() time.Time { return t0 })
	ctx := context.Background()
	who := memory.Identity{Tenant: "t", User: "u"}
	var recs []memory.Record
	for _, id := range []string{"old-mark", "new-mark", "rewritten"} {
		recs = append(recs, memory.Record{ID: id, Kind: memory.KindFact, Identity: who, Content: id, Created: t0})
	}
	if err := d.Put(ctx, recs); err != nil {
		t.Fatal(err)
	}
	mark := func(id string, at time.Time) {
		t.Helper()
		if _, err := c.SetPayload(ctx, &qc.SetPayloadPoints{CollectionName: "mem", Wait: qc.PtrOf(true),
			Payload:        qc.NewValueMap(map[string]any{"dead": true, "del": "unfinished", "del_at": at.Unix()}),
			PointsSelector: qc.NewPointsSelector(qc.NewID(qdrant.PointID("mem", "t", id)))}); err != nil {
			t.Fatal(err)
		}
	}
	mark("old-mark", time.Now().Add(-2*qdrant.StaleMark))
	mark("new-mark", time.Now())
	mark("rewritten", time.Now())
	if got, err := d.List(ctx, tenantQuery("t")); err != nil || len(got) != 0 {
		t.Errorf("List of marked points = %v, %v; want none", got, err)
	}
	if n, err := d.Delete(ctx, tenantQuery("t")); err != nil || n != 0 {
		t.Errorf("Delete of marked points = %d, %v; want 0", n, err)
	}
	if err := d.Put(ctx, recs[2:]); err != nil {
		t.Fatal(err)
	}
	if got, err := d.List(ctx, tenantQuery("t")); err != nil || len(got) != 1 || got[0].Version != 1 {
		t.Errorf("after rewriting a marked point: List = %+v, %v; want it at version 1", got, err)
	}
	if n, err := d.Sweep(ctx); err != nil || n != 0 {
		t.Errorf("Sweep = %d, %v; want 0 (stale marks are not counted)", n, err)
	}
	for id, want := range map[string]int{"old-mark": 0, "new-mark": 1, "rewritten": 1} {
		pts, err := c.Get(ctx, &qc.GetPoints{CollectionName: "mem", Ids: []*qc.PointId{qc.NewID(qdrant.PointID("mem", "t", id))}})
		if err != nil || len(pts) != want {
			t.Errorf("after Sweep, point %s: %d points, %v; want %d", id, len(pts), err, want)
		}
	}
}

// TestTies checks List's order where Qdrant's order_by leaves it
// undefined: many records share each creation time, and every Limit that
// cuts a group of equal times returns the greatest ids of the group.
func TestTies(t *testing.T) {
	d, _ := open(t, func() time.Time { return t0 })
	ctx := context.Background()
	who := memory.Identity{Tenant: "t"}
	var recs []memory.Record
	for i := range 60 {
		recs = append(recs, memory.Record{ID: fmt.Sprintf("r%02d", (i*37)%60), Kind: memory.KindTurn, Identity: who, Content: "x",
			Created: t0.Add(-time.Duration(i%4) * time.Nanosecond)})
	}
	if err := d.Put(ctx, recs); err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(recs)
	slices.SortFunc(want, driver.CompareRecords)
	for limit := 1; limit <= 61; limit++ {
		q := tenantQuery("t")
		q.Limit = limit
		got, err := d.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		w := want[:min(limit, len(want))]
		if !slices.EqualFunc(got, w, func(a, b memory.Record) bool { return a.ID == b.ID }) {
			t.Fatalf("Limit %d: got %v, want %v", limit, recIDs(got), recIDs(w))
		}
	}
}

func recIDs(recs []memory.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// TestDimensionIsTheCollections checks that the vector dimension is
// the collection's, fixed when it is created: a driver opened without
// one adopts it, one opened with another is refused, and a collection
// created without vectors holds none.
func TestDimensionIsTheCollections(t *testing.T) {
	host, port := qdrantserver.Start(t)
	ctx := context.Background()
	open := func(coll string, dims int) (*qdrant.Driver, error) {
		d, err := qdrant.New(ctx, qdrant.Options{Client: newClient(t, host, port), Collection: coll, Dims: dims})
		if err == nil {
			t.Cleanup(func() { _ = d.Close() })
		}
		return d, err
	}
	rec := func(id string, v []float32) []memory.Record {
		return []memory.Record{{ID: id, Kind: memory.KindFact, Identity: memory.Identity{Tenant: "t"}, Content: id, Created: t0, Vector: v}}
	}
	first, err := open("three", 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Put(ctx, rec("a", []float32{1, 2, 3})); err != nil {
		t.Fatal(err)
	}
	adopted, err := open("three", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := adopted.Put(ctx, rec("b", []float32{1, 2, 3, 4})); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Put of another dimension through a driver opened with Dims 0: %v, want memory.ErrInvalidArgument", err)
	}
	if err := adopted.Put(ctx, rec("c", []float32{3, 2, 1})); err != nil {
		t.Errorf("Put of the collection's dimension through a driver opened with Dims 0: %v", err)
	}
	q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "t"}}}
	if got, err := adopted.Search(ctx, q, []float32{1, 2, 3}, 5); err != nil || len(got) != 2 || got[0].Record.ID != "a" {
		t.Errorf("Search through a driver opened with Dims 0 = %v, %v; want a, then c", got, err)
	}
	if _, err := open("three", 4); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("New with Dims 4 on a collection of 3: %v, want memory.ErrInvalidArgument", err)
	}
	if _, err := open("bad", -1); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("New with Dims -1: %v, want memory.ErrInvalidArgument", err)
	}

	none, err := open("none", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := none.Put(ctx, rec("v", []float32{1, 2, 3})); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Put of a vector into a collection without vectors: %v, want memory.ErrInvalidArgument", err)
	}
	if err := none.Put(ctx, rec("plain", nil)); err != nil {
		t.Errorf("Put of a record without a vector into a collection without vectors: %v", err)
	}
	if got, err := none.Search(ctx, q, []float32{1, 2, 3}, 5); err != nil || len(got) != 0 {
		t.Errorf("Search of a collection without vectors = %v, %v; want nothing", got, err)
	}
	if _, err := open("none", 3); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("New with Dims 3 on a collection created without vectors: %v, want memory.ErrInvalidArgument", err)
	}
}

// TestNewCreatesIndexes checks the collection New makes: the payload
// indexes, the tenant's flagged is_tenant, and that opening it again
// works.
func TestNewCreatesIndexes(t *testing.T) {
	_, c := open(t, nil)
	info, err := c.GetCollectionInfo(context.Background(), "mem")
	if err != nil {
		t.Fatal(err)
	}
	schema := info.GetPayloadSchema()
	for field, typ := range map[string]qc.PayloadSchemaType{
		"tenant": qc.PayloadSchemaType_Keyword, "user": qc.PayloadSchemaType_Keyword, "agent": qc.PayloadSchemaType_Keyword,
		"instance": qc.PayloadSchemaType_Keyword, "squad": qc.PayloadSchemaType_Keyword, "session": qc.PayloadSchemaType_Keyword,
		"record_id": qc.PayloadSchemaType_Keyword, "kind": qc.PayloadSchemaType_Keyword, "key": qc.PayloadSchemaType_Keyword,
		"created":   qc.PayloadSchemaType_Integer,
		"expires_s": qc.PayloadSchemaType_Integer, "expires_ns": qc.PayloadSchemaType_Integer,
		"dead": qc.PayloadSchemaType_Bool, "del": qc.PayloadSchemaType_Keyword, "del_at": qc.PayloadSchemaType_Integer,
		"terms": qc.PayloadSchemaType_Text, "text": qc.PayloadSchemaType_Bool,
	} {
		if got := schema[field].GetDataType(); got != typ {
			t.Errorf("index on %s: %v, want %v", field, got, typ)
		}
	}
	if tp := schema["terms"].GetParams().GetTextIndexParams(); tp.GetTokenizer() != qc.TokenizerType_Whitespace || tp.Lowercase == nil || tp.GetLowercase() {
		t.Errorf("the terms index has parameters %v, want whitespace tokens, not lowercased", tp)
	}
	if !schema["tenant"].GetParams().GetKeywordIndexParams().GetIsTenant() {
		t.Errorf("the tenant's index is not flagged is_tenant: %v", schema["tenant"])
	}
	if !schema["created"].GetParams().GetIntegerIndexParams().GetRange() {
		t.Errorf("the index on created cannot serve order_by: %v", schema["created"])
	}
	d2, err := qdrant.New(context.Background(), qdrant.Options{Client: c, Collection: "mem"})
	if err != nil {
		t.Fatalf("New on an existing collection: %v", err)
	}
	_ = d2.Close()
}

// TestOptions checks New's and Open's refusals.
func TestOptions(t *testing.T) {
	ctx := context.Background()
	host, port := qdrantserver.Start(t)
	c := newClient(t, host, port)
	for _, c := range []struct {
		name string
		err  func() error
	}{
		{"New without a client", func() error { _, err := qdrant.New(ctx, qdrant.Options{Collection: "x"}); return err }},
		{"New without a collection", func() error { _, err := qdrant.New(ctx, qdrant.Options{Client: c}); return err }},
		{"Open with a client", func() error {
			_, err := qdrant.Open(ctx, "localhost:6334", qdrant.Options{Client: c, Collection: "x"})
			return err
		}},
		{"Open with a bad port", func() error { _, err := qdrant.Open(ctx, "localhost:x", qdrant.Options{Collection: "x"}); return err }},
	} {
		if err := c.err(); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("%s: %v, want memory.ErrInvalidArgument", c.name, err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := qdrant.New(cancelled, qdrant.Options{Client: c, Collection: "x"}); err != context.Canceled {
		t.Errorf("New with a cancelled context: %v, want context.Canceled", err)
	}
}

// TestOpen checks the opener: it makes and owns its client, and closes it
// once, however often Close is called.
func TestOpen(t *testing.T) {
	host, port := qdrantserver.Start(t)
	ctx := context.Background()
	d, err := qdrant.Open(ctx, net.JoinHostPort(host, fmt.Sprint(port)), qdrant.Options{Collection: "opened"})
	if err != nil {
		t.Fatal(err)
	}
	r := memory.Record{ID: "o", Kind: memory.KindFact, Identity: memory.Identity{Tenant: "t"}, Content: strings.Repeat("big ", 1<<18), Created: t0}
	if err := d.Put(ctx, []memory.Record{r, {ID: "p", Kind: r.Kind, Identity: r.Identity, Content: r.Content, Created: t0}}); err != nil {
		t.Fatal(err)
	}
	got, err := d.List(ctx, tenantQuery("t"))
	if err != nil || len(got) != 2 {
		t.Fatalf("List = %d records, %v", len(got), err)
	}
	if d.Collection() != "opened" {
		t.Errorf("Collection() = %q", d.Collection())
	}
	for range 2 {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if _, err := d.List(ctx, tenantQuery("t")); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("List after Close: %v, want memory.ErrClosed", err)
	}
}

// TestErrors checks the classification of gRPC errors, and that a failing
// server's error keeps its status reachable.
func TestErrors(t *testing.T) {
	for code, want := range map[codes.Code]error{
		codes.InvalidArgument: memory.ErrInvalidArgument, codes.FailedPrecondition: memory.ErrInvalidArgument,
		codes.NotFound: memory.ErrNotFound, codes.AlreadyExists: memory.ErrConflict, codes.Aborted: memory.ErrConflict,
		codes.PermissionDenied: memory.ErrPermissionDenied, codes.Unauthenticated: memory.ErrPermissionDenied,
		codes.ResourceExhausted: memory.ErrTooLarge, codes.Unimplemented: memory.ErrUnimplemented,
		codes.Unavailable: memory.ErrClosed, codes.Internal: memory.ErrClosed, codes.Unknown: memory.ErrClosed,
		codes.DeadlineExceeded: memory.ErrClosed,
	} {
		if got := qdrant.KindOf(status.Error(code, "x")); got != want {
			t.Errorf("%v: %v, want %v", code, got, want)
		}
	}
	if got := qdrant.KindOf(errors.New("not gRPC")); got != memory.ErrClosed {
		t.Errorf("a non-gRPC error: %v, want memory.ErrClosed", got)
	}

	// A server that went away.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := qdrantserver.New()
	go func() { _ = s.Serve(l) }()
	addr := l.Addr().(*net.TCPAddr)
	d, err := qdrant.New(context.Background(), qdrant.Options{Client: newClient(t, "127.0.0.1", addr.Port), Collection: "gone"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = d.List(ctx, tenantQuery("t"))
	if !errors.Is(err, memory.ErrClosed) {
		t.Errorf("List on a stopped server: %v, want memory.ErrClosed", err)
	}
	if st, ok := status.FromError(err); !ok || st.Code() != codes.Unavailable {
		t.Errorf("List on a stopped server: the gRPC status is not reachable from %v", err)
	}
}

// goldenPointID is PointID("mem", "acme", "rec-1"), computed independently
// (Python's hashlib over the same length-prefixed fields).
const goldenPointID = "eea9ca09-1eca-84b1-9b53-9ab88f48a1bd"
