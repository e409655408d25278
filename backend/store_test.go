package backend_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
)

type countWords struct{}

func (countWords) CountTokens(_ context.Context, s string) (int, error) { return len(s), nil }

func TestStoreAttribution(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{Tokens: countWords{}, Clock: func() time.Time { return now }})
	defer st.Close()
	alice := memory.Identity{Tenant: "t", User: "alice", Agent: "a", Instance: "i", Squad: "sq", Session: "s"}

	// An empty attribution becomes the writer's whole identity; id, time
	// and token count are filled in.
	if err := st.Add(ctx, alice, memory.Record{Kind: memory.KindTurn, Label: "user", Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	recs, err := st.List(ctx, alice, memory.Query{Level: memory.LevelSession})
	if err != nil || len(recs) != 1 {
		t.Fatalf("List = %v, %v", recs, err)
	}
	// Only what Store fills in is checked: the attribution, the time, the
	// token count and an id.
	filled := memory.Record{Identity: alice, Created: now, Tokens: 5}
	if diff := cmp.Diff(filled, recs[0], cmpopts.IgnoreFields(memory.Record{}, "ID", "Kind", "Label", "Key", "Content", "Metadata", "Expires", "Version", "Vector")); diff != "" {
		t.Errorf("stored record (-want +got):\n%s", diff)
	}
	if recs[0].ID == "" {
		t.Errorf("stored record has no id")
	}

	// A keyed working-memory row (a document at the SQUAD level) keeps
	// only the level's fields.
	squadRow := memory.NewDocument(alice.Only(memory.LevelSquad.Keyed()), "k", "working", `{}`, now)
	if err := st.Add(ctx, alice, squadRow); err != nil {
		t.Fatalf("keyed document refused: %v", err)
	}

	// A field the writer does not hold, another tenant, or a narrower
	// identity on anything but a keyed document is refused, and nothing
	// from the batch is stored.
	for _, spoof := range []memory.Identity{
		{Tenant: "t", User: "bob"},
		{Tenant: "other", User: "alice"},
		{Tenant: "", User: "alice"},
		{Tenant: "t", Squad: "sq2"},
		{Tenant: "t", Squad: "sq"},               // narrower, but a turn is no keyed row
		{Tenant: "t", User: "alice", Agent: "a"}, // narrower
	} {
		ok := memory.NewTurn(memory.Identity{}, memory.RoleUser, "fine", now)
		bad := memory.NewTurn(spoof, memory.RoleUser, "spoofed", now)
		if err := st.Add(ctx, alice, ok, bad); !errors.Is(err, memory.ErrPermissionDenied) {
			t.Errorf("Add attributed to %+v = %v, want ErrPermissionDenied", spoof, err)
		}
	}
	all, err := backend.NewStore(st.Driver(), backend.StoreOptions{Posture: memory.Posture{AllowStore: true}}).List(ctx, alice, memory.Query{Level: memory.LevelStore})
	if err != nil || len(all) != 2 {
		t.Errorf("after refused batches the tenant holds %d records (%v), want 2", len(all), err)
	}
}

func TestStorePostureOnWrites(t *testing.T) {
	ctx := context.Background()
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{Posture: memory.Posture{RequirePrincipal: true, RequireAgentIdentity: true}})
	defer st.Close()
	rec := memory.NewTurn(memory.Identity{}, memory.RoleUser, "x", time.Now())
	for _, id := range []memory.Identity{{Session: "s", Agent: "a"}, {Session: "s", User: "u"}, {Tenant: "t"}} {
		if err := st.Add(ctx, id, rec); !errors.Is(err, memory.ErrIncompleteScope) {
			t.Errorf("Add by %+v = %v, want ErrIncompleteScope", id, err)
		}
	}
	if err := st.Add(ctx, memory.Identity{Session: "s", User: "u", Agent: "a"}, rec); err != nil {
		t.Errorf("Add with a full identity: %v", err)
	}
	if _, err := st.List(ctx, memory.Identity{User: "u", Agent: "a"}, memory.Query{Level: memory.LevelStore}); !errors.Is(err, memory.ErrPermissionDenied) {
		t.Errorf("store level without AllowStore = %v, want ErrPermissionDenied", err)
	}
}

