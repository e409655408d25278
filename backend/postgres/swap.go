package postgres

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Swap stores rec if the live record under its id has version expect (0:
// none is live); see driver.Swapper. It runs one transaction that locks
// the stored row (SELECT ... FOR UPDATE) before comparing versions, so
// racing replicas are serialised on the row; two writers creating an
// absent id race on the primary key instead, and the loser gets
// memory.ErrConflict.
func (d *Driver) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	if err := d.enter(ctx, driver.CheckSwap(rec, expect)); err != nil {
		return 0, err
	}
	defer d.gate.Leave()
	args, err := putArgs([]memory.Record{rec}, []int64{1})
	if err != nil {
		return 0, err
	}
	now, err := d.clock.Nanos()
	if err != nil {
		return 0, err
	}

	tx, err := d.db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, fail(ctx, err, "postgres: begin transaction")
	}
	defer func() { _ = tx.Rollback() }()
	version, err := sq.CheckSwap(ctx, tx, rec, expect, now)
	if err != nil {
		return 0, err
	}
	if rec.Vector != nil {
		if err := d.checkDims(ctx, tx, []memory.Record{rec}); err != nil {
			return 0, err
		}
	}
	query, row := upsertOneSQL, firstRow(args)
	if version == 0 {
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
		return 0, driver.VersionConflict(rec.ID, expect, 1)
	}
	if err := tx.Commit(); err != nil {
		return 0, fail(ctx, err, "postgres: commit")
	}
	d.wrote()
	return version + 1, nil
}
