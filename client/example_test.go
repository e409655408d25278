package client_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/client"
	"github.com/agentmem/memory/server"
	"github.com/agentmem/memory/tiers/tiered"
)

// An agent turn against the memory service: the same calls as on a
// *tiered.Memory in the process (tiered.Interface), over HTTP with a
// bearer token.
func Example() {
	ctx := context.Background()
	// The service, as cmd/agentmem-server would run it.
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer st.Close()
	mem, err := tiered.New(st, tiered.Options{})
	if err != nil {
		panic(err)
	}
	secret := []byte("a shared secret of at least 32 bytes")
	tokens, err := server.NewBearerTokens(server.BearerOptions{Secret: secret})
	if err != nil {
		panic(err)
	}
	srv, err := server.New(mem, server.Options{Authenticator: tokens})
	if err != nil {
		panic(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Shutdown(ctx)

	// The agent.
	who := memory.Identity{Tenant: "acme", User: "alice", Agent: "kaos://agent/ns/concierge", Session: "trip-1"}
	token, err := server.SignToken(secret, server.Claims{Tenant: who.Tenant, Subject: who.User, Agent: who.Agent})
	if err != nil {
		panic(err)
	}
	c, err := client.New(hs.URL, client.Options{Token: token, Level: memory.LevelAgent})
	if err != nil {
		panic(err)
	}
	var m tiered.Interface = c
	if _, err := m.Remember(ctx, who, "Alice prefers quiet hotels."); err != nil {
		panic(err)
	}
	if _, err := m.Append(ctx, who, tiered.Turn{Role: memory.RoleUser, Content: "Find me a hotel in Porto."}); err != nil {
		panic(err)
	}
	r, err := m.Recall(ctx, who, "Which hotel would Alice like?")
	if err != nil {
		panic(err)
	}
	fmt.Println(r.Text)
	// Output:
	// [Memory]
	// Known facts:
	// - Alice prefers quiet hotels.
	// Recent turns:
	// user: Find me a hotel in Porto.
	// [End of memory]
}

// A recall the service cannot answer degrades instead of failing the
// turn: the agent goes on without memory.
func Example_soft() {
	c, err := client.New("http://127.0.0.1:1", client.Options{MaxAttempts: 1}) // nothing listens there
	if err != nil {
		panic(err)
	}
	who := memory.Identity{Tenant: "acme", User: "alice", Session: "trip-1"}
	r, err := c.RecallWith(context.Background(), who, "anything", tiered.RecallOptions{})
	fmt.Println(err, r.Degraded, r.Text == "")
	// Output:
	// <nil> true true
}