func TestStoreCancelledAndClosed(t *testing.T) {
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	who := memory.Identity{Session: "s"}
	rec := memory.NewTurn(memory.Identity{}, memory.RoleUser, "x", time.Now())
	if err := st.Add(ctx, who, rec); err != context.Canceled {
		t.Errorf("Add on a cancelled context = %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := st.Add(context.Background(), who, rec); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("Add after Close = %v, want ErrClosed", err)
	}
	if _, err := st.Forget(context.Background(), who, memory.LevelSession); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("Forget after Close = %v, want ErrClosed", err)
	}
}

func TestClockOutOfRange(t *testing.T) {
	far := memory.Clock(func() time.Time { return time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) })
	if _, err := far.Nanos(); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Nanos of year 2300 = %v, want ErrInvalidArgument", err)
	}
	ok := memory.Clock(func() time.Time { return time.Unix(0, 42) })
	if n, err := ok.Nanos(); n != 42 || err != nil {
		t.Errorf("Nanos = %d, %v; want 42", n, err)
	}
	d := inmem.New(inmem.Options{Clock: far})
	f, _ := memory.Posture{}.Filter(memory.Identity{Session: "s"}, memory.LevelSession)
	if _, err := d.List(context.Background(), driver.Query{Filter: f}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("List with a clock past 2262 = %v, want ErrInvalidArgument", err)
	}
}

// searchSpy is a driver with vector search that records the query it is
// given, so the test sees the filter Store derives.
type searchSpy struct {
	driver.Driver
	got driver.Query
}

func (s *searchSpy) Search(_ context.Context, q driver.Query, _ []float32, _ int) ([]driver.Match, error) {
	s.got = q
	return nil, nil
}

func (s *searchSpy) SearchText(_ context.Context, q driver.Query, _ string, _ int) ([]driver.Match, error) {
	s.got = q
	return nil, nil
}

