package working_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/tiers/working"
)

// A two-step squad pipeline: the keyword agent leaves its keywords at the
// SQUAD level, the squad's shared blackboard, where the next agent of the
// squad reads them.
func ExampleMemory() {
	ctx := context.Background()
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer store.Close()
	mem, err := working.New(store, working.Options{})
	if err != nil {
		log.Fatal(err)
	}

	// Step 1, the keyword agent's instance in the lead-generation squad.
	keywordAgent := memory.Identity{Tenant: "acme", Agent: "kaos://agent/leads/keywords", Instance: "ta-1", Squad: "lead-gen", Session: "run-7"}
	_, err = mem.Put(ctx, keywordAgent, working.Document{
		Level: memory.LevelSquad, Key: "keywords", Type: "working",
		JSON: json.RawMessage(`["live chat","support widget"]`),
	})
	if err != nil {
		log.Fatal(err)
	}

	// Step 2, another agent of the same squad.
	domainAgent := memory.Identity{Tenant: "acme", Agent: "kaos://agent/leads/domains", Instance: "ta-2", Squad: "lead-gen", Session: "run-7"}
	doc, err := mem.Get(ctx, domainAgent, memory.LevelSquad, "keywords")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(doc.Key, doc.Level, string(doc.JSON))

	// Another squad has no such row.
	other := domainAgent
	other.Squad = "outbound"
	_, err = mem.Get(ctx, other, memory.LevelSquad, "keywords")
	fmt.Println(errors.Is(err, memory.ErrNotFound))
	// Output:
	// keywords SQUAD ["live chat","support widget"]
	// true
}

// Platform defaults under the system tenant, extended by one tenant's
// override on read: the tenant adds a vendor and overrides another. The
// defaults are seeded through a store whose posture allows platform
// writes, as an administrative program's is; tenants' stores never do.
func ExampleMemory_LoadMerged() {
	ctx := context.Background()
	driver := inmem.New(inmem.Options{})
	store := backend.NewStore(driver, backend.StoreOptions{})
	defer store.Close()
	mem, err := working.New(store, working.Options{})
	if err != nil {
		log.Fatal(err)
	}
	mem.RegisterMerge("live_chat_vendors", working.MergeListByID("id"))

	agent := "kaos://agent/sales/opportunity-analyst"
	admin, err := working.New(backend.NewStore(driver, backend.StoreOptions{Posture: memory.Posture{AllowPlatform: true}}), working.Options{})
	if err != nil {
		log.Fatal(err)
	}
	_, err = admin.PutDefault(ctx, agent, working.Document{Key: "live_chat_vendors", Type: "domain",
		JSON: json.RawMessage(`[{"id":"intercom","label":"Intercom"},{"id":"tidio","label":"Tidio"}]`)})
	if err != nil {
		log.Fatal(err)
	}
	acme := memory.Identity{Tenant: "acme", Agent: agent}
	_, err = mem.Put(ctx, acme, working.Document{Level: memory.LevelParentAgent, Key: "live_chat_vendors", Type: "domain",
		JSON: json.RawMessage(`[{"id":"tidio","label":"Tidio (EU)"},{"id":"acmechat","label":"Acme Chat"}]`)})
	if err != nil {
		log.Fatal(err)
	}

	merged, err := mem.LoadMerged(ctx, acme, "live_chat_vendors")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(merged.JSON))
	fmt.Println("defaults from", merged.Defaults.Scope.Tenant, "override from", merged.Override.Scope.Tenant)
	// Output:
	// [{"id":"intercom","label":"Intercom"},{"id":"tidio","label":"Tidio (EU)"},{"id":"acmechat","label":"Acme Chat"}]
	// defaults from system override from acme
}

// Update reads a document, applies a function and swaps the result in,
// retrying when another writer got there first.
func ExampleMemory_Update() {
	ctx := context.Background()
	store := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	defer store.Close()
	mem, err := working.New(store, working.Options{})
	if err != nil {
		log.Fatal(err)
	}
	who := memory.Identity{Tenant: "acme", Instance: "ta-1", Squad: "lead-gen", Session: "run-7"}
	for range 3 {
		_, err := mem.Update(ctx, who, memory.LevelSquadRun, "leads_found", "working", func(cur working.Document, found bool) (json.RawMessage, error) {
			var n int
			if found {
				if err := json.Unmarshal(cur.JSON, &n); err != nil {
					return nil, err
				}
			}
			return json.RawMessage(fmt.Sprint(n + 1)), nil
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	doc, err := mem.Get(ctx, who, memory.LevelSquadRun, "leads_found")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(doc.JSON), "at version", doc.Version)
	// Output: 3 at version 3
}

func ExampleMergeAt() {
	rule := working.MergeAt("vendors", working.MergeListByID("id"))
	out, err := rule(
		json.RawMessage(`{"version":2,"vendors":[{"id":"intercom","signals":["widget.intercom.io"]}]}`),
		json.RawMessage(`{"vendors":[{"id":"acmechat","signals":["chat.acme.example"]}]}`),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(out))
	// Output: {"version":2,"vendors":[{"id":"intercom","signals":["widget.intercom.io"]},{"id":"acmechat","signals":["chat.acme.example"]}]}
}
