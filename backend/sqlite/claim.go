//go:build cgo

package sqlite

import (
	"context"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/sqldriver"
)

var (
	_ driver.Claimer    = (*Driver)(nil)
	_ driver.WorkEraser = (*Driver)(nil)
)

// The work queue lives in the memory_work table; see internal/sqldriver
// for its rows. Every call that changes the queue is one immediate
// transaction, like Put, committed before the call returns.

// enqueueSQL returns the statement that adds n items, leaving ids already
// in their queue (or earlier in the statement) as they are.
func enqueueSQL(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO memory_work
	(queue, id, tenant_id, user_id, agent_id, instance_id, squad_id, session_id, created, payload)
VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	}
	b.WriteString(" ON CONFLICT (queue, id) DO NOTHING")
	return b.String()
}

// enqueueColumns is the number of values each item binds in enqueueSQL.
const enqueueColumns = 10

// maxEnqueueChunk is the most items one enqueue statement binds. Enqueue
// runs statements of the powers of two up to it, so a few statement texts
// cover every batch size.
const maxEnqueueChunk = 64

// enqueues[k] adds 1<<k items.
var enqueues = func() (out []string) {
	for n := 1; n <= maxEnqueueChunk; n *= 2 {
		out = append(out, enqueueSQL(n))
	}
	return out
}()

// claimable is the condition of a row that may be claimed at the time
// bound to its one parameter.
const claimable = `(token = '' OR lease_until <= ?)`

const (
	// anyClaimableSQL looks for one claimable item of a queue.
	anyClaimableSQL = `SELECT EXISTS (SELECT 1 FROM memory_work WHERE queue = ? AND ` + claimable + `)`
	// pickSQL selects the oldest claimable items of a queue, reading the
	// memory_work_order index in order.
	pickSQL = `SELECT rowid FROM memory_work WHERE queue = ? AND ` + claimable + ` ORDER BY created, id LIMIT ?`
	// leaseSQL claims one picked row with a fresh token.
	leaseSQL = `UPDATE memory_work SET token = ?, lease_until = ?, attempts = attempts + 1
		WHERE rowid = ? RETURNING ` + sqldriver.LeaseColumns
)

// The statements on one current claim, shared with the PostgreSQL driver
// and named here for the plan test.
var (
	renewSQL    = sq.RenewSQL
	completeSQL = sq.CompleteSQL
	releaseSQL  = sq.ReleaseSQL
)

