package inmem_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
)

func ExampleNew() {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	store := backend.NewStore(inmem.New(inmem.Options{Clock: func() time.Time { return now }}), backend.StoreOptions{})
	defer store.Close()

	who := memory.Identity{User: "alice", Session: "s1"}
	for i, text := range []string{"first", "second", "third"} {
		turn := memory.NewTurn(memory.Identity{}, memory.RoleUser, text, now.Add(time.Duration(i)*time.Second))
		if err := store.Add(ctx, who, turn); err != nil {
			fmt.Println(err)
			return
		}
	}
	newest, _ := store.List(ctx, who, memory.Query{Level: memory.LevelSession, Limit: 2})
	for _, r := range newest {
		fmt.Println(r.Content)
	}
	// Output:
	// third
	// second
}
