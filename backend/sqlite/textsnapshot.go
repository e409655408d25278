//go:build cgo

package sqlite

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory/internal/sqldriver"
	"github.com/agentmem/memory/internal/textcache"
)

// The text cache's snapshots (sqldriver.WriteTextSnapshot): a cache loaded
// from the records, or far enough from the stored snapshot
// (textcache.Meter), is encoded and stored in the background after a
// search, tagged with the epoch and largest rowid it is current at. A
// cache at epoch e up to rowid m holds exactly the records of rowids up
// to m as they are while the epoch is e (see settingTextEpoch), so a new
// handle that finds the stored epoch still e, and every rowid above m
// readable, starts from the snapshot and reads only the records above m;
// any other epoch, a different analyzer or a damaged snapshot, and it
// reads every record.

// snapshotTag is the tag of a snapshot at epoch, up to rowid maxRow.
func snapshotTag(epoch, maxRow int64) string { return fmt.Sprintf("%d:%d", epoch, maxRow) }

// readSnapshot returns, on conn inside a read transaction at the stored
// epoch and largest rowid, the cache the stored snapshot holds when it is
// current at epoch, the largest rowid it holds and when it was written;
// nil when there is no such snapshot, or it cannot be read (which is
// logged).
func readSnapshot(ctx context.Context, conn *sqlx.Conn, epoch, maxRow int64, log *slog.Logger) (*textcache.Cache, int64, time.Time) {
	var from int64
	c, hdr := sq.LoadTextSnapshot(ctx, conn, func(h sqldriver.Snapshot) bool {
		var e, m int64
		if _, err := fmt.Sscanf(h.Tag, "%d:%d", &e, &m); err != nil || snapshotTag(e, m) != h.Tag {
			return false
		}
		from = m
		return e == epoch && m <= maxRow
	}, log)
	if c == nil {
		return nil, 0, time.Time{}
	}
	return c, from, time.Unix(hdr.Written, 0)
}

// maybeSnapshot starts storing a snapshot of the text cache in the
// background when one is due, unless the database is in memory.
func (d *Driver) maybeSnapshot() {
	if !d.inMemory {
		sq.MaybeStoreTextSnapshot(&d.chores, &d.tc.TextCache, d.tc.tag, d.inTx, d.log)
	}
}

// storeSnapshot stores a snapshot of the text cache now.
func (d *Driver) storeSnapshot(ctx context.Context) error {
	return sq.StoreTextSnapshot(ctx, &d.tc.TextCache, d.tc.tag, d.inTx)
}

// tag returns the tag of a snapshot of c: its epoch and largest rowid.
// The caller holds c.Mu.
func (c *textCache) tag() string { return snapshotTag(c.epoch, c.maxRow) }

// inTx runs fn in an immediate transaction (see write).
func (d *Driver) inTx(ctx context.Context, fn func(sqldriver.Queryer) error) error {
	return d.write(ctx, func(conn *sqlx.Conn) error { return fn(conn) })
}