// Enqueue adds items in one immediate transaction, all or nothing, and
// reports how many were new; see driver.Claimer. An id already pending or
// claimed in its queue, or repeated within the batch, is left as it first
// was.
func (d *Driver) Enqueue(ctx context.Context, items []driver.Work) (int, error) {
	if err := d.enter(ctx, driver.CheckEnqueue(items)); err != nil {
		return 0, err
	}
	defer d.gate.Leave()
	if len(items) == 0 {
		return 0, nil
	}
	added := 0
	err := d.write(ctx, func(conn *sqlx.Conn) error {
		// As in Put: statements run without a cancellable context, and
		// cancellation is checked between them.
		bg := context.WithoutCancel(ctx)
		args := make([]any, 0, maxEnqueueChunk*enqueueColumns)
		for i := 0; i < len(items); {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := len(enqueues) - 1
			for 1<<k > len(items)-i {
				k--
			}
			args = args[:0]
			for _, w := range items[i : i+1<<k] {
				id := w.Identity
				args = append(args, w.Queue, w.ID, id.Tenant, id.User, id.Agent, id.Instance, id.Squad, id.Session,
					w.Created.UnixNano(), w.Payload) // in range: Validate checked it
			}
			res, err := conn.ExecContext(bg, enqueues[k], args...)
			if err != nil {
				return fail(ctx, err, "sqlite: enqueue work")
			}
			n, err := res.RowsAffected()
			if err != nil {
				return fail(ctx, err, "sqlite: enqueue work")
			}
			added += int(n)
			i += 1 << k
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return added, nil
}

// Claim leases up to n claimable items of queue, oldest first, in one
// immediate transaction committed before it returns; see driver.Claimer.
// The transaction picks the items off the memory_work_order index and
// gives each its own token from crypto/rand with an UPDATE ... RETURNING.
// Leases run from the moment the write lock is held, so waiting for
// another writer shortens none. Claim first looks for a claimable item on
// a read connection and, when there is none, returns without taking the
// write lock, so idle workers polling a queue do not hold up writers.
func (d *Driver) Claim(ctx context.Context, queue string, n int, lease time.Duration) ([]driver.Lease, error) {
	if err := d.enter(ctx, driver.CheckClaim(queue, n, lease)); err != nil {
		return nil, err
	}
	defer d.gate.Leave()
	now, _, err := driver.LeaseEnd(d.clock, lease)
	if err != nil {
		return nil, err
	}
	var found bool
	if err := d.r.GetContext(ctx, &found, anyClaimableSQL, queue, now); err != nil {
		return nil, fail(ctx, err, "sqlite: look for claimable work")
	}
	if !found {
		return nil, nil
	}
	var out []driver.Lease
	err = d.write(ctx, func(conn *sqlx.Conn) error {
		bg := context.WithoutCancel(ctx)
		// The clock is read again now that the write lock is held, so
		// waiting for it shortens no lease.
		now, until, err := driver.LeaseEnd(d.clock, lease)
		if err != nil {
			return err
		}
		var rowids []int64
		if err := conn.SelectContext(bg, &rowids, pickSQL, queue, now, n); err != nil {
			return fail(ctx, err, "sqlite: pick work to claim")
		}
		out = make([]driver.Lease, 0, len(rowids))
		for _, rowid := range rowids {
			if err := ctx.Err(); err != nil {
				return err
			}
			l, err := sqldriver.ScanLease(conn.QueryRowxContext(bg, leaseSQL, driver.NewLeaseToken(), until, rowid))
			if err != nil {
				return fail(ctx, err, "sqlite: claim work")
			}
			out = append(out, l)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// Renew extends a current claim in one immediate transaction; see
// driver.Claimer.
func (d *Driver) Renew(ctx context.Context, l driver.Lease, lease time.Duration) (driver.Lease, error) {
	if err := d.enter(ctx, driver.CheckRenew(l, lease)); err != nil {
		return driver.Lease{}, err
	}
	defer d.gate.Leave()
	var out driver.Lease
	err := d.write(ctx, func(conn *sqlx.Conn) error {
		_, until, err := driver.LeaseEnd(d.clock, lease)
		if err != nil {
			return err
		}
		out, err = sq.Renew(context.WithoutCancel(ctx), conn, l, until)
		return err
	})
	if err != nil {
		return driver.Lease{}, err
	}
	return out, nil
}

// Complete removes the item of a current claim in one immediate
// transaction; see driver.Claimer.
func (d *Driver) Complete(ctx context.Context, l driver.Lease) error {
	return d.settle(ctx, l, completeSQL, "sqlite: complete work")
}

// Release makes the item of a current claim claimable at once, in one
// immediate transaction; see driver.Claimer.
func (d *Driver) Release(ctx context.Context, l driver.Lease) error {
	return d.settle(ctx, l, releaseSQL, "sqlite: release work")
}

// settle runs query, which changes the row of l's item if l is its current
// claim, and fails with memory.ErrConflict when it changed none.
func (d *Driver) settle(ctx context.Context, l driver.Lease, query, what string) error {
	if err := d.enter(ctx, driver.CheckLease(l)); err != nil {
		return err
	}
	defer d.gate.Leave()
	return d.write(ctx, func(conn *sqlx.Conn) error {
		return sq.Settle(context.WithoutCancel(ctx), conn, query, l, what)
	})
}

// EraseWork removes every item of queue whose identity f matches, pending
// or claimed, in one immediate transaction, and reports how many; see
// driver.WorkEraser. The DELETE compares the queue and the identity
// columns of the filter, each with a parameter.
func (d *Driver) EraseWork(ctx context.Context, queue string, f memory.Filter) (int64, error) {
	if err := d.enter(ctx, driver.CheckEraseWork(queue, f)); err != nil {
		return 0, err
	}
	defer d.gate.Leave()
	var n int64
	err := d.write(ctx, func(conn *sqlx.Conn) error {
		var err error
		n, err = sq.EraseWork(context.WithoutCancel(ctx), conn, queue, f)
		return err
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
