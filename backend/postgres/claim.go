package postgres

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/sqldriver"
)

var (
	_ driver.Claimer    = (*Driver)(nil)
	_ driver.WorkEraser = (*Driver)(nil)
)

// The work queue lives in the memory_work table; see internal/sqldriver
// for its rows. Every call is one short transaction (all but Claim a
// single statement), committed before the call returns; a worker that
// dies (its context cancelled, its connection terminated, its process
// killed) leaves rows that any replica may claim once their lease lapses.
// Claims lock the rows they pick with FOR UPDATE SKIP LOCKED, so
// concurrent claims from any number of replicas pick disjoint rows
// without waiting for each other.

// enqueueSQL adds a batch given as one array per column, leaving ids
// already in their queue (or earlier in the batch) as they are.
const enqueueSQL = `INSERT INTO memory_work
	(queue, id, tenant_id, user_id, agent_id, instance_id, squad_id, session_id, created, payload)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
	$9::bigint[], $10::text[])
ON CONFLICT (queue, id) DO NOTHING`

// leaseColumns are sqldriver.LeaseColumns, qualified by the alias w the
// claim's UPDATE ... FROM needs.
const leaseColumns = `w.queue, w.id, w.tenant_id, w.user_id, w.agent_id, w.instance_id, w.squad_id, w.session_id,
	w.created, w.payload, w.token, w.lease_until, w.attempts`

const (
	// pickPlanSQL makes the claim's pick walk memory_work_order in order
	// rather than sort every claimable row: without statistics on the
	// table (a new database, or one autovacuum has not analysed since the
	// queue grew), the planner takes a queue to be a small share of it
	// and prefers sorting, which costs milliseconds per claim at ten
	// thousand items. Walking the index is never worse: it stops after n
	// claimable rows.
	pickPlanSQL = `SET LOCAL enable_sort = off`
	// claimSQL claims the oldest claimable items of queue $1 at time $2,
	// at most $3 of them, giving each one of the tokens of $4 and the
	// lease end $5. Rows another transaction has locked (being claimed,
	// completed, renewed or released) are skipped, and a row claimed by a
	// transaction that committed after this statement's snapshot is
	// rechecked when locked and dropped.
	claimSQL = `WITH picked AS MATERIALIZED (
	SELECT id FROM memory_work
	WHERE queue = $1 AND (token = '' OR lease_until <= $2)
	ORDER BY created, id
	LIMIT $3
	FOR UPDATE SKIP LOCKED
), numbered AS (
	SELECT id, row_number() OVER () AS k FROM picked
)
UPDATE memory_work AS w
SET token = ($4::text[])[numbered.k::int], lease_until = $5, attempts = w.attempts + 1
FROM numbered
WHERE w.queue = $1 AND w.id = numbered.id
RETURNING ` + leaseColumns
)

