package tiers_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/tiers"
)

// A knowledge retriever with vector memory: each step's entry is written
// to the directory, the next step recalls the newest entries within
// maxContextTokens, and the vector-search function finds entries by
// keyword, naming the entry file to cite.
func ExampleVector() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "agent-memory-") // the PVC mount in a cluster
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// The store is the source of posture, token counts and clock; the
	// entries themselves live in the directory.
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer store.Close()
	mem, err := tiers.NewVector(ctx, store, tiers.VectorOptions{Dir: dir, MaxContextTokens: 8000})
	if err != nil {
		log.Fatal(err)
	}
	defer mem.Close()
	id := memory.Identity{Agent: "kaos://agent/ai-agents/knowledge-retriever", Session: "run-1"}

	for _, step := range []tiers.Step{
		{Workflow: "research", Name: "collect", Input: "Find the cause of the checkout outage", Output: "Connection pool exhausted in payments-db"},
		{Workflow: "research", Name: "collect", Input: "Find the cause of the login slowness", Output: "Cold cache after the deploy"},
	} {
		if err := mem.Save(ctx, id, step); err != nil { // step end
			log.Fatal(err)
		}
	}

	id.Session = "run-2"
	// The next step's start: the newest entries that fit the budget, whatever
	// the step is about; Search is the way to look entries up by keyword.
	rec, err := mem.Recall(ctx, id, "Why did payments fail?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(tiers.Prepend(rec, "You are a knowledge retrieval agent.\n"))

	matches, err := mem.Search(ctx, id, "payments outage", 5)
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range matches {
		fmt.Printf("score %.3f in %s (the first entry: %t)\n", m.Score, m.Key, m.Entry == rec.Records[0].ID)
	}
	// Output:
	// [Previous execution context]
	// [research/collect] Task: Find the cause of the checkout outage | Result: Connection pool exhausted in payments-db
	// [research/collect] Task: Find the cause of the login slowness | Result: Cold cache after the deploy
	//
	// [Current task follows]
	// You are a knowledge retrieval agent.
	// score 1.341 in research/collect (the first entry: true)
}
