//go:build cgo

package sqlite

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/textcache"
	"github.com/agentmem/memory/internal/veccache"
)

// Swap stores rec if the live record under its id has version expect (0:
// none is live); see driver.Swapper. The version is read and the record
// written in one immediate transaction, so writers in other processes
// sharing the file are serialised with it.
func (d *Driver) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	if err := d.enter(ctx, driver.CheckSwap(rec, expect)); err != nil {
		return 0, err
	}
	defer d.gate.Leave()
	args, err := putArgs(rec)
	if err != nil {
		return 0, err
	}
	now, err := d.clock.Nanos()
	if err != nil {
		return 0, err
	}
	var (
		version int64
		vw      vectorWrite
		tw      textWrite
	)
	defer vw.done(&d.vc)
	defer tw.done(&d.tc)
	err = d.write(ctx, func(conn *sqlx.Conn) error {
		bg := context.WithoutCancel(ctx)
		stored, err := sq.CheckSwap(bg, conn, rec, expect, now)
		if err != nil {
			return err
		}
		if rec.Vector != nil {
			if err := d.checkDims(bg, conn, []memory.Record{rec}); err != nil {
				return err
			}
		}
		if _, err := conn.ExecContext(bg, upserts[0], args...); err != nil {
			return fail(ctx, err, "sqlite: write record")
		}
		version = stored + 1
		// The upsert may have rewritten a stored (live or expired) record
		// in place, under its old rowid.
		if err := tw.begin(bg, &d.tc, conn, textcache.ChangesOf([]memory.Record{rec})); err != nil {
			return err
		}
		if rec.Vector != nil || stored != 0 {
			return vw.begin(bg, &d.vc, conn, veccache.ChangesOf([]memory.Record{rec}))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	vw.commit(&d.vc)
	tw.commit(&d.tc)
	return version, nil
}
