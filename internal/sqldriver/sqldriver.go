// Package sqldriver is machinery the SQL drivers (sqlite, postgres) share:
// classifying native errors and reading record rows.
package sqldriver

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// Classifier maps a native error to the memory sentinel that describes it.
type Classifier func(error) error

// Classify wraps err with the sentinel kind gives it. It returns nil for
// nil, and context errors and already classified errors unchanged.
func Classify(kind Classifier, err error, msg string) error {
	if err == nil {
		return nil
	}
	var me *memory.Error
	if errors.As(err, &me) {
		return err
	}
	return memory.Wrap(kind(err), err, msg)
}

// Fail classifies err, unless ctx is done: then the failure is the
// cancellation's doing and ctx.Err() is returned unchanged.
func Fail(ctx context.Context, kind Classifier, err error, msg string) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return Classify(kind, err, msg)
}

// Collect reads every row with scan and closes rows. limit, when positive,
// sizes the result up front. It returns nil when there are no rows; errors
// come back unclassified, for the caller to classify.
func Collect(rows *sql.Rows, limit int, scan func(*sql.Rows) (memory.Record, error)) ([]memory.Record, error) {
	defer rows.Close()
	var out []memory.Record
	if limit > 0 {
		out = make([]memory.Record, 0, min(limit, 256))
	}
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// ScanLease reads one row of a work queue's lease columns, in this order:
// queue, id, tenant_id, user_id, agent_id, instance_id, squad_id,
// session_id, created, payload, token, lease_until, attempts (times in
// unix nanoseconds).
func ScanLease(row interface{ Scan(...any) error }) (backend.Lease, error) {
	var (
		l              backend.Lease
		created, until int64
		id             = &l.Identity
	)
	if err := row.Scan(&l.Queue, &l.ID, &id.Tenant, &id.User, &id.Agent, &id.Instance, &id.Squad, &id.Session,
		&created, &l.Payload, &l.Token, &until, &l.Attempt); err != nil {
		return backend.Lease{}, err
	}
	l.Created = time.Unix(0, created).UTC()
	l.Expires = time.Unix(0, until).UTC()
	return l, nil
}
