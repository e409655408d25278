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
	hdr, data, err := sq.ReadTextSnapshot(ctx, conn, func(h sqldriver.TextSnapshot) bool {
		var e, m int64
		if _, err := fmt.Sscanf(h.Tag, "%d:%d", &e, &m); err != nil || snapshotTag(e, m) != h.Tag {
			return false
		}
		from = m
		return e == epoch && m <= maxRow
	})
	if err == nil && data != nil {
		var c *textcache.Cache
		if c, err = textcache.Decode(data); err == nil {
			return c, from, time.Unix(hdr.Written, 0)
		}
	}
	if err != nil && ctx.Err() == nil {
		log.Warn("sqlite: the stored text snapshot cannot be read; reading every record", "err", err)
	}
	return nil, 0, time.Time{}
}

// maybeSnapshot starts writing a snapshot of the text cache in the
// background when one is due.
func (d *Driver) maybeSnapshot() {
	c := &d.tc
	c.mu.RLock()
	due := c.c != nil && !d.inMemory && c.meter.Due(time.Now(), c.c.Len())
	c.mu.RUnlock()
	if due {
		d.chores.Start("text snapshot", d.writeSnapshot)
	}
}

// writeSnapshot stores a snapshot of the text cache, as a chore: its
// failures are logged.
func (d *Driver) writeSnapshot(ctx context.Context) {
	if err := d.storeSnapshot(ctx); err != nil && ctx.Err() == nil {
		d.log.Warn("sqlite: write the text snapshot", "err", err)
	}
}

// storeSnapshot encodes the text cache, unless it is unloaded, and stores
// it, each chunk in an immediate transaction of its own.
func (d *Driver) storeSnapshot(ctx context.Context) error {
	c := &d.tc
	c.mu.RLock()
	if c.c == nil {
		c.mu.RUnlock()
		return nil
	}
	tag, mark := snapshotTag(c.epoch, c.maxRow), c.meter.Mark()
	data := c.c.Encode(nil)
	c.mu.RUnlock()
	at := time.Now()
	err := sq.WriteTextSnapshot(ctx, func(ctx context.Context, fn func(sqldriver.Queryer) error) error {
		return d.write(ctx, func(conn *sqlx.Conn) error { return fn(conn) })
	}, tag, data)
	if err != nil {
		return err
	}
	d.log.Debug("sqlite: wrote the text snapshot", "tag", tag, "bytes", len(data))
	c.mu.Lock()
	c.meter.Stored(mark, at)
	c.mu.Unlock()
	return nil
}
