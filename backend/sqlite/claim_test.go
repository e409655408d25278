//go:build cgo

package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
)

const claimCrashDBEnv = "AGENTMEM_SQLITE_CLAIM_CRASH_DB"

// TestClaimCrashChild is the child process of TestClaimSIGKILL; run
// directly, it skips.
func TestClaimCrashChild(t *testing.T) {
	backendtest.ClaimCrashChild(t, func() (driver.Driver, error) { return Open(os.Getenv(claimCrashDBEnv), Options{}) })
}

// TestClaimSIGKILL kills processes holding claims on one file: their
// items are not claimable until the leases lapse, then are, and every
// item is completed exactly once.
func TestClaimSIGKILL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "claims.db")
	backendtest.ClaimCrashTest(t, "TestClaimCrashChild", []string{claimCrashDBEnv + "=" + path},
		func(clock memory.Clock) (driver.Driver, error) { return Open(path, Options{Clock: clock}) })
}

// clockAt is a clock stopped at t.
func clockAt(t time.Time) memory.Clock { return func() time.Time { return t } }

func enqueueN(t *testing.T, d *Driver, queue string, n int) {
	t.Helper()
	var items []driver.Work
	for i := range n {
		items = append(items, driver.Work{Queue: queue, ID: fmt.Sprintf("w%03d", i), Identity: memory.Identity{Tenant: "t"},
			Payload: "p", Created: time.Unix(1, int64(i))})
	}
	if got, err := d.Enqueue(context.Background(), items); err != nil || got != n {
		t.Fatalf("Enqueue of %d items: %d new, error %v", n, got, err)
	}
}

// TestClaimHoldsNoLock checks that a claim leaves no transaction open and
// the write lock free once Claim returns: another driver on the file,
// whose writes wait at most 20 ms for a lock, writes at once while the
// claims are held; and that a Claim finding nothing claimable does not
// take the write lock at all.
func TestClaimHoldsNoLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "claims.db")
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	other, err := Open(path, Options{BusyTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	enqueueN(t, d, "q", 10)
	ls, err := d.Claim(ctx, "q", 5, time.Minute)
	if err != nil || len(ls) != 5 {
		t.Fatalf("Claim: %d leases, error %v", len(ls), err)
	}
	conn, err := d.w.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Raw(func(dc any) error {
		if !dc.(*sqlite3.SQLiteConn).AutoCommit() {
			t.Error("the writer connection is inside a transaction after Claim returned")
		}
		return nil
	})
	conn.Close()
	for i := range 20 {
		if _, err := other.Enqueue(ctx, []driver.Work{{Queue: "q", ID: fmt.Sprintf("x%d", i), Created: time.Unix(2, 0)}}); err != nil {
			t.Fatalf("another driver's write while claims are held: %v", err)
		}
		got, err := other.Claim(ctx, "q", 1, time.Minute)
		if err != nil || len(got) != 1 {
			t.Fatalf("another driver's claim while claims are held: %d leases, error %v", len(got), err)
		}
	}

	// A writer in another connection holds the write lock; claims that
	// find nothing to claim do not wait for it.
	lock, err := other.w.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = lock.ExecContext(ctx, "ROLLBACK") }()
	quick, err := Open(path, Options{BusyTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer quick.Close()
	start := time.Now()
	for range 50 {
		if got, err := quick.Claim(ctx, "empty", 10, time.Minute); err != nil || len(got) != 0 {
			t.Fatalf("Claim of an empty queue while another connection writes: %d leases, error %v", len(got), err)
		}
	}
	t.Logf("50 claims of an empty queue beside a held write lock took %s", time.Since(start))
	// A claim that has work to claim waits for the lock, and reports its
	// time-out as a conflict.
	_, err = quick.Claim(ctx, "q", 1, time.Minute)
	if !errors.Is(err, memory.ErrConflict) {
		t.Errorf("Claim while another process holds the write lock past the busy timeout: got %v, want memory.ErrConflict", err)
	}
}

// TestClaimLeaseStartsUnderTheLock checks that a claim's lease runs from
// the moment the write lock is held, not from when Claim was called: a
// claim that waited for the lock gets its full lease.
func TestClaimLeaseStartsUnderTheLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "claims.db")
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	enqueueN(t, d, "q", 1)
	lock, err := d.w.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	other, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	time.AfterFunc(300*time.Millisecond, func() {
		_, _ = lock.ExecContext(ctx, "ROLLBACK")
		lock.Close()
	})
	start := time.Now()
	ls, err := other.Claim(ctx, "q", 1, time.Second)
	if err != nil || len(ls) != 1 {
		t.Fatalf("Claim: %d leases, error %v", len(ls), err)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Fatalf("the claim waited %s for the write lock, want about 300ms", waited)
	}
	if ls[0].Expires.Before(start.Add(250*time.Millisecond + time.Second)) {
		t.Errorf("the lease expires %s after Claim was called, want the full second after the lock was taken", ls[0].Expires.Sub(start))
	}
}

