package postgres_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
)

// Share one database between the replicas of a program: each opens a
// driver over its own injected handle, and a work item enqueued by any
// replica is claimed by one of them at a time, until it completes or its
// lease lapses. It needs a server, so it is compiled but not run by go
// test; the conformance suite makes the same calls against a throwaway
// cluster.
func Example() {
	db, err := sqlx.Open(postgres.DriverName, "host=/var/run/postgresql user=postgres dbname=memory sslmode=disable")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	d, err := postgres.New(db, postgres.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()

	ctx := context.Background()
	alice := memory.Identity{Tenant: "acme", User: "alice", Session: "run-1"}
	work := driver.Work{Queue: "fold", ID: "run-1", Identity: alice, Payload: `{"turns":12}`, Created: time.Now()}
	if _, err := d.Enqueue(ctx, []driver.Work{work}); err != nil {
		log.Fatal(err)
	}
	leases, err := d.Claim(ctx, "fold", 10, time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range leases {
		fmt.Printf("folding %s for %s, attempt %d\n", l.ID, l.Identity.User, l.Attempt)
		if err := d.Complete(ctx, l); err != nil {
			log.Fatal(err)
		}
	}
}
