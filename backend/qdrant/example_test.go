package qdrant_test

import (
	"context"
	"fmt"
	"net"
	"time"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/qdrant"
	"github.com/agentmem/memory/internal/qdrantserver"
)

// A store on a Qdrant collection. The in-process server stands in for a
// Qdrant at localhost:6334 here; with a real one, qdrant.Open(ctx,
// "localhost:6334", ...) makes the client itself.
func Example() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := qdrantserver.New()
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()

	ctx := context.Background()
	client, err := qc.NewClient(&qc.Config{Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port, SkipCompatibilityCheck: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close() // the driver never closes a client it was given

	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	d, err := qdrant.New(ctx, qdrant.Options{Client: client, Collection: "agent-memory", Clock: func() time.Time { return now }})
	if err != nil {
		fmt.Println(err)
		return
	}
	store := backend.NewStore(d, backend.StoreOptions{Clock: func() time.Time { return now }})
	defer store.Close()

	who := memory.Identity{Tenant: "acme", User: "alice", Session: "s1"}
	for i, text := range []string{"first", "second", "third"} {
		turn := memory.NewTurn(memory.Identity{}, memory.RoleUser, text, now.Add(time.Duration(i)*time.Second))
		if err := store.Add(ctx, who, turn); err != nil {
			fmt.Println(err)
			return
		}
	}
	newest, err := store.List(ctx, who, memory.Query{Level: memory.LevelSession, Limit: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range newest {
		fmt.Println(r.Content)
	}
	n, err := store.Forget(ctx, who, memory.LevelSession)
	fmt.Println("forgot", n, err)
	// Output:
	// third
	// second
	// forgot 3 <nil>
}