func TestStoreSwapAndSearch(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{Tokens: countWords{}, Clock: func() time.Time { return now }})
	defer st.Close()
	alice := memory.Identity{Tenant: "t", User: "alice", Session: "s"}
	doc := memory.NewDocument(memory.Identity{}, "plan", "working", `{"step":1}`, now)
	doc.ID = "plan"

	v, err := st.Swap(ctx, alice, doc, 0)
	if err != nil || v != 1 {
		t.Fatalf("Swap creating the document = %d, %v; want 1", v, err)
	}
	if _, err := st.Swap(ctx, alice, doc, 0); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("second create = %v, want ErrConflict", err)
	}
	recs, err := st.List(ctx, alice, memory.Query{Level: memory.LevelSession})
	if err != nil || len(recs) != 1 {
		t.Fatalf("after Swap the session holds %d records, %v; want 1", len(recs), err)
	}
	swapped := memory.Record{Identity: alice, Version: 1, Tokens: 0}
	if diff := cmp.Diff(swapped, recs[0], cmpopts.IgnoreFields(memory.Record{}, "ID", "Kind", "Label", "Key", "Content", "Metadata", "Created", "Expires", "Vector")); diff != "" {
		t.Fatalf("after Swap the session holds (-want +got; a document is not token-counted):\n%s", diff)
	}
	spoof := doc
	spoof.Identity = memory.Identity{Tenant: "t", User: "bob"}
	if _, err := st.Swap(ctx, alice, spoof, 1); !errors.Is(err, memory.ErrPermissionDenied) {
		t.Errorf("Swap attributed to another user = %v, want ErrPermissionDenied", err)
	}
	if _, err := st.Swap(ctx, memory.Identity{Tenant: "t"}, doc, 1); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Errorf("Swap by an identity with only a tenant = %v, want ErrIncompleteScope", err)
	}

	// A driver without vector search says so; one with it gets the
	// derived filter, without the limit.
	plain := backend.NewStore(struct{ driver.Driver }{inmem.New(inmem.Options{})}, backend.StoreOptions{})
	if _, err := plain.Search(ctx, alice, memory.Query{Level: memory.LevelSession}, []float32{1}, 3); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("Search on a driver without vector search = %v, want ErrUnimplemented", err)
	}
	if _, err := plain.Swap(ctx, alice, doc, 0); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("Swap on a driver without compare-and-swap = %v, want ErrUnimplemented", err)
	}
	spy := &searchSpy{Driver: inmem.New(inmem.Options{})}
	sst := backend.NewStore(spy, backend.StoreOptions{})
	if _, err := sst.Search(ctx, alice, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindFact}, Limit: 5}, []float32{1}, 3); err != nil {
		t.Fatal(err)
	}
	want := memory.Filter{Match: memory.FieldTenant | memory.FieldSession | memory.FieldUser, Identity: alice}
	if diff := cmp.Diff(want, spy.got.Filter); diff != "" {
		t.Errorf("Search passed the driver a filter (-want +got):\n%s", diff)
	}
	if spy.got.Limit != 0 || len(spy.got.Kinds) != 1 {
		t.Errorf("Search passed the driver limit %d and kinds %q, want no limit and one kind", spy.got.Limit, spy.got.Kinds)
	}
	if _, err := sst.Search(ctx, memory.Identity{Tenant: "t"}, memory.Query{Level: memory.LevelSession}, []float32{1}, 3); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Errorf("Search without a session at the session level = %v, want ErrIncompleteScope", err)
	}

	// Text search likewise.
	if _, err := plain.SearchText(ctx, alice, memory.Query{Level: memory.LevelSession}, "plan", 3); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("SearchText on a driver without text search = %v, want ErrUnimplemented", err)
	}
	spy.got = driver.Query{}
	if _, err := sst.SearchText(ctx, alice, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindFact}, Limit: 5}, "plan", 3); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, spy.got.Filter); diff != "" {
		t.Errorf("SearchText passed the driver a filter (-want +got):\n%s", diff)
	}
	if spy.got.Limit != 0 || len(spy.got.Kinds) != 1 {
		t.Errorf("SearchText passed the driver limit %d and kinds %q, want no limit and one kind", spy.got.Limit, spy.got.Kinds)
	}
	if _, err := sst.SearchText(ctx, memory.Identity{Tenant: "t"}, memory.Query{Level: memory.LevelSession}, "plan", 3); !errors.Is(err, memory.ErrIncompleteScope) {
		t.Errorf("SearchText without a session at the session level = %v, want ErrIncompleteScope", err)
	}
}

