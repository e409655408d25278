package postgres

import (
	"context"
	"time"
)

// TextLoadsForTest returns how many times the text cache was loaded.
func (d *Driver) TextLoadsForTest() int {
	d.tc.Mu.RLock()
	defer d.tc.Mu.RUnlock()
	return d.tc.Loads
}

// PruneTextLogForTest prunes the text change log now of the changes of
// every transaction that has finished, as a run of the pruner does once
// its horizon is old enough.
func (d *Driver) PruneTextLogForTest(ctx context.Context) error {
	d.prune.mu.Lock()
	d.prune.retained = 0
	d.prune.mu.Unlock()
	return d.pruneTextLog(ctx, time.Now())
}

// SetTextLogPruningForTest sets how often the driver prunes the text
// change log and how long it keeps changes.
func (d *Driver) SetTextLogPruningForTest(every, retained time.Duration) {
	d.prune.mu.Lock()
	d.prune.every, d.prune.retained, d.prune.next = every, retained, time.Time{}
	d.prune.mu.Unlock()
}

// TextSnapshotLoadsForTest returns how many of the text cache's loads
// started from a stored snapshot.
func (d *Driver) TextSnapshotLoadsForTest() int {
	d.tc.Mu.RLock()
	defer d.tc.Mu.RUnlock()
	return d.tc.Snaps
}

// StoreTextSnapshotForTest stores a snapshot of the text cache now.
func (d *Driver) StoreTextSnapshotForTest(ctx context.Context) error { return d.storeSnapshot(ctx) }

// VectorLoadsForTest returns how many times the vector copy was loaded.
func (d *Driver) VectorLoadsForTest() int {
	d.vc.mu.RLock()
	defer d.vc.mu.RUnlock()
	return d.vc.loads
}
