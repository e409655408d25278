package backend_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
)

type countWords struct{}

func (countWords) CountTokens(s string) int { return len(s) }

func TestStoreAttribution(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{Tokens: countWords{}, Clock: func() time.Time { return now }})
	defer st.Close()
	alice := memory.Identity{Tenant: "t", User: "alice", Agent: "a", Instance: "i", Squad: "sq", Session: "s"}

	// An empty attribution becomes the writer's whole identity; id, time
	// and token count are filled in.
	if err := st.Add(ctx, alice, memory.Record{Kind: memory.KindTurn, Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	recs, err := st.List(ctx, alice, memory.Query{Level: memory.LevelSession})
	if err != nil || len(recs) != 1 {
		t.Fatalf("List = %v, %v", recs, err)
	}
	if r := recs[0]; r.Identity != alice || !r.Created.Equal(now) || r.ID == "" || r.Tokens != 5 {
		t.Errorf("stored %+v", r)
	}

	// A narrower attribution (keyed memory's SQUAD level) is allowed.
	squadRow := memory.NewDocument(alice.Only(memory.LevelSquad.Keyed()), "k", "working", `{}`, now)
	if err := st.Add(ctx, alice, squadRow); err != nil {
		t.Fatalf("narrower attribution refused: %v", err)
	}

	// A field the writer does not hold, or another tenant, is refused and
	// nothing from the batch is stored.
	for _, spoof := range []memory.Identity{
		{Tenant: "t", User: "bob"},
		{Tenant: "other", User: "alice"},
		{Tenant: "", User: "alice"},
		{Tenant: "t", Squad: "sq2"},
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
	far := backend.Clock(func() time.Time { return time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) })
	if _, err := far.Nanos(); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Nanos of year 2300 = %v, want ErrInvalidArgument", err)
	}
	ok := backend.Clock(func() time.Time { return time.Unix(0, 42) })
	if n, err := ok.Nanos(); n != 42 || err != nil {
		t.Errorf("Nanos = %d, %v; want 42", n, err)
	}
	d := inmem.New(inmem.Options{Clock: far})
	f, _ := memory.Posture{}.Filter(memory.Identity{Session: "s"}, memory.LevelSession)
	if _, err := d.List(context.Background(), backend.Query{Filter: f}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("List with a clock past 2262 = %v, want ErrInvalidArgument", err)
	}
}
