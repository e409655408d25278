package textcache

import "time"

// When a cache's content is worth storing again as a snapshot. Tests
// change them.
var (
	// SnapshotMinRecords is the fewest records a cache holds before it
	// is worth a snapshot: fewer load from the records in moments.
	SnapshotMinRecords = 1000
	// SnapshotMinChanges is the fewest records changed since the stored
	// snapshot that make another due, unless an eighth of the cache's
	// records is more.
	SnapshotMinChanges = 1000
	// SnapshotMinInterval is the least time between two snapshots of a
	// cache that one matches already.
	SnapshotMinInterval = 30 * time.Second
)

// Meter tracks how far a cache's content has moved from the snapshot
// stored of it, for a driver deciding when to store another (Due). The
// zero Meter is of a cache no snapshot matches. A Meter is not safe for
// concurrent use: it goes with its cache, under the cache's lock.
type Meter struct {
	// MaxAge, when not zero, is the age at which a stored snapshot is due
	// again once any record changed: for a driver whose snapshots serve
	// new handles for a while only.
	MaxAge time.Duration

	changes int64     // records changed, in all
	valid   bool      // a stored snapshot matches the content as it was at stored
	stored  int64     // changes when it did
	stale   int64     // changes when the stored snapshot became useless to a new handle
	at      time.Time // when that snapshot was written
}

// Loaded records that the content is that of a snapshot written at at,
// and changed records since.
func (m *Meter) Loaded(at time.Time, changed int) {
	m.valid, m.stored, m.at = true, m.changes, at
	m.changes += int64(changed)
}

// Unstored records that no stored snapshot matches the content: the
// cache was loaded from the records themselves.
func (m *Meter) Unstored() { m.valid = false }

// Changed counts n records changed.
func (m *Meter) Changed(n int) { m.changes += int64(n) }

// Stale records that the changes counted so far made the stored snapshot
// useless to a new handle, however few they are.
func (m *Meter) Stale() { m.stale = m.changes }

// Mark returns the count of changes, to be given to Stored once a
// snapshot of the content as it is now has been written.
func (m *Meter) Mark() int64 { return m.changes }

// Stored records that a snapshot of the content as it was at mark (see
// Mark) was written at at.
func (m *Meter) Stored(mark int64, at time.Time) {
	if !m.valid || mark >= m.stored {
		m.valid, m.stored, m.at = true, mark, at
	}
}

// Changes returns how many records changed since the stored snapshot.
func (m *Meter) Changes() int64 { return m.changes - m.stored }

// Age returns how long before now the stored snapshot was written.
func (m *Meter) Age(now time.Time) time.Duration { return now.Sub(m.at) }

// Due reports whether a cache of size records, so metered, is worth a
// snapshot at now: it holds at least SnapshotMinRecords, and no stored
// snapshot matches it, or the stored one was made stale, is older than
// MaxAge with a record changed since, or lags an eighth of its records
// (at least SnapshotMinChanges) behind, and was written at least
// SnapshotMinInterval ago.
func (m *Meter) Due(now time.Time, size int) bool {
	age := now.Sub(m.at)
	changed := m.changes - m.stored
	switch {
	case size < SnapshotMinRecords:
		return false
	case !m.valid:
		return true
	case age < SnapshotMinInterval:
		return false
	case m.MaxAge > 0 && age >= m.MaxAge && changed > 0:
		return true
	}
	return m.stale > m.stored || changed >= int64(max(SnapshotMinChanges, size/8))
}
