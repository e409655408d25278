//go:build cgo

package sqlite

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory/internal/sqldriver"
	"github.com/agentmem/memory/internal/veccache"
)

// The vector copy's snapshots (sqldriver.WriteVectorSnapshot): a copy
// loaded from the records is encoded and stored in the background after
// a search, tagged with the vector epoch it is current at, and so is a
// copy changed since the stored snapshot once an eighth of its vectors
// (at least textcache.SnapshotMinChanges) changed, or once
// vectorSnapshotMaxAge passed with any change (textcache.Meter), at most
// every textcache.SnapshotMinInterval. Every transaction that changes
// vectors moves the epoch on (settingVectorEpoch), so a new handle that
// finds the stored epoch still the snapshot's starts from it, and any
// other epoch, or a damaged snapshot, reads every vector (and then
// stores a snapshot of what it read).
//
// The text cache's snapshot is stored again soon after any change; a
// vector snapshot, which holds the vectors again, would make a store
// being embedded write its vectors once more every half minute.

// vectorSnapshotMaxAge is how old a stored vector snapshot may grow
// while vectors change before it is stored again.
const vectorSnapshotMaxAge = 10 * time.Minute

// vectorTag is the tag of a snapshot at epoch.
func vectorTag(epoch int64) string { return strconv.FormatInt(epoch, 10) }

// readVectorSnapshot returns, on conn inside a read transaction at the
// stored vector epoch, the copy the stored snapshot holds when it is
// current at epoch, and when it was written; nil when there is no such
// snapshot, or it cannot be read (which is logged).
func readVectorSnapshot(ctx context.Context, conn *sqlx.Conn, epoch int64, log *slog.Logger) (*veccache.Cache, time.Time) {
	c, hdr := sq.LoadVectorSnapshot(ctx, conn, func(h sqldriver.Snapshot) bool { return h.Tag == vectorTag(epoch) }, log)
	if c == nil {
		return nil, time.Time{}
	}
	return c, time.Unix(hdr.Written, 0)
}

// vectorSnapshots reports whether the driver reads and writes snapshots
// of its vector copy: not of a database in memory, which no other handle
// reads, nor when the options turn them off.
func (d *Driver) vectorSnapshots() bool { return !d.inMemory && !d.noVectorSnapshots }

// maybeVectorSnapshot starts storing a snapshot of the vector copy in
// the background when one is due.
func (d *Driver) maybeVectorSnapshot() {
	if !d.vectorSnapshots() {
		return
	}
	c := &d.vc
	c.mu.RLock()
	due := c.loaded && c.meter.Due(time.Now(), c.vecs.Len())
	c.mu.RUnlock()
	if !due {
		return
	}
	d.chores.Start("vector snapshot", func(ctx context.Context) {
		if err := d.storeVectorSnapshot(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("sqlite: write the vector snapshot", "err", err)
		}
	})
}

// storeVectorSnapshot stores a snapshot of the vector copy now, unless it
// is unloaded.
func (d *Driver) storeVectorSnapshot(ctx context.Context) error {
	c := &d.vc
	c.mu.RLock()
	if !c.loaded {
		c.mu.RUnlock()
		return nil
	}
	tag, mark := vectorTag(c.epoch), c.meter.Mark()
	data := c.vecs.Encode(nil)
	c.mu.RUnlock()
	at := time.Now()
	if err := sq.WriteVectorSnapshot(ctx, d.inTx, tag, data); err != nil {
		return err
	}
	c.mu.Lock()
	c.meter.Stored(mark, at)
	c.mu.Unlock()
	return nil
}