// TestStorePostureOnStoredIdentity checks that the posture applies to what
// is stored, not only to the caller: under RequirePrincipal and
// RequireAgentIdentity a fully identified writer cannot store a record
// attributed to a narrower identity without a user or an agent, which
// user-level erasure would then never reach. Only keyed documents carry a
// narrower identity, and only the writer's own fields of one keyed level.
func TestStorePostureOnStoredIdentity(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{
		Posture: memory.Posture{RequirePrincipal: true, RequireAgentIdentity: true, AllowStore: true},
		Tokens:  countWords{}, Clock: func() time.Time { return now }})
	defer st.Close()
	alice := memory.Identity{Tenant: "acme", User: "alice", Agent: "a", Instance: "i", Squad: "sq", Session: "s"}
	for _, c := range []struct {
		name string
		rec  memory.Record
	}{
		{"a fact attributed to the squad alone", memory.Record{Kind: memory.KindFact, Identity: memory.Identity{Tenant: "acme", Squad: "sq"}, Content: "x"}},
		{"a summary without the user", memory.Record{Kind: memory.KindSummary, Identity: memory.Identity{Tenant: "acme", Agent: "a", Session: "s"}, Content: "x"}},
		{"a turn without the agent", memory.Record{Kind: memory.KindTurn, Label: "user", Identity: memory.Identity{Tenant: "acme", User: "alice", Session: "s"}, Content: "x"}},
		{"a document under no keyed level", memory.Record{Kind: memory.KindDocument, Identity: memory.Identity{Tenant: "acme", Squad: "sq", User: "alice"}, Key: "k", Content: `{}`}},
		{"a document keyed by another squad", memory.NewDocument(memory.Identity{Tenant: "acme", Squad: "other"}, "k", "working", `{}`, now)},
	} {
		if err := st.Add(ctx, alice, c.rec); !errors.Is(err, memory.ErrPermissionDenied) {
			t.Errorf("%s: Add = %v, want ErrPermissionDenied", c.name, err)
		}
	}
	all, err := st.List(ctx, alice, memory.Query{Level: memory.LevelStore})
	if err != nil || len(all) != 0 {
		t.Fatalf("after refused writes the tenant holds %v (%v), want nothing", all, err)
	}

	// Everything a fully identified writer stores is reached by erasing
	// the writer's user.
	for _, r := range []memory.Record{
		{Kind: memory.KindFact, Content: "a fact"},
		{Kind: memory.KindTurn, Label: "assistant", Content: "a turn"},
		{Kind: memory.KindFact, Identity: alice, Content: "the writer's own identity, given"},
	} {
		if err := st.Add(ctx, alice, r); err != nil {
			t.Fatalf("Add of %q: %v", r.Content, err)
		}
	}
	if n, err := st.Forget(ctx, alice, memory.LevelUser); err != nil || n != 3 {
		t.Errorf("Forget at the user level removed %d (%v), want the writer's 3 records", n, err)
	}
}

// TestStoreSystemTenant checks that the tenant reserved for platform data
// cannot be used by a caller — no read, write, swap, search or erasure as
// that tenant — and that the platform view reads it for anyone but writes
// it only under Posture.AllowPlatform.
func TestStoreSystemTenant(t *testing.T) {
	ctx := context.Background()
	d := inmem.New(inmem.Options{})
	defer d.Close()
	st := backend.NewStore(d, backend.StoreOptions{Tokens: countWords{}})
	impostor := memory.Identity{Tenant: backend.DefaultSystemTenant, Agent: "a"}
	doc := memory.NewDocument(impostor, "live_chat_vendors", "working", `["evil"]`, time.Now())
	denied := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, memory.ErrPermissionDenied) {
			t.Errorf("%s = %v, want ErrPermissionDenied", what, err)
		}
	}
	denied("Add as the system tenant", st.Add(ctx, impostor, doc))
	_, err := st.Swap(ctx, impostor, doc, 0)
	denied("Swap as the system tenant", err)
	_, err = st.List(ctx, impostor, memory.Query{Level: memory.LevelParentAgent})
	denied("List as the system tenant", err)
	_, err = st.Forget(ctx, impostor, memory.LevelParentAgent)
	denied("Forget as the system tenant", err)
	_, err = st.Search(ctx, impostor, memory.Query{Level: memory.LevelParentAgent}, []float32{1}, 1)
	denied("Search as the system tenant", err)

	// The platform view writes only with AllowPlatform, reads always, and
	// reaches no other tenant.
	denied("a platform write without AllowPlatform", st.Platform().Add(ctx, impostor, doc))
	admin := backend.NewStore(d, backend.StoreOptions{Tokens: countWords{}, Posture: memory.Posture{AllowPlatform: true}}).Platform()
	if err := admin.Add(ctx, impostor, doc); err != nil {
		t.Fatalf("a platform write with AllowPlatform: %v", err)
	}
	got, err := st.Platform().List(ctx, impostor, memory.Query{Level: memory.LevelParentAgent})
	if err != nil || len(got) != 1 || got[0].Content != `["evil"]` {
		t.Errorf("the platform view reading the defaults = %v, %v", got, err)
	}
	_, err = st.Platform().Forget(ctx, impostor, memory.LevelParentAgent)
	denied("a platform erasure without AllowPlatform", err)
	acme := memory.Identity{Tenant: "acme", Agent: "a"}
	_, err = admin.List(ctx, acme, memory.Query{Level: memory.LevelParentAgent})
	denied("the platform view reading another tenant", err)
	denied("the platform view writing another tenant", admin.Add(ctx, acme, memory.Record{Kind: memory.KindFact, Content: "x"}))

	// The reserved name is an option.
	custom := backend.NewStore(d, backend.StoreOptions{SystemTenant: "platform"})
	if err := custom.Add(ctx, impostor, memory.Record{Kind: memory.KindFact, Content: "a tenant called system"}); err != nil {
		t.Errorf("with SystemTenant %q a tenant named system is ordinary: %v", "platform", err)
	}
	denied("Add as the custom system tenant", custom.Add(ctx, memory.Identity{Tenant: "platform", Agent: "a"}, memory.Record{Kind: memory.KindFact, Content: "x"}))
}

