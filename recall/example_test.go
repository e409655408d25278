package recall_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/recall"
)

// Recall the facts most relevant to a question.
func Example() {
	ctx := context.Background()
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer store.Close()
	alice := memory.Identity{Tenant: "acme", User: "alice", Agent: "support-bot", Session: "s1"}
	now := time.Now()
	for i, fact := range []string{
		"Alice's parcel was delivered to the wrong address",
		"Alice prefers email over phone calls",
		"Alice moved to Lisbon in March",
	} {
		if err := store.Add(ctx, alice, memory.Record{Kind: memory.KindFact, Content: fact, Created: now.Add(time.Duration(i) * time.Second)}); err != nil {
			fmt.Println(err)
			return
		}
	}
	r, err := recall.New(store, recall.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	results, err := r.Recall(ctx, alice, memory.Query{Level: memory.LevelUser}, "where was the parcel delivered?", 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(results.Hits[0].Record.Content)
	// Output:
	// Alice's parcel was delivered to the wrong address
}
