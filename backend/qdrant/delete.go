package qdrant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory/backend/driver"
)

// staleMark is how long after its mark a point marked by a Delete or
// Sweep that did not finish (its context ended, the server failed) is
// left before a Sweep removes it. A Delete in progress counts its marked
// points before it removes them, so they must outlive it.
const staleMark = 10 * time.Minute

// Delete removes every record matching q, expired or not, and reports
// exactly how many it removed, also when other Deletes race it: see
// remove.
func (d *Driver) Delete(ctx context.Context, q driver.Query) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := driver.CheckQuery(q); err != nil {
		return 0, err
	}
	leave, err := d.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	return d.remove(ctx, d.coll, d.deleteFilter(q))
}

// Sweep deletes every record expired at the driver's clock, in every
// tenant, and reports how many it removed. It also removes the points of
// Deletes and Sweeps that marked them and did not finish, staleMark after
// their mark (not counted: they were gone for readers already), and in
// the work collection the points that unfinished Completes left done and
// unfinished EraseWorks left marked, staleMark after (sweepWork).
func (d *Driver) Sweep(ctx context.Context) (int64, error) {
	now, err := driver.Admit(ctx, nil, d.clock)
	if err != nil {
		return 0, err
	}
	leave, err := d.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	n, err := d.remove(ctx, d.coll, sweepFilter(now))
	if err != nil {
		return 0, err
	}
	stale := &qc.Filter{Must: []*qc.Condition{
		qc.NewMatchBool(fDead, true),
		qc.NewRange(fDelAt, &qc.Range{Lt: qc.PtrOf(float64(time.Now().Add(-staleMark).Unix()))}),
	}}
	if _, err := d.points().Delete(ctx, &qc.DeletePoints{
		CollectionName: d.coll, Wait: qc.PtrOf(true), Ordering: strong(),
		Points: qc.NewPointsSelectorFilter(stale),
	}); err != nil {
		return 0, classify(ctx, err, "qdrant: removing stale marked points")
	}
	if err := d.sweepWork(ctx); err != nil {
		return 0, err
	}
	return n, nil
}

// remove deletes the points of collection coll (the records' or the work
// queue's) passing f (which requires them unmarked) and counts them
// exactly, in three steps:
//
//  1. one SetPayload by filter marks them with a token of this call
//     (dead = true, del = token, del_at = the wall clock's seconds): one
//     update operation, which Qdrant applies to a shard at once, so two
//     racing calls mark disjoint sets, and every read, which requires
//     dead = false, no longer sees them;
//  2. an exact Count of the points carrying the token is the number
//     removed;
//  3. a Delete by the token removes them.
//
// A point a Put (or an Enqueue) replaces between steps 1 and 3 loses the
// mark and stays: the Delete came first and the Put recreated the record.
func (d *Driver) remove(ctx context.Context, coll string, f *qc.Filter) (int64, error) {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	token := hex.EncodeToString(b[:])
	_, err := d.points().SetPayload(ctx, &qc.SetPayloadPoints{
		CollectionName: coll,
		Wait:           qc.PtrOf(true),
		Ordering:       strong(),
		Payload: map[string]*qc.Value{
			fDead:  qc.NewValueBool(true),
			fDel:   qc.NewValueString(token),
			fDelAt: qc.NewValueInt(time.Now().Unix()),
		},
		PointsSelector: qc.NewPointsSelectorFilter(f),
	})
	if err != nil {
		return 0, classify(ctx, err, "qdrant: marking the points to delete")
	}
	mine := &qc.Filter{Must: []*qc.Condition{qc.NewMatchKeyword(fDel, token)}}
	n, err := d.points().Count(ctx, &qc.CountPoints{
		CollectionName:  coll,
		Filter:          mine,
		Exact:           qc.PtrOf(true),
		ReadConsistency: qc.NewReadConsistencyType(qc.ReadConsistencyType_All),
	})
	if err != nil {
		return 0, classify(ctx, err, "qdrant: counting the marked points")
	}
	_, err = d.points().Delete(ctx, &qc.DeletePoints{
		CollectionName: coll, Wait: qc.PtrOf(true), Ordering: strong(),
		Points: qc.NewPointsSelectorFilter(mine),
	})
	if err != nil {
		return 0, classify(ctx, err, "qdrant: deleting the marked points")
	}
	return int64(n.GetResult().GetCount()), nil
}
