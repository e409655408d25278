package sqldriver

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// The work queue lives in the memory_work table of both schemas: one row
// per pending or claimed item, keyed by (queue, id). A pending item has
// the empty token; a claimed one has its claim's token, its lease's end in
// lease_until (unix nanoseconds by the driver's clock) and the number of
// claims it has had in attempts. Completing an item deletes its row, and
// so does erasing its writer's scope (EraseWork), which matches on the
// identity columns the row keeps. A claim is a row's token and
// lease_until, not a lock, so nothing is held while the caller works, and
// a worker that dies leaves rows that any replica may claim once their
// lease lapses.

// LeaseColumns are the columns ScanLease reads, in its order.
const LeaseColumns = `queue, id, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
	created, payload, token, lease_until, attempts`

const (
	// renewSQL extends a current claim.
	renewSQL = `UPDATE memory_work SET lease_until = ? WHERE queue = ? AND id = ? AND token = ?
	RETURNING ` + LeaseColumns
	// completeSQL removes the item of a current claim.
	completeSQL = `DELETE FROM memory_work WHERE queue = ? AND id = ? AND token = ?`
	// releaseSQL makes the item of a current claim pending again.
	releaseSQL = `UPDATE memory_work SET token = '', lease_until = 0 WHERE queue = ? AND id = ? AND token = ?`
)

// ScanLease reads one row of LeaseColumns (times in unix nanoseconds).
func ScanLease(row interface{ Scan(...any) error }) (driver.Lease, error) {
	var (
		l              driver.Lease
		created, until int64
		id             = &l.Identity
	)
	if err := row.Scan(&l.Queue, &l.ID, &id.Tenant, &id.User, &id.Agent, &id.Instance, &id.Squad, &id.Session,
		&created, &l.Payload, &l.Token, &until, &l.Attempt); err != nil {
		return driver.Lease{}, err
	}
	l.Created = time.Unix(0, created).UTC()
	l.Expires = time.Unix(0, until).UTC()
	return l, nil
}

// Renew extends l, when it is its item's current claim, to until (unix
// nanoseconds) with RenewSQL on q, and returns the renewed lease; a claim
// that is no longer current fails with driver.StaleLease.
func (s *SQL) Renew(ctx context.Context, q Queryer, l driver.Lease, until int64) (driver.Lease, error) {
	out, err := ScanLease(q.QueryRowContext(ctx, s.RenewSQL, until, l.Queue, l.ID, l.Token))
	if errors.Is(err, sql.ErrNoRows) {
		return driver.Lease{}, driver.StaleLease(l)
	}
	if err != nil {
		return driver.Lease{}, driver.Fail(ctx, s.d.Kind, err, s.d.Name+": renew claim")
	}
	return out, nil
}

// Settle runs query (CompleteSQL or ReleaseSQL) for l on q; a claim that
// is no longer current, so that no row changed, fails with
// driver.StaleLease. what names the call in errors.
func (s *SQL) Settle(ctx context.Context, q Queryer, query string, l driver.Lease, what string) error {
	res, err := q.ExecContext(ctx, query, l.Queue, l.ID, l.Token)
	if err != nil {
		return driver.Fail(ctx, s.d.Kind, err, what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return driver.Fail(ctx, s.d.Kind, err, what)
	}
	if n != 1 {
		return driver.StaleLease(l)
	}
	return nil
}

// EraseWorkSQL returns the statement that deletes every item of a queue
// whose identity f matches, and its parameters: the queue, then the value
// of each field of f.Match, compared exactly (an empty value matches only
// the empty column), as memory.Filter.Matches compares. Only fixed column
// names go into the text; every value is a parameter. The caller checks
// the arguments first (driver.CheckEraseWork).
func (s *SQL) EraseWorkSQL(queue string, f memory.Filter) (string, []any) {
	var b strings.Builder
	b.WriteString("DELETE FROM memory_work WHERE queue = ")
	args := s.param(&b, make([]any, 0, 1+len(scopeColumns)), queue)
	for _, c := range scopeColumns {
		if f.Match.Has(c.f) {
			b.WriteString(" AND ")
			b.WriteString(c.col)
			b.WriteString(" = ")
			args = s.param(&b, args, f.Identity.Get(c.f))
		}
	}
	return b.String(), args
}

// EraseWork deletes on q, in one statement, every item of queue whose
// identity f matches, pending or claimed, and reports how many it
// removed; see driver.WorkEraser. Errors are classified.
func (s *SQL) EraseWork(ctx context.Context, q Queryer, queue string, f memory.Filter) (int64, error) {
	query, args := s.EraseWorkSQL(queue, f)
	what := s.d.Name + ": erase work"
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, driver.Fail(ctx, s.d.Kind, err, what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, driver.Fail(ctx, s.d.Kind, err, what)
	}
	return n, nil
}
