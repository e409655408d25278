package textcache

import (
	"testing"
	"time"
)

// TestMeter walks a meter through a cache's life: loaded from the
// records, snapshotted, changed a little, made stale, changed a lot.
func TestMeter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	later := t0.Add(SnapshotMinInterval)
	var m Meter
	if m.Due(t0, SnapshotMinRecords-1) {
		t.Error("a small cache is due")
	}
	if !m.Due(t0, 8000) {
		t.Error("a cache no snapshot matches is not due")
	}
	mark := m.Mark()
	m.Changed(5) // while the snapshot was written
	m.Stored(mark, t0)
	if m.Changes() != 5 {
		t.Errorf("Changes = %d after 5 changes made while storing, want 5", m.Changes())
	}
	if m.Due(later, 8000) {
		t.Error("a cache 5 records past its snapshot is due")
	}
	m.Changed(1)
	m.Stale()
	if m.Due(t0.Add(time.Second), 8000) {
		t.Error("a stale cache is due within SnapshotMinInterval of its snapshot")
	}
	if !m.Due(later, 8000) {
		t.Error("a stale cache is not due")
	}
	m.Stored(m.Mark(), later)
	if m.Due(later.Add(SnapshotMinInterval), 8000) {
		t.Error("a cache just stored is due")
	}
	m.Changed(SnapshotMinChanges)
	if !m.Due(later.Add(SnapshotMinInterval), 8000) {
		t.Error("a cache SnapshotMinChanges records past its snapshot is not due")
	}
	if m.Due(later.Add(SnapshotMinInterval), 16*SnapshotMinChanges) {
		t.Error("a cache less than an eighth of its records past its snapshot is due")
	}
	m.Stored(mark, t0) // an older snapshot written late does not count
	if m.Changes() != int64(SnapshotMinChanges) {
		t.Errorf("Changes = %d after an older snapshot was stored, want %d", m.Changes(), SnapshotMinChanges)
	}
	m.Loaded(t0, 7)
	if m.Changes() != 7 || m.Age(later) != SnapshotMinInterval {
		t.Errorf("after Loaded: Changes %d, Age %s; want 7, %s", m.Changes(), m.Age(later), SnapshotMinInterval)
	}
	m.Unstored()
	if !m.Due(t0, 8000) {
		t.Error("a cache loaded from the records is not due")
	}

	aged := Meter{MaxAge: time.Hour}
	aged.Loaded(t0, 0)
	if aged.Due(t0.Add(2*time.Hour), 8000) {
		t.Error("an old snapshot of a cache unchanged since is due")
	}
	aged.Changed(1)
	if aged.Due(t0.Add(time.Hour-time.Second), 8000) {
		t.Error("a snapshot younger than MaxAge, one record behind, is due")
	}
	if !aged.Due(t0.Add(time.Hour), 8000) {
		t.Error("a snapshot MaxAge old, one record behind, is not due")
	}
}
