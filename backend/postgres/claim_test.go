package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
)

const claimCrashDSNEnv = "AGENTMEM_POSTGRES_CLAIM_CRASH_DSN"

// TestClaimCrashChild is the child process of TestClaimSIGKILL; run
// directly, it skips.
func TestClaimCrashChild(t *testing.T) {
	backendtest.ClaimCrashChild(t, func() (driver.Driver, error) {
		return postgres.Open(os.Getenv(claimCrashDSNEnv), postgres.Options{})
	})
}

// TestClaimSIGKILL kills client processes holding claims: their items are
// not claimable until the leases lapse, then are, and every item is
// completed exactly once.
func TestClaimSIGKILL(t *testing.T) {
	dsn := freshDB(t)
	backendtest.ClaimCrashTest(t, "TestClaimCrashChild", []string{claimCrashDSNEnv + "=" + dsn},
		func(clock memory.Clock) (driver.Driver, error) {
			return postgres.Open(dsn, postgres.Options{Clock: clock})
		})
}

// testClock is a clock the tests move by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *testClock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

func enqueueN(t *testing.T, c driver.Claimer, queue string, n int) {
	t.Helper()
	var items []driver.Work
	for i := range n {
		items = append(items, driver.Work{Queue: queue, ID: fmt.Sprintf("w%05d", i), Identity: memory.Identity{Tenant: "t"},
			Payload: "p", Created: time.Unix(1, int64(i))})
	}
	for len(items) > 0 {
		k := min(len(items), memory.MaxBatch)
		if got, err := c.Enqueue(context.Background(), items[:k]); err != nil || got != k {
			t.Fatalf("Enqueue of %d items: %d new, error %v", k, got, err)
		}
		items = items[k:]
	}
}

