package tiered_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/tiers/tiered"
)

// A conversation passes the window's trigger; the background fold
// folds its oldest turns into the session's digest and extracts facts
// (extract.Rules, no model), and a recall brings back all three tiers.
func Example() {
	ctx := context.Background()
	st := backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
	m, err := tiered.New(st, tiered.Options{Budget: 200, Trigger: 40, Target: 25, Settle: time.Millisecond, IdleFlush: -1})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	alice := memory.Identity{Tenant: "acme", User: "alice", Agent: "concierge", Session: "trip-1"}
	var turns []tiered.Turn
	for _, said := range []string{
		"I live in Lisbon with two cats.",
		"My favourite food is grilled sardines.",
		"I work as a ferry engineer on the Tagus.",
		"Could you find me a quiet hotel in Porto for the weekend?",
		"Something near the river would be lovely.",
	} {
		turns = append(turns, tiered.Turn{Role: memory.RoleUser, Content: said})
	}
	if _, err := m.Append(ctx, alice, turns...); err != nil {
		panic(err)
	}
	// Folding runs in the background; wait until its facts are stored.
	for {
		found, err := m.Facts().Search(ctx, alice, memory.LevelSession, "Where does Alice live?", 1)
		if err != nil {
			panic(err)
		}
		if len(found.Hits) > 0 && strings.Contains(found.Hits[0].Record.Content, "Lisbon") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	rec, err := m.RecallWith(ctx, alice, "Where does Alice live?", tiered.RecallOptions{K: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(rec.Text)
	// Output:
	// [Memory]
	// Known facts:
	// - I live in Lisbon with two cats.
	// Earlier conversation:
	// User: I live in Lisbon with two cats.
	// User: My favourite food is grilled sardines.
	// User: I work as a ferry engineer on the Tagus.
	// Recent turns:
	// user: Could you find me a quiet hotel in Porto for the weekend?
	// user: Something near the river would be lovely.
	// [End of memory]
}
