//go:build cgo

package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/sqlite"
)

// Open a database file, write two turns through a scoped Store and read
// the session back, newest first.
func Example() {
	dir, err := os.MkdirTemp("", "agentmem-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	d, err := sqlite.Open(filepath.Join(dir, "memory.db"), sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	store := backend.NewStore(d, backend.StoreOptions{})
	defer store.Close()

	ctx := context.Background()
	alice := memory.Identity{Tenant: "acme", User: "alice", Agent: "kaos://agent/default/helper", Session: "run-1"}
	now := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	err = store.Add(ctx, alice,
		memory.NewTurn(alice, memory.RoleUser, "What is the capital of France?", now),
		memory.NewTurn(alice, memory.RoleAssistant, "Paris.", now.Add(time.Second)),
	)
	if err != nil {
		log.Fatal(err)
	}

	recs, err := store.List(ctx, alice, memory.Query{Level: memory.LevelSession})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range recs {
		fmt.Printf("%s %s: %s (%d tokens)\n", r.Created.Format(time.TimeOnly), r.Label, r.Content, r.Tokens)
	}
	// Output:
	// 09:00:01 assistant: Paris. (2 tokens)
	// 09:00:00 user: What is the capital of France? (7 tokens)
}
