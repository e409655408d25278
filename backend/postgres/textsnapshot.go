package postgres

import (
	"context"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory/internal/sqldriver"
	"github.com/agentmem/memory/internal/textcache"
)

// The text cache's snapshots (sqldriver.WriteTextSnapshot): a cache loaded
// from the records, or far enough from the stored snapshot
// (textcache.Meter), is encoded and stored in the background after a
// search, tagged with the pg_snapshot it is current at. A new driver's
// cache starts from the stored snapshot, whatever was written since, and
// catches up from its tag with the change log as any cache does (see
// textlog.go); only when the log was pruned past the tag does it read
// every record. A snapshot is therefore stale only once the log's
// retention nears its age: one older than half textLogRetention is
// stored again once anything has changed (textcache.Meter.MaxAge).

// readSnapshot returns, on tx inside a repeatable-read transaction, the
// cache the stored text snapshot holds, when it was written and the
// pg_snapshot it is current at; nil when there is no snapshot of this
// analyzer, or it cannot be read (which is logged).
func readSnapshot(ctx context.Context, tx *sqlx.Tx, log *slog.Logger) (*textcache.Cache, time.Time, string) {
	hdr, data, err := sq.ReadTextSnapshot(ctx, tx, func(sqldriver.TextSnapshot) bool { return true })
	if err == nil && data != nil {
		var c *textcache.Cache
		if c, err = textcache.Decode(data); err == nil {
			return c, time.Unix(hdr.Written, 0), hdr.Tag
		}
	}
	if err != nil && ctx.Err() == nil {
		log.Warn("postgres: the stored text snapshot cannot be read; reading every record", "err", err)
	}
	return nil, time.Time{}, ""
}

// maybeSnapshot starts writing a snapshot of the text cache in the
// background when one is due.
func (d *Driver) maybeSnapshot() {
	c := &d.tc
	c.mu.RLock()
	due := c.c != nil && c.meter.Due(time.Now(), c.c.Len())
	c.mu.RUnlock()
	if due {
		d.chores.Start("text snapshot", func(ctx context.Context) {
			if err := d.storeSnapshot(ctx); err != nil && ctx.Err() == nil {
				d.log.Warn("postgres: write the text snapshot", "err", err)
			}
		})
	}
}

// storeSnapshot encodes the text cache, unless it is unloaded, and stores
// it, each chunk in a transaction of its own.
func (d *Driver) storeSnapshot(ctx context.Context) error {
	c := &d.tc
	c.mu.RLock()
	if c.c == nil {
		c.mu.RUnlock()
		return nil
	}
	tag, mark := *c.snap.Load(), c.meter.Mark()
	data := c.c.Encode(nil)
	c.mu.RUnlock()
	at := time.Now()
	if err := sq.WriteTextSnapshot(ctx, d.inTx, tag, data); err != nil {
		return err
	}
	d.log.Debug("postgres: wrote the text snapshot", "tag", tag, "bytes", len(data))
	c.mu.Lock()
	c.meter.Stored(mark, at)
	c.mu.Unlock()
	return nil
}

// inTx runs fn in a transaction, which it commits when fn returns nil.
func (d *Driver) inTx(ctx context.Context, fn func(sqldriver.Queryer) error) error {
	tx, err := d.db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}
