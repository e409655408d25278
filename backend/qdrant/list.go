package qdrant

import (
	"context"
	"slices"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Scroll sizes.
const (
	// scrollPage is the number of records one Scroll page returns.
	scrollPage = 128
	// leanPage is the number of points a Scroll page of ids and creation
	// times returns.
	leanPage = 2048
	// maxOrderedLimit is the largest Limit List answers through order_by;
	// a larger one scrolls every matching record.
	maxOrderedLimit = 10000
)

// List returns the unexpired records matching q, newest first; see
// driver.Driver and the package documentation for the reads it makes.
func (d *Driver) List(ctx context.Context, q driver.Query) ([]memory.Record, error) {
	now, leave, err := d.admit(ctx, driver.CheckQuery(q))
	if err != nil {
		return nil, err
	}
	defer leave()
	f := d.listFilter(q, now)
	var recs []memory.Record
	if q.Limit == 0 || q.Limit > maxOrderedLimit {
		recs, err = d.scrollRecords(ctx, f)
	} else {
		recs, err = d.newest(ctx, f, q.Limit)
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(recs, driver.CompareRecords)
	if q.Limit > 0 && len(recs) > q.Limit {
		recs = recs[:q.Limit]
	}
	return recs, nil
}

// scrollRecords returns every record passing f, paging by point id.
func (d *Driver) scrollRecords(ctx context.Context, f *qc.Filter) ([]memory.Record, error) {
	var out []memory.Record
	err := d.scroll(ctx, f, recordFields, withRaw(), scrollPage, func(pt *qc.RetrievedPoint) error {
		r, err := decode(pt.GetId(), pt.GetPayload(), pt.GetVectors())
		if err == nil {
			out = append(out, r)
		}
		return err
	})
	return out, err
}

// scroll calls fn for every point passing f, paging by point id, with the
// payload keys include and the vectors wv selects (nil: none).
func (d *Driver) scroll(ctx context.Context, f *qc.Filter, include []string, wv *qc.WithVectorsSelector, page uint32, fn func(*qc.RetrievedPoint) error) error {
	if wv == nil {
		wv = qc.NewWithVectors(false)
	}
	req := &qc.ScrollPoints{
		CollectionName:  d.coll,
		Filter:          f,
		Limit:           qc.PtrOf(page),
		WithPayload:     qc.NewWithPayloadInclude(include...),
		WithVectors:     wv,
		ReadConsistency: qc.NewReadConsistencyType(qc.ReadConsistencyType_All),
	}
	for {
		resp, err := d.points().Scroll(ctx, req, recvOpt)
		if err != nil {
			return classify(ctx, err, "qdrant: scroll")
		}
		for _, pt := range resp.GetResult() {
			if err := fn(pt); err != nil {
				return err
			}
		}
		if resp.NextPageOffset == nil || len(resp.GetResult()) == 0 {
			return nil
		}
		req.Offset = resp.NextPageOffset
	}
}

// lean is a point's id, record id and creation time: what ordering needs.
type lean struct {
	point   *qc.PointId
	id      string
	created int64
}

func readLean(pt *qc.RetrievedPoint) (lean, error) {
	pr := &payloadReader{p: pt.GetPayload()}
	l := lean{point: pt.GetId(), id: pr.str(fRecordID), created: pr.int(fCreated)}
	if pr.bad != "" {
		return lean{}, errNotRecord(pointString(pt.GetId()), pr.bad)
	}
	return l, nil
}

// compareLean is driver.CompareRecords on lean points.
func compareLean(a, b lean) int {
	if a.created != b.created {
		if a.created > b.created {
			return -1
		}
		return 1
	}
	switch {
	case a.id > b.id:
		return -1
	case a.id < b.id:
		return 1
	}
	return 0
}

// newest returns the limit newest records passing f (fewer when fewer
// pass, or when some are deleted while it reads). Qdrant orders by one
// key and leaves equal values in no defined order, so:
//
//  1. a Scroll ordered by created, descending, with limit, reads the ids
//     and creation times of at most limit points;
//  2. when it returns limit points, every point created at the last one's
//     time b is read (a Scroll filtered on created = b, by point id):
//     those with created > b were all in step 1, since they sort before
//     every point at b, but which points at b made the cut is arbitrary;
//  3. the candidates are sorted by created, then record id, descending,
//     and cut to limit, and only those are read whole, through f again.
func (d *Driver) newest(ctx context.Context, f *qc.Filter, limit int) ([]memory.Record, error) {
	resp, err := d.points().Scroll(ctx, &qc.ScrollPoints{
		CollectionName:  d.coll,
		Filter:          f,
		Limit:           qc.PtrOf(uint32(limit)),
		OrderBy:         &qc.OrderBy{Key: fCreated, Direction: qc.PtrOf(qc.Direction_Desc)},
		WithPayload:     qc.NewWithPayloadInclude(fRecordID, fCreated),
		WithVectors:     qc.NewWithVectors(false),
		ReadConsistency: qc.NewReadConsistencyType(qc.ReadConsistencyType_All),
	}, recvOpt)
	if err != nil {
		return nil, classify(ctx, err, "qdrant: scroll by creation time")
	}
	cands := make([]lean, 0, len(resp.GetResult()))
	for _, pt := range resp.GetResult() {
		l, err := readLean(pt)
		if err != nil {
			return nil, err
		}
		cands = append(cands, l)
	}
	if len(cands) >= limit {
		b := cands[len(cands)-1].created
		cands = slices.DeleteFunc(cands, func(l lean) bool { return l.created <= b })
		tie := &qc.Filter{Must: []*qc.Condition{qc.NewFilterAsCondition(f), qc.NewMatchInt(fCreated, b)}}
		err := d.scroll(ctx, tie, []string{fRecordID, fCreated}, nil, leanPage, func(pt *qc.RetrievedPoint) error {
			l, err := readLean(pt)
			if err == nil {
				cands = append(cands, l)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(cands, compareLean)
	if len(cands) > limit {
		cands = cands[:limit]
	}
	var out []memory.Record
	for from := 0; from < len(cands); from += scrollPage {
		part := cands[from:min(len(cands), from+scrollPage)]
		ids := make([]*qc.PointId, len(part))
		for i, l := range part {
			ids[i] = l.point
		}
		sel := &qc.Filter{Must: []*qc.Condition{qc.NewFilterAsCondition(f), qc.NewHasID(ids...)}}
		recs, err := d.scrollRecords(ctx, sel)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}
