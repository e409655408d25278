//go:build cgo

package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// Swap stores rec if the live record under its id has version expect (0:
// none is live); see backend.Swapper. The version is read and the record
// written in one immediate transaction, so writers in other processes
// sharing the file are serialised with it.
func (d *Driver) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := backend.CheckSwap(rec, expect); err != nil {
		return 0, err
	}
	args, err := putArgs(rec)
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
	var (
		version int64
		vw      vectorWrite
	)
	defer vw.done(&d.vc)
	err = d.write(ctx, func(conn *sqlx.Conn) error {
		bg := context.WithoutCancel(ctx)
		var stored struct {
			owner
			Version int64         `db:"version"`
			Expires sql.NullInt64 `db:"expires"`
		}
		err := conn.GetContext(bg, &stored, `SELECT id, tenant_id, user_id, agent_id, instance_id, squad_id, session_id, version, expires
			FROM memory_records WHERE tenant_id = ? AND id = ?`, rec.Identity.Tenant, rec.ID)
		found := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fail(ctx, err, "sqlite: read the stored version")
		}
		var current int64
		if found {
			if stored.owner.identity() != rec.Identity {
				return backend.HeldByAnother(rec.ID)
			}
			if !stored.Expires.Valid || stored.Expires.Int64 > now {
				current = stored.Version
			}
		}
		if current != expect {
			return backend.VersionConflict(rec.ID, expect, current)
		}
		if rec.Vector != nil {
			if err := d.checkDims(bg, conn, []memory.Record{rec}); err != nil {
				return err
			}
		}
		if _, err := conn.ExecContext(bg, upserts[0], args...); err != nil {
			return fail(ctx, err, "sqlite: write record")
		}
		version = 1
		if found {
			version = stored.Version + 1
		}
		if rec.Vector != nil || found {
			return vw.begin(bg, &d.vc, conn, changesOf([]memory.Record{rec}))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	vw.commit(&d.vc)
	return version, nil
}