func openWith(t *testing.T, dsn string, clock memory.Clock) *postgres.Driver {
	t.Helper()
	d, err := postgres.Open(dsn, postgres.Options{Clock: clock})
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// TestClaimTerminatedConnections terminates, from another session, every
// server process of a replica that holds claims (pg_terminate_backend, as
// when its host is cut off): its claims stay until their lease lapses by
// the driver's clock, then the other replica takes them over and
// completes them, and the dropped replica's tokens no longer complete
// anything.
func TestClaimTerminatedConnections(t *testing.T) {
	ctx := context.Background()
	dsn := freshDB(t)
	clk := &testClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	a := openWith(t, dsn+" application_name=claim-replica-a", clk.Now)
	b := openWith(t, dsn, clk.Now)
	enqueueN(t, b, "q", 6)
	held, err := a.Claim(ctx, "q", 3, time.Minute)
	if err != nil || len(held) != 3 {
		t.Fatalf("replica a's Claim: %d leases, error %v", len(held), err)
	}
	// Open a few more of a's connections, so there is more than one to cut.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { _ = a.DB().QueryRowContext(ctx, "SELECT pg_sleep(0.05)").Scan(new(string)) })
	}
	wg.Wait()

	admin, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var pids []int
	if err := admin.SelectContext(ctx, &pids, `SELECT pid FROM pg_stat_activity WHERE application_name = 'claim-replica-a'`); err != nil {
		t.Fatal(err)
	}
	if len(pids) == 0 {
		t.Fatal("replica a has no connection to terminate")
	}
	for _, pid := range pids {
		var ok bool
		if err := admin.GetContext(ctx, &ok, `SELECT pg_terminate_backend($1)`, pid); err != nil || !ok {
			t.Fatalf("pg_terminate_backend(%d): %v, error %v", pid, ok, err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		var left int
		if err := admin.GetContext(ctx, &left, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'claim-replica-a'`); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of replica a's connections survive pg_terminate_backend", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("terminated replica a's %d connections while it held %d claims", len(pids), len(held))

	got, err := b.Claim(ctx, "q", 10, time.Minute)
	if err != nil || len(got) != 3 || got[0].ID != "w00003" {
		t.Fatalf("replica b's Claim while a's leases run: %+v, error %v; want the 3 items a does not hold", got, err)
	}
	for _, l := range got {
		if err := b.Complete(ctx, l); err != nil {
			t.Fatalf("Complete: %v", err)
		}
	}
	clk.Set(held[0].Expires.Add(-time.Nanosecond))
	if got, err := b.Claim(ctx, "q", 10, time.Minute); err != nil || len(got) != 0 {
		t.Fatalf("Claim 1ns before a's leases lapse: %d leases, error %v", len(got), err)
	}
	clk.Set(held[0].Expires)
	got, err = b.Claim(ctx, "q", 10, time.Minute)
	if err != nil || len(got) != 3 {
		t.Fatalf("Claim when a's leases lapse: %d leases, error %v", len(got), err)
	}
	for i, l := range got {
		if l.ID != held[i].ID || l.Attempt != 2 {
			t.Errorf("reclaimed %s at attempt %d, want %s at attempt 2", l.ID, l.Attempt, held[i].ID)
		}
	}
	// Whatever a's pool makes of its lost connections, its claims are over.
	for _, l := range held {
		if err := a.Complete(ctx, l); !errors.Is(err, memory.ErrConflict) && !errors.Is(err, memory.ErrClosed) {
			t.Errorf("replica a's Complete of %s after b took it over: got %v, want memory.ErrConflict (or memory.ErrClosed)", l.ID, err)
		}
	}
	for _, l := range got {
		if err := b.Complete(ctx, l); err != nil {
			t.Errorf("Complete of reclaimed %s: %v", l.ID, err)
		}
	}
	if got, err := b.Claim(ctx, "q", 10, time.Minute); err != nil || len(got) != 0 {
		t.Errorf("Claim after completing everything: %d leases, error %v", len(got), err)
	}
}

// TestClaimHoldsNoLock checks that once Claim returns its transaction is
// over: no session of the database is idle in a transaction, none holds a
// lock on the queue's table, and another session can lock every row of
// the queue without waiting (FOR UPDATE NOWAIT).
func TestClaimHoldsNoLock(t *testing.T) {
	ctx := context.Background()
	dsn := freshDB(t)
	d := openWith(t, dsn, nil)
	enqueueN(t, d, "q", 20)
	ls, err := d.Claim(ctx, "q", 10, time.Minute)
	if err != nil || len(ls) != 10 {
		t.Fatalf("Claim: %d leases, error %v", len(ls), err)
	}
	admin, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var idle, locks int
	if err := admin.GetContext(ctx, &idle, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND state LIKE 'idle in transaction%'`); err != nil {
		t.Fatal(err)
	}
	if err := admin.GetContext(ctx, &locks, `SELECT count(*) FROM pg_locks
		WHERE relation = 'memory_work'::regclass AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	if idle != 0 || locks != 0 {
		t.Errorf("after Claim returned: %d sessions idle in a transaction, %d locks on memory_work; want none", idle, locks)
	}
	tx, err := admin.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	var rows []string
	if err := tx.SelectContext(ctx, &rows, `SELECT id FROM memory_work FOR UPDATE NOWAIT`); err != nil {
		t.Fatalf("locking every row of the queue while claims are held: %v", err)
	}
	if len(rows) != 20 {
		t.Errorf("locked %d rows, want 20", len(rows))
	}
}

// TestClaimQueryPlan checks that a claim walks the queue's order index
// and sorts nothing, even in a new database whose statistics are
// missing, where the planner left to itself sorts the whole queue.
func TestClaimQueryPlan(t *testing.T) {
	ctx := context.Background()
	dsn := freshDB(t)
	d := openWith(t, dsn, nil)
	enqueueN(t, d, "q", 5000)
	if _, err := d.Claim(ctx, "q", 100, time.Minute); err != nil {
		t.Fatal(err)
	}
	args := []any{"q", time.Now().UnixNano(), 8, pq.StringArray(strings.Fields("a b c d e f g h")), time.Now().UnixNano()}
	explain := func(setting bool) string {
		tx, err := d.DB().BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback() }()
		if setting {
			if _, err := tx.ExecContext(ctx, postgres.PickPlanSQL); err != nil {
				t.Fatal(err)
			}
		}
		var lines []string
		if err := tx.SelectContext(ctx, &lines, "EXPLAIN "+postgres.ClaimSQL, args...); err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	plan := explain(true)
	if !strings.Contains(plan, "Index Scan using memory_work_order") || strings.Contains(plan, "Sort") {
		t.Errorf("claim plan:\n%s\nwant an index scan of memory_work_order and no sort", plan)
	}
	t.Logf("the planner's own choice, without statistics:\n%s", explain(false))
}
