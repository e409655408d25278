package worker_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/internal/worker"
)

func ExampleStart() {
	ctx := context.Background()
	q := inmem.New(inmem.Options{})
	defer q.Close()

	done := make(chan struct{})
	pool, err := worker.Start(q, worker.Options{Queue: "greet", Batch: 10}, func(_ context.Context, leases []driver.Lease) []error {
		for _, l := range leases {
			fmt.Println("hello,", l.Payload)
		}
		close(done)
		return nil // every item done: the pool completes them
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Now()
	items := []driver.Work{
		{Queue: "greet", ID: "1", Identity: memory.Identity{User: "alice"}, Payload: "alice", Created: now},
		{Queue: "greet", ID: "2", Identity: memory.Identity{User: "bob"}, Payload: "bob", Created: now.Add(time.Nanosecond)},
	}
	if _, err := q.Enqueue(ctx, items); err != nil {
		fmt.Println(err)
		return
	}
	pool.Wake() // claim now rather than after Poll
	<-done
	_ = pool.Close()
	// Output:
	// hello, alice
	// hello, bob
}
