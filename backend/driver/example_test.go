package driver_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
)

// A driver takes fully attributed records and queries whose filter is
// already derived, as backend.Store hands them over; optional
// capabilities are found by type assertion.
func Example() {
	ctx := context.Background()
	var d driver.Driver = inmem.New(inmem.Options{})
	defer d.Close()

	alice := memory.Identity{Tenant: "acme", User: "alice", Agent: "support-bot", Session: "s1"}
	turn := memory.NewTurn(alice, memory.RoleUser, "my order is late", time.Now())
	turn.ID = "t1"
	if err := d.Put(ctx, []memory.Record{turn}); err != nil {
		fmt.Println(err)
		return
	}
	match := memory.FieldTenant | memory.FieldUser | memory.FieldSession
	recs, err := d.List(ctx, driver.Query{Filter: memory.Filter{Match: match, Identity: alice.Only(match)}})
	fmt.Println("alice's session:", len(recs), "record,", err)

	if sw, ok := d.(driver.Swapper); ok {
		turn.Content = "my order arrived"
		_, err := sw.Swap(ctx, turn, 7) // the stored version is 1
		fmt.Println("swap against a stale version is a conflict:", errors.Is(err, memory.ErrConflict))
	}
	// Output:
	// alice's session: 1 record, <nil>
	// swap against a stale version is a conflict: true
}
