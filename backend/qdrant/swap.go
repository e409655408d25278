package qdrant

import (
	"context"
	"time"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Swap stores rec if the record stored under rec.ID has version expect
// (driver.Swapper). It reads the point, checks the version, and writes
// with an update_filter that holds only while the point is as it was
// read — at that version, or absent, or marked by the same Delete — so
// of writers racing from one version Qdrant applies exactly one; the
// others are skipped. Qdrant reports neither, so Swap reads the point
// back and finds its write among the point's recent writes (writes.go):
// there, it won, even if later writes have replaced it since; taken by
// another, it lost with memory.ErrConflict and nothing of it is stored.
// When so many writes followed it that the recent writes no longer reach
// back to its version (more than 64, or older than two minutes, before
// it read the point back), which of the two happened is unknown, and
// Swap fails with memory.ErrUnavailable rather than guess.
func (d *Driver) Swap(ctx context.Context, rec memory.Record, expect int64) (int64, error) {
	now, leave, err := d.admit(ctx, driver.CheckSwap(rec, expect))
	if err != nil {
		return 0, err
	}
	defer leave()
	if err := d.checkDims([]memory.Record{rec}); err != nil {
		return 0, err
	}
	id := qc.NewID(PointID(d.coll, rec.Identity.Tenant, rec.ID))
	ids := []*qc.PointId{id}
	before, err := d.readStates(ctx, ids)
	if err != nil {
		return 0, err
	}
	st := before[pointString(id)]
	if st.held(rec.Identity) {
		return 0, driver.HeldByAnother(rec.ID)
	}
	if cur := st.current(now); cur != expect {
		return 0, driver.VersionConflict(rec.ID, expect, cur)
	}
	version := st.liveVersion() + 1
	p, err := d.encode(rec, version)
	if err != nil {
		return 0, err
	}
	token := newToken()
	p.Payload[fWrites] = qc.NewValueString(formatWrites(pushWrite(st.carried(), write{version, token, time.Now().Unix()})))
	var should []*qc.Condition
	if g := st.guard(id, rec.Identity); g != nil {
		should = append(should, g)
	}
	if d.beforeWrite != nil {
		d.beforeWrite()
	}
	if _, err := d.points().Upsert(ctx, &qc.UpsertPoints{
		CollectionName: d.coll,
		Wait:           qc.PtrOf(true),
		Ordering:       strong(),
		UpdateFilter:   guardFilter(should),
		Points:         []*qc.PointStruct{p},
	}); err != nil {
		return 0, classify(ctx, err, "qdrant: conditional upsert")
	}
	after, err := d.readStates(ctx, ids)
	if err != nil {
		return 0, err
	}
	st = after[pointString(id)]
	switch outcomeOf(st.writes, version, token) {
	case applied:
		return version, nil
	case unknown:
		return 0, memory.Errorf(memory.ErrUnavailable, "qdrant: record %q: whether the swap to version %d was applied is unknown: %d later writes replaced the point before it was read back", rec.ID, version, len(st.writes))
	}
	if st.held(rec.Identity) {
		return 0, driver.HeldByAnother(rec.ID)
	}
	return 0, driver.VersionConflict(rec.ID, expect, st.current(now))
}

// current is the version of the live record the point holds at now
// (unix nanoseconds): 0 when it is absent, marked or expired.
func (s state) current(now int64) int64 {
	if s.liveVersion() == 0 || s.expiredAt(now) {
		return 0
	}
	return s.version
}
