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
	c, hdr := sq.LoadTextSnapshot(ctx, tx, func(sqldriver.Snapshot) bool { return true }, log)
	if c == nil {
		return nil, time.Time{}, ""
	}
	return c, time.Unix(hdr.Written, 0), hdr.Tag
}

// maybeSnapshot starts storing a snapshot of the text cache in the
// background when one is due.
func (d *Driver) maybeSnapshot() {
	sq.MaybeStoreTextSnapshot(&d.chores, &d.tc.TextCache, d.tc.tag, d.inTx, d.log)
}

// storeSnapshot stores a snapshot of the text cache now.
func (d *Driver) storeSnapshot(ctx context.Context) error {
	return sq.StoreTextSnapshot(ctx, &d.tc.TextCache, d.tc.tag, d.inTx)
}

// tag returns the tag of a snapshot of c: the pg_snapshot it is current
// at. The caller holds c.Mu.
func (c *textCache) tag() string { return *c.sync.snap.Load() }

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