// TestClaimQueryPlan checks that a claim reads the queue's order index
// from its oldest item, with no sort, and that the calls on one lease use
// the primary key.
func TestClaimQueryPlan(t *testing.T) {
	d, _ := openTemp(t, Options{})
	for query, index := range map[string]string{
		pickSQL:     "USING INDEX memory_work_order",
		renewSQL:    "sqlite_autoindex_memory_work_1",
		completeSQL: "sqlite_autoindex_memory_work_1",
		releaseSQL:  "sqlite_autoindex_memory_work_1",
	} {
		n := strings.Count(query, "?")
		args := make([]any, n)
		for i := range args {
			args[i] = 1
		}
		rows, err := d.r.Queryx("EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan strings.Builder
		for rows.Next() {
			var id, parent, notused int
			var detail string
			_ = rows.Scan(&id, &parent, &notused, &detail)
			plan.WriteString(detail + "; ")
		}
		rows.Close()
		if !strings.Contains(plan.String(), index) || strings.Contains(plan.String(), "TEMP B-TREE") {
			t.Errorf("plan of %q: %q, want %s and no sort", strings.Fields(query)[0], plan.String(), index)
		}
	}
}

// TestEraseWorkQueryPlan checks that an erasure of work searches an index
// led by the queue rather than scanning every queue's items.
func TestEraseWorkQueryPlan(t *testing.T) {
	d, _ := openTemp(t, Options{})
	f := memory.Filter{Match: memory.FieldTenant | memory.FieldUser | memory.FieldSession, Identity: memory.Identity{Tenant: "t", User: "u", Session: "s"}}
	query, args := sq.EraseWorkSQL("q", f)
	rows, err := d.r.Queryx("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(detail + "; ")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.String(), "SEARCH memory_work USING INDEX") || !strings.Contains(plan.String(), "(queue=?") {
		t.Errorf("plan of the erasure of work: %q, want a search of an index by queue", plan.String())
	}
	t.Logf("plan: %s", plan.String())
}

// TestClaimClock checks that claims read the driver's clock: an item
// claimed at one reading lapses exactly at that reading plus the lease.
func TestClaimClock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "claims.db")
	at := time.Date(2030, 1, 1, 0, 0, 0, 7, time.UTC)
	d, err := Open(path, Options{Clock: clockAt(at)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	enqueueN(t, d, "q", 1)
	ls, err := d.Claim(ctx, "q", 1, time.Hour)
	if err != nil || len(ls) != 1 || !ls[0].Expires.Equal(at.Add(time.Hour)) {
		t.Fatalf("Claim at %s for an hour: %+v, error %v", at, ls, err)
	}
	before, err := Open(path, Options{Clock: clockAt(at.Add(time.Hour - 1))})
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	if got, err := before.Claim(ctx, "q", 1, time.Hour); err != nil || len(got) != 0 {
		t.Errorf("claim 1ns before the lease lapses: %d leases, error %v", len(got), err)
	}
	after, err := Open(path, Options{Clock: clockAt(at.Add(time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if got, err := after.Claim(ctx, "q", 1, time.Hour); err != nil || len(got) != 1 || got[0].Attempt != 2 {
		t.Errorf("claim when the lease lapses: %+v, error %v", got, err)
	}
	// A lease that would end after 2262 is refused.
	late, err := Open(path, Options{Clock: clockAt(time.Unix(0, 1<<63-1-int64(time.Minute)))})
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	if _, err := late.Claim(ctx, "q", 1, time.Hour); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("claim whose lease ends after 2262: got %v, want memory.ErrInvalidArgument", err)
	}
}
