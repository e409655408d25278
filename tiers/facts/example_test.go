package facts_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/tiers/facts"
)

// A user moves: the new fact supersedes the old one, which is no longer
// searched but stays in the fact's history, and re-adding the old text
// does not bring it back.
func ExampleFacts() {
	ctx := context.Background()
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer store.Close()
	mem, err := facts.New(store, facts.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// Who is acting: set by your program from verified credentials.
	alice := memory.Identity{Tenant: "acme", User: "alice", Agent: "kaos://agent/ns/helper", Session: "s1"}

	added, err := mem.Add(ctx, alice, extract.Fact{Text: "Alice lives in Paris", Sources: []string{"turn-1"}})
	if err != nil {
		log.Fatal(err)
	}
	paris := added[0].Record
	fmt.Println(added[0].Status, paris.Content)

	berlin, err := mem.Update(ctx, alice, paris.ID, "Alice lives in Berlin")
	if err != nil {
		log.Fatal(err)
	}

	res, err := mem.Search(ctx, alice, memory.LevelUser, "Paris or Berlin?", 5)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range res.Hits {
		fmt.Println("search:", h.Record.Content)
	}

	history, err := mem.History(ctx, alice, memory.LevelUser, berlin.ID)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range history {
		_, until, err := facts.Validity(r)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("history: %s (%s, ended: %t)\n", r.Content, r.Kind, !until.IsZero())
	}

	again, err := mem.Add(ctx, alice, extract.Fact{Text: "Alice lives in Paris"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(again[0].Status, again[0].Record.Content)
	// Output:
	// created Alice lives in Paris
	// search: Alice lives in Berlin
	// history: Alice lives in Paris (superseded, ended: true)
	// history: Alice lives in Berlin (fact, ended: false)
	// superseded Alice lives in Paris
}
