package fs_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/fs"
)

// Open a directory, write two turns through a scoped Store, and read the
// session back, newest first, through a second driver on the same
// directory — as another process would.
func Example() {
	dir, err := os.MkdirTemp("", "agentmem-fs-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	d, err := fs.Open(dir, fs.Options{})
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

	other, err := fs.Open(dir, fs.Options{})
	if err != nil {
		log.Fatal(err)
	}
	reader := backend.NewStore(other, backend.StoreOptions{})
	defer reader.Close()
	recs, err := reader.List(ctx, alice, memory.Query{Level: memory.LevelSession})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range recs {
		fmt.Printf("%s %s: %s (version %d)\n", r.Created.Format(time.TimeOnly), r.Label, r.Content, r.Version)
	}
	// Output:
	// 09:00:01 assistant: Paris. (version 1)
	// 09:00:00 user: What is the capital of France? (version 1)
}
