package backend_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
)

// A Store derives every filter from the caller's identity; the posture
// decides what a caller must hold.
func ExampleStore() {
	ctx := context.Background()
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{
		Posture: memory.Posture{RequirePrincipal: true},
	})
	defer store.Close()

	bot := memory.Identity{Tenant: "acme", Agent: "support-bot", Session: "s1"}
	err := store.Add(ctx, bot, memory.NewTurn(memory.Identity{}, memory.RoleAssistant, "hi", time.Now()))
	fmt.Println("write without a principal:", errors.Is(err, memory.ErrIncompleteScope))

	alice := bot
	alice.User = "alice"
	if err := store.Add(ctx, alice, memory.NewTurn(memory.Identity{}, memory.RoleUser, "hi", time.Now())); err != nil {
		fmt.Println(err)
		return
	}
	recs, _ := store.List(ctx, alice, memory.Query{Level: memory.LevelSession})
	fmt.Println("alice's session:", len(recs), "record, attributed to", recs[0].Identity.User)
	// Output:
	// write without a principal: true
	// alice's session: 1 record, attributed to alice
}