// Enqueue adds items in one statement, all or nothing, and reports how
// many were new; see driver.Claimer. An id already pending or claimed in
// its queue, or repeated within the batch, is left as it first was.
// Items are inserted in (queue, id) order, so concurrent batches sharing
// ids do not deadlock; one that nevertheless loses a deadlock is retried,
// as Put is.
func (d *Driver) Enqueue(ctx context.Context, items []driver.Work) (int, error) {
	if err := d.enter(ctx, driver.CheckEnqueue(items)); err != nil {
		return 0, err
	}
	defer d.gate.Leave()
	if len(items) == 0 {
		return 0, nil
	}
	items = slices.Clone(items)
	slices.SortStableFunc(items, func(a, b driver.Work) int {
		if c := strings.Compare(a.Queue, b.Queue); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	var (
		n       = len(items)
		text    [9][]string // queue, id, the six identity fields, payload
		created = make([]int64, n)
	)
	for c := range text {
		text[c] = make([]string, n)
	}
	for i, w := range items {
		id := w.Identity
		for c, v := range [...]string{w.Queue, w.ID, id.Tenant, id.User, id.Agent, id.Instance, id.Squad, id.Session, w.Payload} {
			text[c][i] = v
		}
		created[i] = w.Created.UnixNano() // in range: Validate checked it
	}
	args := []any{
		pq.StringArray(text[0]), pq.StringArray(text[1]), pq.StringArray(text[2]), pq.StringArray(text[3]),
		pq.StringArray(text[4]), pq.StringArray(text[5]), pq.StringArray(text[6]), pq.StringArray(text[7]),
		pq.Int64Array(created), pq.StringArray(text[8]),
	}
	for attempt := 1; ; attempt++ {
		res, err := d.db.ExecContext(ctx, enqueueSQL, args...)
		if err == nil {
			added, err := res.RowsAffected()
			if err != nil {
				return 0, fail(ctx, err, "postgres: enqueue work")
			}
			return int(added), nil
		}
		if attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			return 0, fail(ctx, err, "postgres: enqueue work")
		}
		d.log.Debug("postgres: retrying an enqueue that lost a race", "attempt", attempt, "err", err)
	}
}

// Claim leases up to n claimable items of queue, oldest first, in one
// short transaction committed before it returns; see driver.Claimer.
func (d *Driver) Claim(ctx context.Context, queue string, n int, lease time.Duration) ([]driver.Lease, error) {
	if err := d.enter(ctx, driver.CheckClaim(queue, n, lease)); err != nil {
		return nil, err
	}
	defer d.gate.Leave()
	out, err := d.claim(ctx, queue, n, lease)
	if err != nil {
		return nil, err
	}
	// RETURNING follows no particular order.
	slices.SortFunc(out, func(a, b driver.Lease) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// claim runs one claim in a short transaction and commits it.
func (d *Driver) claim(ctx context.Context, queue string, n int, lease time.Duration) ([]driver.Lease, error) {
	tokens := make(pq.StringArray, n)
	for i := range tokens {
		tokens[i] = driver.NewLeaseToken()
	}
	tx, err := d.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fail(ctx, err, "postgres: begin claim")
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, pickPlanSQL); err != nil {
		return nil, fail(ctx, err, "postgres: claim work")
	}
	// The clock is read as late as possible, so the round trips before
	// the claim shorten its lease as little as they can.
	now, until, err := driver.LeaseEnd(d.clock, lease)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryxContext(ctx, claimSQL, queue, now, n, tokens, until)
	if err != nil {
		return nil, fail(ctx, err, "postgres: claim work")
	}
	defer rows.Close()
	var out []driver.Lease
	for rows.Next() {
		l, err := sqldriver.ScanLease(rows)
		if err != nil {
			return nil, fail(ctx, err, "postgres: claim work")
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fail(ctx, err, "postgres: claim work")
	}
	if err := tx.Commit(); err != nil {
		return nil, fail(ctx, err, "postgres: commit claim")
	}
	return out, nil
}

// Renew extends a current claim in one statement; see driver.Claimer.
func (d *Driver) Renew(ctx context.Context, l driver.Lease, lease time.Duration) (driver.Lease, error) {
	if err := d.enter(ctx, driver.CheckRenew(l, lease)); err != nil {
		return driver.Lease{}, err
	}
	defer d.gate.Leave()
	_, until, err := driver.LeaseEnd(d.clock, lease)
	if err != nil {
		return driver.Lease{}, err
	}
	return sq.Renew(ctx, d.db, l, until)
}

// Complete removes the item of a current claim in one statement; see
// driver.Claimer.
func (d *Driver) Complete(ctx context.Context, l driver.Lease) error {
	return d.settle(ctx, l, sq.CompleteSQL, "postgres: complete work")
}

// Release makes the item of a current claim claimable at once, in one
// statement; see driver.Claimer.
func (d *Driver) Release(ctx context.Context, l driver.Lease) error {
	return d.settle(ctx, l, sq.ReleaseSQL, "postgres: release work")
}

// settle runs query, which changes the row of l's item if l is its current
// claim, and fails with memory.ErrConflict when it changed none.
func (d *Driver) settle(ctx context.Context, l driver.Lease, query, what string) error {
	if err := d.enter(ctx, driver.CheckLease(l)); err != nil {
		return err
	}
	defer d.gate.Leave()
	return sq.Settle(ctx, d.db, query, l, what)
}

// EraseWork removes every item of queue whose identity f matches, pending
// or claimed, in one statement, and reports how many; see
// driver.WorkEraser. The DELETE compares the queue and the identity
// columns of the filter, each with a parameter. It waits for the row
// locks of calls in progress on its items (a claim, a renewal), so an
// item claimed meanwhile is erased too; a DELETE that loses a deadlock
// to a concurrent erasure is retried, as Put is, and still counts right,
// since the attempt that lost removed nothing.
func (d *Driver) EraseWork(ctx context.Context, queue string, f memory.Filter) (int64, error) {
	if err := d.enter(ctx, driver.CheckEraseWork(queue, f)); err != nil {
		return 0, err
	}
	defer d.gate.Leave()
	for attempt := 1; ; attempt++ {
		n, err := sq.EraseWork(ctx, d.db, queue, f)
		if err == nil || attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			return n, err
		}
		d.log.Debug("postgres: retrying an erasure of work that lost a race", "attempt", attempt, "err", err)
	}
}
