package qdrant

import (
	"context"
	"time"

	qc "github.com/qdrant/go-client/qdrant"
	"google.golang.org/protobuf/proto"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Bounds of one upsert request. A batch of memory.MaxBatch records of
// 1 MiB each is far more than one gRPC message should carry (servers
// commonly refuse messages over 4 MiB), so Put splits it.
const (
	maxUpsertPoints = 256
	maxUpsertBytes  = 3 << 20
	maxGetIDs       = 1000 // ids per Get
)

// idKey names a record: ids are unique per tenant.
type idKey struct{ tenant, id string }

// Put stores recs; see driver.Driver and the package documentation for
// what all or nothing means on Qdrant.
func (d *Driver) Put(ctx context.Context, recs []memory.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := driver.CheckPut(recs); err != nil {
		return err
	}
	leave, err := d.enter()
	if err != nil {
		return err
	}
	defer leave()
	if len(recs) == 0 {
		return nil
	}
	if err := d.checkDims(recs); err != nil {
		return err
	}

	// The later record of one (tenant, id) wins; each occurrence is one
	// write, so the version grows by their number. Two identities under
	// one id in one batch is the same refusal as against the store.
	last := make(map[idKey]int, len(recs))
	writes := make(map[idKey]int64, len(recs))
	for i, r := range recs {
		k := idKey{r.Identity.Tenant, r.ID}
		if j, dup := last[k]; dup && recs[j].Identity != r.Identity {
			return driver.HeldByAnother(r.ID)
		}
		last[k] = i
		writes[k]++
	}
	order := make([]int, 0, len(last))
	for i, r := range recs {
		if last[idKey{r.Identity.Tenant, r.ID}] == i {
			order = append(order, i)
		}
	}

	// Write the batch, then read its points back: a point another writer
	// changed between the read and the write was skipped (its guard no
	// longer held), and is written again from what it holds now.
	pending := order
	token := newToken()
	for attempt := 1; len(pending) > 0; attempt++ {
		if attempt > maxAttempts {
			return memory.Errorf(memory.ErrUnavailable, "qdrant: %d records were changed by other writers between every read and write, %d times; the rest of the batch is stored", len(pending), maxAttempts)
		}
		if pending, err = d.putOnce(ctx, recs, pending, writes, token); err != nil {
			return err
		}
	}
	return nil
}

// maxAttempts is how many times Put writes a record whose point other
// writers keep changing between its read and its write.
const maxAttempts = 16

// putOnce writes the records of recs at the indexes pending (each the
// last of its id in the batch, written writes[its id] times): it reads
// their points, refuses the whole set with driver.HeldByAnother when
// another identity holds one, writes each guarded by what it read, and
// returns the indexes of the records whose write was skipped.
func (d *Driver) putOnce(ctx context.Context, recs []memory.Record, pending []int, writes map[idKey]int64, token string) ([]int, error) {
	ids := make([]*qc.PointId, len(pending))
	for n, i := range pending {
		ids[n] = qc.NewID(PointID(d.coll, recs[i].Identity.Tenant, recs[i].ID))
	}
	before, err := d.readStates(ctx, ids)
	if err != nil {
		return nil, err
	}
	points := make([]*qc.PointStruct, len(pending))
	guards := make([]*qc.Condition, len(pending))
	versions := make([]int64, len(pending))
	second := time.Now().Unix()
	for n, i := range pending {
		r := recs[i]
		st := before[pointString(ids[n])]
		if st.held(r.Identity) { // on a later attempt, what earlier ones wrote stays stored
			return nil, driver.HeldByAnother(r.ID)
		}
		versions[n] = st.liveVersion() + writes[idKey{r.Identity.Tenant, r.ID}]
		p, err := d.encode(r, versions[n])
		if err != nil {
			return nil, err
		}
		p.Payload[fWrites] = qc.NewValueString(formatWrites(pushWrite(st.carried(), write{versions[n], token, second})))
		points[n], guards[n] = p, st.guard(ids[n], r.Identity)
	}
	if d.beforeWrite != nil {
		d.beforeWrite()
	}
	for _, c := range chunks(points, maxUpsertPoints, maxUpsertBytes) {
		req := &qc.UpsertPoints{
			CollectionName: d.coll,
			Wait:           qc.PtrOf(true),
			Ordering:       strong(),
			Points:         make([]*qc.PointStruct, len(c)),
		}
		var should []*qc.Condition
		for j, n := range c {
			req.Points[j] = points[n]
			if guards[n] != nil {
				should = append(should, guards[n])
			}
		}
		req.UpdateFilter = guardFilter(should)
		if _, err := d.points().Upsert(ctx, req); err != nil {
			return nil, classify(ctx, err, "qdrant: upsert")
		}
	}
	after, err := d.readStates(ctx, ids)
	if err != nil {
		return nil, err
	}
	var again []int
	for n, i := range pending {
		st := after[pointString(ids[n])]
		switch outcomeOf(st.writes, versions[n], token) {
		case applied:
		case unknown:
			// Later writes replaced it, and their entries no longer
			// reach back to it: it was written, or it was not and the
			// point is another write's. Either way a record is stored
			// that a later write meant to replace this one's.
		default:
			if st.held(recs[i].Identity) {
				return nil, driver.HeldByAnother(recs[i].ID)
			}
			again = append(again, i)
		}
	}
	return again, nil
}

// state is what a write reads of a point before writing it, and after.
type state struct {
	exists  bool
	id      memory.Identity
	version int64
	dead    bool
	del     string // the marking call's token, when dead
	expSec  int64
	expNano int64
	writes  []write
}

// held reports whether another identity than id holds the point's
// record.
func (s state) held(id memory.Identity) bool { return s.exists && !s.dead && s.id != id }

// liveVersion is the version of the record stored (expired or not), 0
// when none is: the point is absent, or a Delete has marked it.
func (s state) liveVersion() int64 {
	if !s.exists || s.dead {
		return 0
	}
	return s.version
}

// carried returns the recent writes a write of the point carries forward:
// none when it recreates the record.
func (s state) carried() []write {
	if !s.exists || s.dead {
		return nil
	}
	return s.writes
}

// expiredAt reports whether the stored record has expired at now (unix
// nanoseconds).
func (s state) expiredAt(now int64) bool {
	sec, nano := splitNanos(now)
	return s.expSec < sec || s.expSec == sec && s.expNano <= nano
}

// guard returns the update_filter condition under which a write of id's
// record replaces the point p as it was read in s: still at the version
// read, by id, unmarked; or still marked by the same Delete. nil when
// the point was absent: then no condition lets a write replace a point
// created since, and Qdrant inserts it only if it is still absent.
func (s state) guard(p *qc.PointId, id memory.Identity) *qc.Condition {
	switch {
	case !s.exists:
		return nil
	case s.dead:
		return qc.NewFilterAsCondition(&qc.Filter{Must: []*qc.Condition{
			qc.NewHasID(p), qc.NewMatchBool(fDead, true), qc.NewMatchKeyword(fDel, s.del)}})
	}
	must := append([]*qc.Condition{qc.NewHasID(p), qc.NewMatchInt(fVersion, s.version), qc.NewMatchBool(fDead, false)}, identityConditions(id)...)
	return qc.NewFilterAsCondition(&qc.Filter{Must: must})
}

// guardFilter is the update_filter of an upsert whose points' guards are
// should: an existing point is replaced only when its guard holds. A
// condition no record meets (an empty record_id) keeps the filter from
// matching everything when should is empty.
func guardFilter(should []*qc.Condition) *qc.Filter {
	return &qc.Filter{Should: append(should, qc.NewIsEmpty(fRecordID))}
}

// stateFields is the payload a write reads.
var stateFields = func() []string {
	out := []string{fVersion, fDead, fDel, fExpSec, fExpNano, fWrites}
	for _, f := range identityFields {
		out = append(out, f.name)
	}
	return out
}()

// readStates reads the states of the points ids, by point id; a point
// that does not exist has the zero state.
func (d *Driver) readStates(ctx context.Context, ids []*qc.PointId) (map[string]state, error) {
	out := make(map[string]state, len(ids))
	for from := 0; from < len(ids); from += maxGetIDs {
		resp, err := d.points().Get(ctx, &qc.GetPoints{
			CollectionName:  d.coll,
			Ids:             ids[from:min(len(ids), from+maxGetIDs)],
			WithPayload:     qc.NewWithPayloadInclude(stateFields...),
			ReadConsistency: readAll(),
		}, recvOpt)
		if err != nil {
			return nil, classify(ctx, err, "qdrant: reading the records' points")
		}
		for _, pt := range resp.GetResult() {
			pr := &payloadReader{p: pt.GetPayload()}
			st := state{exists: true, id: pr.identity(), version: pr.int(fVersion), expSec: pr.int(fExpSec), expNano: pr.int(fExpNano)}
			if v, ok := pr.p[fDead].GetKind().(*qc.Value_BoolValue); ok {
				st.dead = v.BoolValue
			} else {
				pr.fail(fDead)
			}
			if st.dead {
				st.del = pr.str(fDel)
			}
			if ws, present := pr.optStr(fWrites); present {
				var ok bool
				if st.writes, ok = parseWrites(ws); !ok {
					pr.fail(fWrites)
				}
			}
			if pr.bad != "" {
				return nil, errNotRecord(pointString(pt.GetId()), pr.bad)
			}
			out[pointString(pt.GetId())] = st
		}
	}
	return out, nil
}

// chunks splits points into runs of at most maxPoints points and about
// maxBytes bytes (a point larger than maxBytes is a run of its own),
// returned as the indexes of their points, in order.
func chunks(points []*qc.PointStruct, maxPoints, maxBytes int) [][]int {
	var out [][]int
	var cur []int
	size := 0
	for i, p := range points {
		n := proto.Size(p)
		if len(cur) > 0 && (len(cur) == maxPoints || size+n > maxBytes) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, i)
		size += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// checkDims checks the vectors of recs against the store's dimension:
// a store opened without one (Options.Dims 0, on a collection without
// dense vectors) holds no vectors.
func (d *Driver) checkDims(recs []memory.Record) error {
	if d.dims == 0 {
		for _, r := range recs {
			if r.Vector != nil {
				return memory.Errorf(memory.ErrInvalidArgument, "record %s has a vector, and this store holds none: its collection was created without vectors (Options.Dims 0)", r.ID)
			}
		}
		return nil
	}
	_, err := driver.BatchDims(recs, d.dims)
	return err
}