// TestStoreTurnRoles checks that a turn's role is one of the
// conversation roles.
func TestStoreTurnRoles(t *testing.T) {
	ctx := context.Background()
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{Tokens: countWords{}})
	defer st.Close()
	who := memory.Identity{Tenant: "t", Session: "s"}
	for _, role := range []string{"wizard", "", "User", " user"} {
		rec := memory.Record{Kind: memory.KindTurn, Label: role, Content: "x"}
		if err := st.Add(ctx, who, rec); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("a turn with role %q: Add = %v, want ErrInvalidArgument", role, err)
		}
	}
	for _, role := range memory.Roles {
		if err := st.Add(ctx, who, memory.NewTurn(memory.Identity{}, role, "x", time.Now())); err != nil {
			t.Errorf("a turn with role %q: %v", role, err)
		}
	}
	recs, err := st.List(ctx, who, memory.Query{Level: memory.LevelSession})
	if err != nil || len(recs) != len(memory.Roles) {
		t.Errorf("stored %d turns (%v), want %d", len(recs), err, len(memory.Roles))
	}
}

// TestNewTokenCounter checks that a Store counts with the encoding chosen
// by name, and that an unknown name is refused.
func TestNewTokenCounter(t *testing.T) {
	ctx := context.Background()
	// A text the two encodings split differently (checked below).
	text := "日本語のテキストを数える"
	counts := map[string]int{}
	for _, name := range []string{"cl100k_base", "o200k_base"} {
		c, err := backend.NewTokenCounter(name)
		if err != nil {
			t.Fatalf("NewTokenCounter(%q): %v", name, err)
		}
		st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{Tokens: c})
		who := memory.Identity{Tenant: "t", Session: "s"}
		if err := st.Add(ctx, who, memory.NewTurn(memory.Identity{}, memory.RoleUser, text, time.Now())); err != nil {
			t.Fatal(err)
		}
		recs, err := st.List(ctx, who, memory.Query{Level: memory.LevelSession})
		if err != nil || len(recs) != 1 {
			t.Fatalf("List = %v, %v", recs, err)
		}
		want, _ := c.CountTokens(ctx, text)
		if recs[0].Tokens != want || want == 0 {
			t.Errorf("%s: stored %d tokens, the counter says %d", name, recs[0].Tokens, want)
		}
		counts[name] = want
	}
	if counts["cl100k_base"] == counts["o200k_base"] {
		t.Errorf("both encodings count %q as %d tokens; pick a text they split differently", text, counts["cl100k_base"])
	}
	if _, err := backend.NewTokenCounter("p50k_base"); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("an unknown encoding: %v, want ErrInvalidArgument", err)
	}
}
