package memory_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
)

// Writes carry the writer's whole identity; reads name a level, and the
// filter is derived from the reader's identity.
func Example() {
	ctx := context.Background()
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer store.Close()

	alice := memory.Identity{Tenant: "acme", User: "alice", Agent: "support-bot", Session: "s1"}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	_ = store.Add(ctx, alice,
		memory.NewTurn(memory.Identity{}, memory.RoleUser, "My order #123 is late.", now),
		memory.NewFact(memory.Identity{}, "alice prefers email", now),
	)

	// Alice's session, newest first.
	turns, _ := store.List(ctx, alice, memory.Query{Level: memory.LevelSession, Kinds: []memory.Kind{memory.KindTurn}})
	fmt.Println(len(turns), turns[0].Content)

	// Another user of the same agent sees nothing of hers.
	alicia := memory.Identity{Tenant: "acme", User: "alicia", Agent: "support-bot", Session: "s1"}
	other, _ := store.List(ctx, alicia, memory.Query{Level: memory.LevelAgent})
	fmt.Println(len(other))

	// A level whose field the caller lacks fails before storage is touched.
	_, err := store.List(ctx, memory.Identity{Tenant: "acme", User: "bob"}, memory.Query{Level: memory.LevelSession})
	fmt.Println(errors.Is(err, memory.ErrIncompleteScope))

	// Erasure at the user level reaches every tier.
	n, _ := store.Forget(ctx, alice, memory.LevelUser)
	fmt.Println(n)
	// Output:
	// 1 My order #123 is late.
	// 0
	// true
	// 2
}
