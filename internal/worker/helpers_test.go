package worker_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/internal/worker"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is a driver clock the test moves.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(t0.UnixNano())
	return c
}

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// newQueue returns an in-memory driver on c (nil: the real clock).
func newQueue(t *testing.T, c *clock) *inmem.Driver {
	t.Helper()
	var mc memory.Clock
	if c != nil {
		mc = c.now
	}
	d := inmem.New(inmem.Options{Clock: mc})
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// enqueue adds items ids to queue q of cl.
func enqueue(t *testing.T, cl driver.Claimer, q string, ids ...string) {
	t.Helper()
	items := make([]driver.Work, len(ids))
	for i, id := range ids {
		items[i] = driver.Work{Queue: q, ID: id, Identity: memory.Identity{Tenant: "t", User: "u"}, Payload: "p" + id, Created: t0.Add(time.Duration(i))}
	}
	if n, err := cl.Enqueue(context.Background(), items); err != nil || n != len(ids) {
		t.Fatalf("Enqueue = %d, %v", n, err)
	}
}

// pending reports whether item id of queue q is still in the queue
// (pending or claimed), by enqueueing it again: a new item is not.
func pending(t *testing.T, cl driver.Claimer, q, id string) bool {
	t.Helper()
	w := driver.Work{Queue: q, ID: id, Identity: memory.Identity{Tenant: "t", User: "u"}, Created: t0}
	n, err := cl.Enqueue(context.Background(), []driver.Work{w})
	if err != nil {
		t.Fatal(err)
	}
	return n == 0
}

// start starts a pool and closes it when the test ends.
func start(t *testing.T, cl driver.Claimer, opt worker.Options, h worker.Handler) *worker.Pool {
	t.Helper()
	p, err := worker.Start(cl, opt, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// eventually fails the test unless cond holds within a few seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// never fails the test if cond holds within d.
func never(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if cond() {
			t.Fatalf("%s", what)
		}
	}
}

// calls counts handler calls per item id and remembers each claim.
type calls struct {
	mu     sync.Mutex
	n      map[string]int
	claims []driver.Lease
}

func (c *calls) add(leases []driver.Lease) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	for _, l := range leases {
		c.n[l.ID]++
		c.claims = append(c.claims, l)
	}
}

func (c *calls) of(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[id]
}

func (c *calls) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.claims)
}

func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("item-%03d", i)
	}
	return out
}

// results returns err for each lease.
func results(leases []driver.Lease, err error) []error {
	out := make([]error, len(leases))
	for i := range out {
		out[i] = err
	}
	return out
}
