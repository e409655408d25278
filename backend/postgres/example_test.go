package postgres_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/postgres"
)

// Open a PostgreSQL database, write two turns through a scoped Store and
// read the session back, newest first. It needs a server, so it is
// compiled but not run by go test; the driver's tests run the same calls
// against a throwaway cluster.
func Example() {
	d, err := postgres.Open("host=/var/run/postgresql user=postgres dbname=memory sslmode=disable", postgres.Options{})
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
		fmt.Printf("%s %s: %s\n", r.Created.Format(time.TimeOnly), r.Label, r.Content)
	}
}
