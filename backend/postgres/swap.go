package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// Swap stores rec if the live record under its id has version expect (0:
// none is live); see backend.Swapper. It runs one transaction that locks
// the stored row (SELECT ... FOR UPDATE) before comparing versions, so
// racing replicas are serialised on the row; two writers creating an
// absent id race on the primary key instead, and the loser gets
// memory.ErrConflict.
func (d *Driver) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := backend.CheckSwap(rec, expect); err != nil {
		return 0, err
	}
	args, err := putArgs([]memory.Record{rec}, []int64{1})
	if err != nil {
		return 0, err
	}
	now, err := d.clock.Nanos()
	if err != nil {
		return 0, err
	}
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.mu.RUnlock()

	tx, err := d.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fail(ctx, err, "postgres: begin transaction")
	}
	defer func() { _ = tx.Rollback() }()
	var (
		w       memory.Identity
		version int64
		expires sql.NullInt64
	)
	err = tx.QueryRowxContext(ctx, `SELECT tenant_id, user_id, agent_id, instance_id, squad_id, session_id, version, expires
		FROM memory_records WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, rec.Identity.Tenant, rec.ID).
		Scan(&w.Tenant, &w.User, &w.Agent, &w.Instance, &w.Squad, &w.Session, &version, &expires)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fail(ctx, err, "postgres: read the stored version")
	}
	var current int64
	if found {
		if w != rec.Identity {
			return 0, backend.HeldByAnother(rec.ID)
		}
		if !expires.Valid || expires.Int64 > now {
			current = version
		}
	}
	if current != expect {
		return 0, backend.VersionConflict(rec.ID, expect, current)
	}
	if rec.Vector != nil {
		if err := d.checkDims(ctx, tx, []memory.Record{rec}); err != nil {
			return 0, err
		}
	}
	query, row := upsertOneSQL, firstRow(args)
	if !found {
		// Two creators race on the primary key: the loser's insert
		// changes no row rather than replacing the winner's.
		query = insertOneSQL
	}
	res, err := tx.ExecContext(ctx, query, row...)
	if err != nil {
		return 0, fail(ctx, err, "postgres: write record")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fail(ctx, err, "postgres: write record")
	}
	if n != 1 {
		return 0, backend.VersionConflict(rec.ID, expect, 1)
	}
	if err := tx.Commit(); err != nil {
		return 0, fail(ctx, err, "postgres: commit")
	}
	return version + 1, nil
}
