package qdrant

import (
	"context"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// The work queue (driver.Claimer, driver.WorkEraser) lives in a second
// collection, the store's name followed by workSuffix, created by the
// first Enqueue. One point per item; see the package documentation's
// "Work queue".

// workSuffix names the work collection: Options.Collection + workSuffix.
const workSuffix = "_work"

// maxCollection is the longest Options.Collection: Qdrant's names are at
// most 255 bytes, and the work collection's adds workSuffix.
const maxCollection = 255 - len(workSuffix)

// Payload keys of the work collection's points, beside the identity
// fields and fCreated, fVersion, fDead, fDel, fDelAt and fWrites, which
// mean there what they mean for records.
const (
	wQueue   = "queue"
	wItem    = "item"    // the item's id
	wData    = "payload" // the item's payload
	wState   = "state"   // statePending, stateClaimed or stateDone
	wToken   = "token"   // the current claim's token; "" while pending
	wUntilS  = "until_s" // the lease's expiry, as whole seconds and the nanoseconds past them
	wUntilNs = "until_ns"
	wAttempt = "attempt" // the item's claims so far
	wInc     = "inc"     // the token of the Enqueue that made the item: one per incarnation of the point
	wDoneAt  = "done_at" // the wall-clock second a Complete marked the item done
)

// An item's states.
const (
	statePending = "pending"
	stateClaimed = "claimed"
	stateDone    = "done" // completed: holding no item, until the driver deletes the point or an Enqueue replaces it
)

// Bounds of Claim's reads and attempts.
const (
	// claimRounds is how many times in all a Claim that loses every item
	// it chose to other claimers chooses.
	claimRounds = 8
	// claimWindow is how many claimable items, as a multiple of n + 1, a
	// Claim reads to choose among, at most maxClaimWindow.
	claimWindow    = 8
	maxClaimWindow = 4096
)

// workColl returns the name of the work collection.
func (d *Driver) workColl() string { return d.coll + workSuffix }

// workPointID returns the id of the point holding item id of queue in
// the work collection of the store collection.
func workPointID(collection, queue, id string) string {
	return hashUUID("agentmem/qdrant/work/v1", collection, queue, id)
}

// workPoint is what the driver reads of a point of the work collection,
// and writes.
type workPoint struct {
	exists  bool
	queue   string
	item    string
	id      memory.Identity // read only when whole
	data    string          // read only when whole
	created int64
	state   string
	token   string
	until   int64 // unix nanoseconds
	attempt int64
	version int64
	inc     string
	dead    bool
	del     string // the marking EraseWork's token, when dead
	writes  []write
}

// live reports whether the point holds an item: pending or claimed, and
// not marked by an EraseWork.
func (p workPoint) live() bool {
	return p.exists && !p.dead && p.state != stateDone
}

// replaceable reports whether an Enqueue may write a new item over the
// point: it is absent, marked by an EraseWork, or done.
func (p workPoint) replaceable() bool {
	return !p.exists || p.dead || p.state == stateDone
}

// claimable reports whether the item may be claimed at now: pending, or
// claimed under a lease that has lapsed.
func (p workPoint) claimable(now int64) bool {
	return p.live() && (p.state == statePending || p.state == stateClaimed && p.until <= now)
}

// holds reports whether l is the item's current claim, lapsed or not.
func (p workPoint) holds(l driver.Lease) bool {
	return p.live() && p.state == stateClaimed && p.token == l.Token && p.queue == l.Queue && p.item == l.ID
}

// lease returns the claim the point holds.
func (p workPoint) lease() driver.Lease {
	return driver.Lease{
		Work:    driver.Work{Queue: p.queue, ID: p.item, Identity: p.id, Payload: p.data, Created: time.Unix(0, p.created).UTC()},
		Token:   p.token,
		Expires: time.Unix(0, p.until).UTC(),
		Attempt: int(p.attempt),
	}
}

// next returns the point p becomes by a write of the call token: its
// version one more, and the write first among its recent writes.
func (p workPoint) next(token string) workPoint {
	n := p
	n.version++
	n.writes = pushWrite(p.writes, write{n.version, token, time.Now().Unix()})
	return n
}

// guard returns the update_filter condition under which a write replaces
// the point pid as it was read in p: the same incarnation at the same
// version in the same state, and marked as it was (by the same
// EraseWork, or not at all).
// nil when the point was absent: Qdrant then inserts it only if it is
// still absent.
func (p workPoint) guard(pid *qc.PointId) *qc.Condition {
	if !p.exists {
		return nil
	}
	must := []*qc.Condition{qc.NewHasID(pid), qc.NewMatchInt(fVersion, p.version), qc.NewMatchKeyword(wInc, p.inc),
		qc.NewMatchKeyword(wState, p.state), qc.NewMatchBool(fDead, p.dead)}
	if p.dead {
		must = append(must, qc.NewMatchKeyword(fDel, p.del))
	}
	return qc.NewFilterAsCondition(&qc.Filter{Must: must})
}

// point returns the point that stores p under pid. A done point keeps
// only what a later write's guard and read back need: no item, identity
// or payload.
func (p workPoint) point(pid *qc.PointId) *qc.PointStruct {
	m := map[string]*qc.Value{
		wQueue:   qc.NewValueString(p.queue),
		wState:   qc.NewValueString(p.state),
		wInc:     qc.NewValueString(p.inc),
		fVersion: qc.NewValueInt(p.version),
		fDead:    qc.NewValueBool(false),
		fWrites:  qc.NewValueString(formatWrites(p.writes)),
	}
	if p.state == stateDone {
		m[wDoneAt] = qc.NewValueInt(time.Now().Unix())
	} else {
		s, ns := splitNanos(p.until)
		m[wItem] = qc.NewValueString(p.item)
		m[wData] = qc.NewValueString(p.data)
		m[fCreated] = qc.NewValueInt(p.created)
		m[wToken] = qc.NewValueString(p.token)
		m[wUntilS], m[wUntilNs] = qc.NewValueInt(s), qc.NewValueInt(ns)
		m[wAttempt] = qc.NewValueInt(p.attempt)
		for _, f := range identityFields {
			m[f.name] = qc.NewValueString(idValue(p.id.Get(f.f)))
		}
	}
	return &qc.PointStruct{Id: pid, Payload: m, Vectors: qc.NewVectorsMap(map[string]*qc.Vector{})}
}

// What readWork reads of a point.
type reading int

const (
	// readBack: what a write's read back needs to find its outcome: the
	// state, the incarnation and the recent writes.
	readBack reading = iota
	// readState: what a write needs to guard itself by the point as read
	// and carry its recent writes forward: all but the identity and the
	// item's payload.
	readState
	// readWhole: all of it, for a write that keeps the item.
	readWhole
)

// workBackFields and workStateFields are the payload keys of readBack
// and readState.
var (
	workBackFields  = []string{wState, wInc, fWrites}
	workStateFields = []string{wQueue, wItem, wState, wToken, wUntilS, wUntilNs, wAttempt, wInc, fCreated, fVersion, fDead, fDel, fWrites}
)

// readWorkPoint reads a point of the work collection, read as r says.
func readWorkPoint(pt *qc.RetrievedPoint, r reading) (workPoint, error) {
	pr := &payloadReader{p: pt.GetPayload()}
	p := workPoint{exists: true, state: pr.str(wState), inc: pr.str(wInc)}
	if ws, ok := parseWrites(pr.str(fWrites)); ok {
		p.writes = ws
	} else {
		pr.fail(fWrites)
	}
	if r != readBack {
		p.queue, p.version = pr.str(wQueue), pr.int(fVersion)
		if v, ok := pr.p[fDead].GetKind().(*qc.Value_BoolValue); ok {
			p.dead = v.BoolValue
		} else {
			pr.fail(fDead)
		}
		if p.dead {
			p.del = pr.str(fDel)
		}
		switch p.state {
		case stateDone:
		case statePending, stateClaimed:
			p.item, p.token, p.created, p.attempt = pr.str(wItem), pr.str(wToken), pr.int(fCreated), pr.int(wAttempt)
			p.until = pr.int(wUntilS)*1e9 + pr.int(wUntilNs)
			if r == readWhole {
				p.id, p.data = pr.identity(), pr.str(wData)
			}
		default:
			pr.fail(wState)
		}
	}
	if pr.bad != "" {
		return workPoint{}, memory.Errorf(memory.ErrInvalidArgument, "qdrant: point %s is not a work item of this driver (payload key %q)", pointString(pt.GetId()), pr.bad)
	}
	return p, nil
}

// readWork reads the points ids of the work collection, as r says, by
// point id; a point that does not exist has the zero workPoint. A work
// collection that does not exist is an error that isMissing reports.
func (d *Driver) readWork(ctx context.Context, ids []*qc.PointId, r reading) (map[string]workPoint, error) {
	with := qc.NewWithPayload(true)
	switch r {
	case readBack:
		with = qc.NewWithPayloadInclude(workBackFields...)
	case readState:
		with = qc.NewWithPayloadInclude(workStateFields...)
	}
	out := make(map[string]workPoint, len(ids))
	for from := 0; from < len(ids); from += maxGetIDs {
		resp, err := d.points().Get(ctx, &qc.GetPoints{
			CollectionName:  d.workColl(),
			Ids:             ids[from:min(len(ids), from+maxGetIDs)],
			WithPayload:     with,
			ReadConsistency: readAll(),
		}, recvOpt)
		if err != nil {
			return nil, classify(ctx, err, "qdrant: reading work items")
		}
		for _, pt := range resp.GetResult() {
			p, err := readWorkPoint(pt, r)
			if err != nil {
				return nil, err
			}
			out[pointString(pt.GetId())] = p
		}
	}
	return out, nil
}

// isMissing reports whether err, from classify, says that the collection
// does not exist.
func isMissing(err error) bool { return errors.Is(err, memory.ErrNotFound) }

// writeWork writes points, each replacing the point as it was read only
// while its guard holds (nil: only while the point is absent), in
// requests of at most maxUpsertPoints points and about maxUpsertBytes.
// Qdrant inserts a point that does not exist whatever the filter says,
// so a write that changes an item passes update, and then a point
// removed since it was read (by an EraseWork) is not written again;
// Enqueue does not.
func (d *Driver) writeWork(ctx context.Context, points []*qc.PointStruct, guards []*qc.Condition, update bool) error {
	if d.beforeWrite != nil {
		d.beforeWrite()
	}
	for _, c := range chunks(points, maxUpsertPoints, maxUpsertBytes) {
		req := &qc.UpsertPoints{
			CollectionName: d.workColl(),
			Wait:           qc.PtrOf(true),
			Ordering:       strong(),
			Points:         make([]*qc.PointStruct, len(c)),
		}
		// Every point of the work collection has a version, so the last
		// condition never holds: it keeps the filter from passing every
		// point when no point was read.
		should := []*qc.Condition{qc.NewIsEmpty(fVersion)}
		for j, n := range c {
			req.Points[j] = points[n]
			if guards[n] != nil {
				should = append(should, guards[n])
			}
		}
		req.UpdateFilter = &qc.Filter{Should: should}
		if update {
			req.UpdateMode = qc.PtrOf(qc.UpdateMode_UpdateOnly)
		}
		if _, err := d.points().Upsert(ctx, req); err != nil {
			return classify(ctx, err, "qdrant: conditional upsert of work items")
		}
	}
	return nil
}

// workIndexes lists the payload indexes of the work collection: those
// its claims and erasures filter on and Claim orders by.
func workIndexes() []index {
	return append(identityIndexes(),
		keywordIndex(wQueue, false), keywordIndex(wState, false), keywordIndex(fDel, false),
		boolIndex(fDead),
		intIndex(fCreated), intIndex(wUntilS), intIndex(wUntilNs), intIndex(fDelAt), intIndex(wDoneAt),
	)
}

// createWork creates the work collection, tolerating another driver's
// creating it first, and the payload indexes it lacks.
func (d *Driver) createWork(ctx context.Context) error {
	_, err := d.client.GetCollectionsClient().Create(ctx, &qc.CreateCollection{
		CollectionName: d.workColl(),
		VectorsConfig:  qc.NewVectorsConfigMap(map[string]*qc.VectorParams{}),
	})
	if err != nil && kindOf(err) != memory.ErrConflict { // AlreadyExists: another driver won
		return classify(ctx, err, "qdrant: creating collection "+strconv.Quote(d.workColl()))
	}
	_, err = d.ensureWorkIndexes(ctx)
	return err
}

// ensureWorkIndexes creates the payload indexes the work collection
// lacks and reports how many it created.
func (d *Driver) ensureWorkIndexes(ctx context.Context) (int, error) {
	info, err := d.client.GetCollectionsClient().Get(ctx, &qc.GetCollectionInfoRequest{CollectionName: d.workColl()})
	if err != nil {
		return 0, classify(ctx, err, "qdrant: reading collection "+strconv.Quote(d.workColl()))
	}
	return d.createIndexes(ctx, d.workColl(), info.GetResult().GetPayloadSchema(), workIndexes())
}

// itemKey names an item of a batch.
type itemKey struct{ queue, id string }

// Enqueue adds items and reports how many were new (driver.Claimer). An
// id pending or claimed in its queue, or repeated in the batch, is left
// as it first was; a completed or erased one is enqueued anew. It is all
// or nothing for the refusals it makes before it writes (invalid items);
// a server failure or a context that ends partway may leave part of the
// batch enqueued, as for Put: see the package documentation.
func (d *Driver) Enqueue(ctx context.Context, items []driver.Work) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := driver.CheckEnqueue(items); err != nil {
		return 0, err
	}
	leave, err := d.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	seen := make(map[itemKey]bool, len(items))
	var pending []int
	for i, w := range items {
		if k := (itemKey{w.Queue, w.ID}); !seen[k] {
			seen[k] = true
			pending = append(pending, i)
		}
	}
	defer func() { // the next Claims read the items written
		queues := map[string]bool{}
		for k := range seen {
			queues[k.queue] = true
		}
		d.queue.dropPools(slices.Collect(maps.Keys(queues))...)
	}()
	added := 0
	for attempt := 1; len(pending) > 0; attempt++ {
		if attempt > maxAttempts {
			return 0, memory.Errorf(memory.ErrUnavailable, "qdrant: %d work items were changed by other writers between every read and write, %d times; the rest of the batch is enqueued", len(pending), maxAttempts)
		}
		var n int
		if n, pending, err = d.enqueueOnce(ctx, items, pending); err != nil {
			return 0, err
		}
		added += n
	}
	return added, nil
}

// enqueueOnce writes the items of items at the indexes pending whose
// points hold no item (absent, done, or marked by an EraseWork), each
// guarded by what it read, and reads them back. It returns how many it
// added and the indexes of those whose write another writer's preceded,
// to be looked at again. It creates the work collection when it does
// not exist.
func (d *Driver) enqueueOnce(ctx context.Context, items []driver.Work, pending []int) (int, []int, error) {
	ids := make([]*qc.PointId, len(pending))
	for n, i := range pending {
		ids[n] = qc.NewID(workPointID(d.coll, items[i].Queue, items[i].ID))
	}
	before, err := d.readWork(ctx, ids, readState)
	if isMissing(err) {
		if err = d.createWork(ctx); err == nil {
			before, err = d.readWork(ctx, ids, readState)
		}
	}
	if err != nil {
		return 0, nil, err
	}
	token := newToken()
	var (
		points  []*qc.PointStruct
		guards  []*qc.Condition
		written []int // indexes into pending
		wrote   []workPoint
	)
	for n, i := range pending {
		old := before[pointString(ids[n])]
		if !old.replaceable() {
			continue // pending or claimed: left as it is
		}
		w := items[i]
		created, _ := memory.UnixNanos(w.Created) // Validate checked the range
		p := workPoint{
			exists: true, queue: w.Queue, item: w.ID, id: w.Identity, data: w.Payload, created: created,
			state: statePending, inc: token, version: old.version, writes: old.writes,
		}.next(token)
		points = append(points, p.point(ids[n]))
		guards = append(guards, old.guard(ids[n]))
		written = append(written, n)
		wrote = append(wrote, p)
	}
	if len(points) == 0 {
		return 0, nil, nil
	}
	if err := d.writeWork(ctx, points, guards, false); err != nil {
		return 0, nil, err
	}
	back := make([]*qc.PointId, len(written))
	for j, n := range written {
		back[j] = ids[n]
	}
	after, err := d.readWork(ctx, back, readBack)
	if err != nil {
		return 0, nil, err
	}
	added := 0
	var again []int
	for j, n := range written {
		now := after[pointString(back[j])]
		switch outcomeOf(now.writes, wrote[j].version, token) {
		case lost:
			if now.exists && now.inc == token {
				// This write made the incarnation, and a Complete has
				// marked it done since, with entries of its own.
				added++
				break
			}
			if now.exists {
				again = append(again, pending[n])
				break
			}
			// Gone: the item written was completed or erased since, and
			// its point removed. Writing it again would enqueue it twice;
			// it counts as new, although the write removed may have been
			// another Enqueue's that preceded this one.
			added++
		default:
			// applied; or unknown: so many writes followed that the
			// entries no longer reach back to it, all of them to an
			// item that was enqueued, by this call or by another.
			added++
		}
	}
	return added, again, nil
}

// claimFilter holds for the items of queue claimable at now (unix
// nanoseconds): unmarked, and pending or claimed under a lease that ends
// at or before now, compared as whole seconds and then nanoseconds, as
// expiry is.
func claimFilter(queue string, now int64) *qc.Filter {
	s, ns := splitNanos(now)
	lapsed := qc.NewFilterAsCondition(&qc.Filter{Should: []*qc.Condition{
		qc.NewRange(wUntilS, &qc.Range{Lt: qc.PtrOf(float64(s))}),
		qc.NewFilterAsCondition(&qc.Filter{Must: []*qc.Condition{
			qc.NewMatchInt(wUntilS, s),
			qc.NewRange(wUntilNs, &qc.Range{Lte: qc.PtrOf(float64(ns))}),
		}}),
	}})
	return &qc.Filter{Must: []*qc.Condition{
		qc.NewMatchKeyword(wQueue, queue),
		qc.NewMatchBool(fDead, false),
		qc.NewFilterAsCondition(&qc.Filter{Should: []*qc.Condition{
			qc.NewMatchKeyword(wState, statePending),
			qc.NewFilterAsCondition(&qc.Filter{Must: []*qc.Condition{qc.NewMatchKeyword(wState, stateClaimed), lapsed}}),
		}}),
	}}
}

// eraseWorkFilter holds for the items of queue whose identity f matches,
// pending or claimed, and unmarked.
func eraseWorkFilter(queue string, f memory.Filter) *qc.Filter {
	must := []*qc.Condition{
		qc.NewMatchKeyword(wQueue, queue),
		qc.NewMatchKeywords(wState, statePending, stateClaimed),
		qc.NewMatchBool(fDead, false),
	}
	for _, x := range identityFields {
		if f.Match.Has(x.f) {
			must = append(must, qc.NewMatchKeyword(x.name, idValue(f.Identity.Get(x.f))))
		}
	}
	return &qc.Filter{Must: must}
}

// queued is a claimable point's id, item id and creation time: what
// ordering needs.
type queued struct {
	point   *qc.PointId
	item    string
	created int64
}

// compareQueued is claim order: oldest first, then by item id.
func compareQueued(a, b queued) int {
	if a.created != b.created {
		if a.created < b.created {
			return -1
		}
		return 1
	}
	return strings.Compare(a.item, b.item)
}

// readQueued reads a point of a lean scroll.
func readQueued(pt *qc.RetrievedPoint) (queued, error) {
	pr := &payloadReader{p: pt.GetPayload()}
	c := queued{point: pt.GetId(), item: pr.str(wItem), created: pr.int(fCreated)}
	if pr.bad != "" {
		return queued{}, memory.Errorf(memory.ErrInvalidArgument, "qdrant: point %s is not a work item of this driver (payload key %q)", pointString(pt.GetId()), pr.bad)
	}
	return c, nil
}

// oldest returns up to limit points passing f with the least creation
// times: a Scroll ordered by created, ascending. Points of equal times
// come in no defined order.
func (d *Driver) oldest(ctx context.Context, f *qc.Filter, limit int) ([]queued, error) {
	resp, err := d.points().Scroll(ctx, &qc.ScrollPoints{
		CollectionName:  d.workColl(),
		Filter:          f,
		Limit:           qc.PtrOf(uint32(limit)),
		OrderBy:         &qc.OrderBy{Key: fCreated, Direction: qc.PtrOf(qc.Direction_Asc)},
		WithPayload:     qc.NewWithPayloadInclude(wItem, fCreated),
		WithVectors:     qc.NewWithVectors(false),
		ReadConsistency: readAll(),
	}, recvOpt)
	if err != nil {
		return nil, classify(ctx, err, "qdrant: scroll of work items by creation time")
	}
	out := make([]queued, 0, len(resp.GetResult()))
	for _, pt := range resp.GetResult() {
		c, err := readQueued(pt)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// ties returns every point passing f created at b, paging by point id.
func (d *Driver) ties(ctx context.Context, f *qc.Filter, b int64) ([]queued, error) {
	req := &qc.ScrollPoints{
		CollectionName:  d.workColl(),
		Filter:          &qc.Filter{Must: []*qc.Condition{qc.NewFilterAsCondition(f), qc.NewMatchInt(fCreated, b)}},
		Limit:           qc.PtrOf(uint32(leanPage)),
		WithPayload:     qc.NewWithPayloadInclude(wItem, fCreated),
		WithVectors:     qc.NewWithVectors(false),
		ReadConsistency: readAll(),
	}
	var out []queued
	for {
		resp, err := d.points().Scroll(ctx, req, recvOpt)
		if err != nil {
			return nil, classify(ctx, err, "qdrant: scroll of work items created at one time")
		}
		for _, pt := range resp.GetResult() {
			c, err := readQueued(pt)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		if resp.NextPageOffset == nil || len(resp.GetResult()) == 0 {
			return out, nil
		}
		req.Offset = resp.NextPageOffset
	}
}

// workState is what a driver remembers of its work queue between calls:
// the creation times that bound its claims' reads, the items its last
// read found, the items its Claims in flight have chosen, and the done
// points its Completes have yet to remove. None of it decides what a call
// returns when no other call of the driver runs at once; all of it saves
// requests.
type workState struct {
	mu       sync.Mutex
	bounds   map[string]int64         // per queue: see claimable
	claims   map[string]int           // per queue, the Claims in flight
	pools    map[string]*pool         // per queue, the claimable items the last read found
	reading  map[string]chan struct{} // per queue, closed when the read that will make the next pool ends
	reserved map[string]bool          // the points Claims in flight are claiming
	done     []doneRef                // see Complete
}

// newWorkState returns an empty workState.
func newWorkState() *workState {
	return &workState{bounds: map[string]int64{}, claims: map[string]int{}, pools: map[string]*pool{}, reading: map[string]chan struct{}{}, reserved: map[string]bool{}}
}

// Claim narrows its ordered read by a creation time learnt from the
// reads before it (workState.bounds): per queue, one at or below which
// the last unbounded read found its claimReach claimable items, or
// math.MaxInt64 when it found fewer, and the next read is unbounded.
// Qdrant orders a Scroll by walking the index on created, so a bound
// changes little there; a server that filters every point and sorts
// those that pass (the in-process one) does far less work under a bound
// that only the oldest claimable items pass.

// claimReach is how many claimable items, as a multiple of n + 1 and at
// least minClaimReach, an unbounded read takes to learn a bound.
const (
	claimReach    = 8
	minClaimReach = 256
)

// bounded returns f with created at most b first among its conditions.
func bounded(f *qc.Filter, b int64) *qc.Filter {
	return &qc.Filter{Must: append([]*qc.Condition{qc.NewRange(fCreated, &qc.Range{Lte: qc.PtrOf(float64(b))})}, f.GetMust()...)}
}

// claimable returns up to want of the oldest items of queue claimable at
// now, ordered by created (ties in no defined order), and the filter that
// read them: under the learnt bound when that passes at least enough of
// them, else unbounded, reading claimReach times more to learn the
// bound. A range bound on created passes a down-set of creation times
// (float64 rounding is monotonic), so every claimable item it leaves out
// is newer than every one it passes: when it finds enough, those it
// returns are the oldest of all.
func (d *Driver) claimable(ctx context.Context, queue string, want, enough int, now int64) ([]queued, *qc.Filter, error) {
	f := claimFilter(queue, now)
	ws := d.queue
	ws.mu.Lock()
	b, ok := ws.bounds[queue]
	ws.mu.Unlock()
	if ok && b != math.MaxInt64 {
		bf := bounded(f, b)
		cands, err := d.oldest(ctx, bf, want)
		if err != nil || len(cands) >= enough {
			return cands, bf, err
		}
	}
	reach := min(max(claimReach*want, minClaimReach), maxOrderedLimit)
	cands, err := d.oldest(ctx, f, max(reach, want))
	if err != nil {
		return nil, nil, err
	}
	b = math.MaxInt64
	if len(cands) >= reach {
		b = cands[len(cands)-1].created
	}
	ws.mu.Lock()
	ws.bounds[queue] = b
	ws.mu.Unlock()
	return cands, f, nil
}

// oldestOf returns the n oldest of cands, the first items of queue
// claimable at now as claimable read them under f (ordered by created,
// ties in no defined order), in claim order, and the others. Qdrant
// leaves equal values in no defined order, so when the n-th and the next
// share a creation time b, the group at b straddles the cut: every
// claimable point created at b is read (by id pages) in place of those
// the read returned at b. The candidates are then sorted by created and
// item id and cut to n.
func (d *Driver) oldestOf(ctx context.Context, cands []queued, f *qc.Filter, n int) (first, rest []queued, err error) {
	if len(cands) <= n {
		first = slices.Clone(cands)
		slices.SortFunc(first, compareQueued)
		return first, nil, nil
	}
	b := cands[n-1].created
	if cands[n].created != b {
		first = slices.Clone(cands[:n]) // every point created at or before the n-th's
		slices.SortFunc(first, compareQueued)
		return first, cands[n:], nil
	}
	i := slices.IndexFunc(cands, func(c queued) bool { return c.created >= b })
	j := slices.IndexFunc(cands, func(c queued) bool { return c.created > b })
	if j < 0 {
		j = len(cands)
	}
	tie, err := d.ties(ctx, f, b)
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(tie, compareQueued)
	cut := min(n-i, len(tie))
	first = append(slices.Clone(cands[:i]), tie[:cut]...)
	slices.SortFunc(first, compareQueued)
	return first, append(tie[cut:], cands[j:]...), nil
}

// Claim leases up to n items of queue that are pending or whose lease
// has lapsed, oldest first (by Created, then ID), for the given duration
// (driver.Claimer). Alone, it reads the oldest claimable items and takes
// the n oldest (firstChoice). While other Claims of the queue run in the
// same driver, it chooses n at random among the items the last of their
// reads found, if that read is at most poolAge old or is in flight (it
// waits for it then), and those the others have not chosen (fromPool),
// or else reads anew and chooses so among what it read: concurrent
// claimers then neither all go for the same items nor each read the
// queue. When that read found nothing claimable, it returns nothing. It reads the chosen points whole, claims
// those still claimable at its clock's reading with one conditional
// upsert, each guarded by the point as read, and reads them back: an item
// whose write another claimer's preceded is not returned. When it lost
// every item it chose while claimable items remain, other claimers are
// taking the oldest, and it chooses again, n at random among the others
// it read (or, when none is left, among a wider window read anew), up to
// claimRounds times in all. A store whose work collection does not exist
// yet has nothing to claim.
func (d *Driver) Claim(ctx context.Context, queue string, n int, lease time.Duration) ([]driver.Lease, error) {
	now, until, leave, err := d.admitLease(ctx, driver.CheckClaim(queue, n, lease), lease)
	if err != nil {
		return nil, err
	}
	defer leave()
	ws := d.queue
	ws.mu.Lock()
	ws.claims[queue]++
	concurrent := ws.claims[queue] > 1
	ws.mu.Unlock()
	defer func() {
		ws.mu.Lock()
		if ws.claims[queue]--; ws.claims[queue] == 0 {
			delete(ws.claims, queue)
		}
		ws.mu.Unlock()
	}()
	tried := map[string]bool{}
	var cands, spare []queued
	if concurrent {
		var none bool
		if cands, none = ws.fromPool(ctx, queue, n); none {
			return nil, nil
		}
	}
	if len(cands) == 0 {
		if cands, spare, err = d.firstChoice(ctx, ws, queue, n, now); err != nil {
			if isMissing(err) {
				return nil, nil // nothing was ever enqueued
			}
			return nil, err
		}
	}
	var out []driver.Lease
	for round := 1; len(cands) > 0; round++ {
		for _, c := range cands {
			tried[pointString(c.point)] = true
		}
		out, err = d.claimOnce(ctx, cands, now, until)
		ws.release(queue, cands)
		if err != nil || len(out) > 0 || round == claimRounds {
			break
		}
		spare = slices.DeleteFunc(spare, func(c queued) bool { return tried[pointString(c.point)] })
		if len(spare) == 0 {
			if spare, _, err = d.claimable(ctx, queue, min(maxClaimWindow, claimWindow*(n+1)<<round), 1, now); err != nil {
				break
			}
			spare = slices.DeleteFunc(spare, func(c queued) bool { return tried[pointString(c.point)] })
		}
		cands, spare = ws.choose(spare, n)
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b driver.Lease) int {
		return compareQueued(queued{created: a.Created.UnixNano(), item: a.ID}, queued{created: b.Created.UnixNano(), item: b.ID})
	})
	return out, nil
}

// firstChoice reads the oldest claimable items of queue (claimable, up to
// claimWindow times n+1 of them), keeps them as the queue's pool, and
// chooses n: the n oldest (oldestOf), unless other Claims of the queue
// are in flight in the driver, when it chooses n at random among those
// the others have not chosen. It returns the chosen, reserved, and the
// others read.
func (d *Driver) firstChoice(ctx context.Context, ws *workState, queue string, n int, now int64) (cands, spare []queued, err error) {
	window := min(maxClaimWindow, claimWindow*(n+1))
	read := time.Now()
	ws.mu.Lock()
	if _, ok := ws.reading[queue]; !ok {
		done := make(chan struct{})
		ws.reading[queue] = done
		defer func() {
			ws.mu.Lock()
			delete(ws.reading, queue)
			ws.mu.Unlock()
			close(done)
		}()
	}
	ws.mu.Unlock()
	all, f, err := d.claimable(ctx, queue, window, n+1, now)
	if errors.Is(err, memory.ErrInvalidArgument) {
		// Another driver created the work collection and has not made
		// its indexes yet (or failed to): order_by needs the one on
		// created.
		if made, ierr := d.ensureWorkIndexes(ctx); ierr == nil && made > 0 {
			all, f, err = d.claimable(ctx, queue, window, n+1, now)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	ws.mu.Lock()
	ws.pools[queue] = &pool{read: read, cands: slices.Clone(all), none: len(all) == 0}
	alone := ws.claims[queue] == 1
	ws.mu.Unlock()
	if !alone {
		cands, spare = ws.choose(all, n)
		return cands, spare, nil
	}
	if cands, spare, err = d.oldestOf(ctx, all, f, n); err != nil {
		return nil, nil, err
	}
	ws.reserve(cands)
	return cands, spare, nil
}

// pool is the claimable items a Claim read, from which the Claims that
// run at the same time in the driver choose while it is at most poolAge
// old, rather than each reading its own. When the read found none, they
// find none either. An Enqueue or a Release by the driver drops its
// pool: the items it makes claimable are read by the next Claim.
type pool struct {
	read  time.Time
	cands []queued
	none  bool // the read found no claimable item
}

// poolAge is how long after it was read a pool serves Claims that run
// while another Claim of the queue does.
const poolAge = 250 * time.Millisecond

// fromPool chooses up to n of the queue's pool, if it is fresh (waiting
// for the read that will make the next one, when one is in flight), at
// random among those no Claim in flight has chosen, and reserves them;
// none reports a fresh pool whose read found no claimable item.
func (ws *workState) fromPool(ctx context.Context, queue string, n int) (chosen []queued, none bool) {
	ws.mu.Lock()
	p := ws.pools[queue]
	if p == nil || time.Since(p.read) > poolAge {
		reading, ok := ws.reading[queue]
		ws.mu.Unlock()
		if !ok {
			return nil, false
		}
		select {
		case <-reading:
		case <-ctx.Done():
			return nil, false
		}
		ws.mu.Lock()
		if p = ws.pools[queue]; p == nil || time.Since(p.read) > poolAge {
			ws.mu.Unlock()
			return nil, false
		}
	}
	if p.none {
		ws.mu.Unlock()
		return nil, true
	}
	cands := slices.Clone(p.cands)
	ws.mu.Unlock()
	chosen, _ = ws.choose(cands, n)
	return chosen, false
}

// dropPools drops the pools of queues, whose items a call of the driver
// made claimable.
func (ws *workState) dropPools(queues ...string) {
	ws.mu.Lock()
	for _, q := range queues {
		delete(ws.pools, q)
	}
	ws.mu.Unlock()
}

// choose returns up to n of cands chosen at random among those no Claim
// in flight has chosen, in claim order, reserved for the caller, and the
// others.
func (ws *workState) choose(cands []queued, n int) (chosen, rest []queued) {
	rand.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	ws.mu.Lock()
	for _, c := range cands {
		if k := pointString(c.point); len(chosen) < n && !ws.reserved[k] {
			ws.reserved[k] = true
			chosen = append(chosen, c)
		} else {
			rest = append(rest, c)
		}
	}
	ws.mu.Unlock()
	slices.SortFunc(chosen, compareQueued)
	return chosen, rest
}

// reserve marks cands chosen by a Claim in flight.
func (ws *workState) reserve(cands []queued) {
	ws.mu.Lock()
	for _, c := range cands {
		ws.reserved[pointString(c.point)] = true
	}
	ws.mu.Unlock()
}

// release ends the reservations of cands, which the queue's pool no
// longer offers: they are claimed, or were not claimable.
func (ws *workState) release(queue string, cands []queued) {
	ws.mu.Lock()
	gone := map[string]bool{}
	for _, c := range cands {
		k := pointString(c.point)
		delete(ws.reserved, k)
		gone[k] = true
	}
	if p := ws.pools[queue]; p != nil {
		p.cands = slices.DeleteFunc(p.cands, func(c queued) bool { return gone[pointString(c.point)] })
	}
	ws.mu.Unlock()
}

// admitLease starts a call that takes or extends a lease: it refuses a
// done context and invalid input (invalid, when not nil), reads the
// clock for now and the lease's end (driver.LeaseEnd) and enters.
func (d *Driver) admitLease(ctx context.Context, invalid error, lease time.Duration) (now, until int64, leave func(), err error) {
	if err := ctx.Err(); err != nil {
		return 0, 0, nil, err
	}
	if invalid != nil {
		return 0, 0, nil, invalid
	}
	if now, until, err = driver.LeaseEnd(d.clock, lease); err != nil {
		return 0, 0, nil, err
	}
	if leave, err = d.enter(); err != nil {
		return 0, 0, nil, err
	}
	return now, until, leave, nil
}

// claimOnce claims the candidates still claimable at now when read whole,
// each with a token of its own, the next attempt and a lease until until,
// in one conditional upsert (one per chunk), and returns the claims its
// read back finds applied.
func (d *Driver) claimOnce(ctx context.Context, cands []queued, now, until int64) ([]driver.Lease, error) {
	ids := make([]*qc.PointId, len(cands))
	for i, c := range cands {
		ids[i] = c.point
	}
	before, err := d.readWork(ctx, ids, readWhole)
	if err != nil {
		return nil, err
	}
	token := newToken()
	var (
		points []*qc.PointStruct
		guards []*qc.Condition
		mine   []workPoint
		back   []*qc.PointId
	)
	for _, id := range ids {
		old := before[pointString(id)]
		if !old.claimable(now) {
			continue // taken since the scroll
		}
		p := old.next(token)
		p.state, p.token, p.until, p.attempt = stateClaimed, leaseToken(old.inc), until, old.attempt+1
		points = append(points, p.point(id))
		guards = append(guards, old.guard(id))
		mine = append(mine, p)
		back = append(back, id)
	}
	if len(points) == 0 {
		return nil, nil
	}
	if err := d.writeWork(ctx, points, guards, true); err != nil {
		return nil, err
	}
	after, err := d.readWork(ctx, back, readBack)
	if err != nil {
		return nil, err
	}
	var out []driver.Lease
	for i, id := range back {
		// Unknown (the entries no longer reach back to the write) counts
		// as lost: a claim made and never returned lapses unused.
		if outcomeOf(after[pointString(id)].writes, mine[i].version, token) == applied {
			out = append(out, mine[i].lease())
		}
	}
	return out, nil
}

// Renew extends l's claim, if it is still the item's current one (lapsed
// or not), to lease from now by the driver's clock (driver.Claimer).
func (d *Driver) Renew(ctx context.Context, l driver.Lease, lease time.Duration) (driver.Lease, error) {
	_, until, leave, err := d.admitLease(ctx, driver.CheckRenew(l, lease), lease)
	if err != nil {
		return driver.Lease{}, err
	}
	defer leave()
	p, err := d.settle(ctx, l, func(p *workPoint) { p.until = until })
	if err != nil {
		return driver.Lease{}, err
	}
	return p.lease(), nil
}

// Release makes the item of l's claim pending again, claimable at once,
// if l is still its current claim (driver.Claimer).
func (d *Driver) Release(ctx context.Context, l driver.Lease) error {
	leave, err := d.enterLease(ctx, l)
	if err != nil {
		return err
	}
	defer leave()
	_, err = d.settle(ctx, l, func(p *workPoint) { p.state, p.token, p.until = statePending, "", 0 })
	if err == nil {
		d.queue.dropPools(l.Queue)
	}
	return err
}

// leaseToken returns a new claim's token on an item of incarnation inc:
// inc, a dot and driver.NewLeaseToken, so that Complete knows the
// incarnation it completes without reading the point.
func leaseToken(inc string) string { return inc + "." + driver.NewLeaseToken() }

// Complete removes the item of l's claim, if l is still its current
// claim, lapsed or not (driver.Claimer), in two requests. A conditional
// write marks the item done, guarded by the claim itself (the point
// claimed under l's token, unmarked), so it needs no read first: the
// done point holds no item, identity or payload, only its incarnation
// (from the token), a version of 0 and this call's entry among its
// recent writes. A done point is never claimed or erased, and an Enqueue
// of its id replaces it. A read back finds the entry, or l was stale.
// The driver then removes its done points in batches of doneBatch, each
// one delete by a filter that holds for those points only while they
// are done in the incarnation completed (an Enqueue may have replaced
// one since); a batch left when the driver closes or fails is Sweep's,
// staleMark after.
func (d *Driver) Complete(ctx context.Context, l driver.Lease) error {
	leave, err := d.enterLease(ctx, l)
	if err != nil {
		return err
	}
	defer leave()
	inc, _, ok := strings.Cut(l.Token, ".")
	if !ok {
		return driver.StaleLease(l) // not a token of this driver
	}
	id := qc.NewID(workPointID(d.coll, l.Queue, l.ID))
	token := newToken()
	done := workPoint{exists: true, queue: l.Queue, state: stateDone, inc: inc, writes: []write{{0, token, time.Now().Unix()}}}
	claimed := qc.NewFilterAsCondition(&qc.Filter{Must: []*qc.Condition{
		qc.NewHasID(id), qc.NewMatchKeyword(wState, stateClaimed), qc.NewMatchKeyword(wToken, l.Token), qc.NewMatchBool(fDead, false)}})
	err = d.writeWork(ctx, []*qc.PointStruct{done.point(id)}, []*qc.Condition{claimed}, true)
	if isMissing(err) {
		return driver.StaleLease(l) // nothing was ever enqueued
	}
	if err != nil {
		return err
	}
	after, err := d.readWork(ctx, []*qc.PointId{id}, readBack)
	if err != nil {
		return err
	}
	// The write is applied only while l is the current claim. Its entry
	// stays until the point's next writes push it out (an Enqueue
	// carries it forward), or a batch removes the point, which is only
	// queued below.
	if !slices.ContainsFunc(after[pointString(id)].writes, func(w write) bool { return w.token == token }) {
		return driver.StaleLease(l)
	}
	ws := d.queue
	ws.mu.Lock()
	ws.done = append(ws.done, doneRef{id, inc})
	var batch []doneRef
	if len(ws.done) >= doneBatch {
		batch, ws.done = ws.done, nil
	}
	ws.mu.Unlock()
	if batch != nil {
		if err := d.removeDone(ctx, batch); err != nil {
			// The item is completed; its point stays done, for the next
			// batch.
			ws.mu.Lock()
			ws.done = append(ws.done, batch...)
			ws.mu.Unlock()
		}
	}
	return nil
}

// doneBatch is how many done points a driver removes at once.
const doneBatch = 256

// doneRef is a point a Complete marked done in incarnation inc.
type doneRef struct {
	id  *qc.PointId
	inc string
}

// removeDone deletes the points of refs that are still done in the
// incarnation completed.
func (d *Driver) removeDone(ctx context.Context, refs []doneRef) error {
	should := make([]*qc.Condition, len(refs))
	for i, r := range refs {
		should[i] = qc.NewFilterAsCondition(&qc.Filter{Must: []*qc.Condition{qc.NewHasID(r.id), qc.NewMatchKeyword(wInc, r.inc)}})
	}
	_, err := d.points().Delete(ctx, &qc.DeletePoints{
		CollectionName: d.workColl(), Wait: qc.PtrOf(true), Ordering: strong(),
		Points: qc.NewPointsSelectorFilter(&qc.Filter{Must: []*qc.Condition{
			qc.NewMatchKeyword(wState, stateDone),
			qc.NewFilterAsCondition(&qc.Filter{Should: should}),
		}}),
	})
	if err != nil {
		return classify(ctx, err, "qdrant: removing done work items")
	}
	return nil
}

// enterLease starts a Release or Complete: it refuses a done context and
// an invalid lease, and enters.
func (d *Driver) enterLease(ctx context.Context, l driver.Lease) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := driver.CheckLease(l); err != nil {
		return nil, err
	}
	return d.enter()
}

// settle changes the item of l's claim by edit, if l is its current
// claim: it reads the point whole,
// fails with driver.StaleLease when l is not its current claim, writes
// the edited point guarded by the point as read, and reads it back. A
// write another writer's preceded is tried again from what the point
// holds then (stale, if it ended the claim), up to maxAttempts times;
// one whose outcome is unknown fails with memory.ErrUnavailable.
func (d *Driver) settle(ctx context.Context, l driver.Lease, edit func(*workPoint)) (workPoint, error) {
	id := qc.NewID(workPointID(d.coll, l.Queue, l.ID))
	ids := []*qc.PointId{id}
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		before, err := d.readWork(ctx, ids, readWhole)
		if isMissing(err) {
			return workPoint{}, driver.StaleLease(l) // nothing was ever enqueued
		}
		if err != nil {
			return workPoint{}, err
		}
		old := before[pointString(id)]
		if !old.holds(l) {
			return workPoint{}, driver.StaleLease(l)
		}
		token := newToken()
		p := old.next(token)
		edit(&p)
		if err := d.writeWork(ctx, []*qc.PointStruct{p.point(id)}, []*qc.Condition{old.guard(id)}, true); err != nil {
			return workPoint{}, err
		}
		after, err := d.readWork(ctx, ids, readBack)
		if err != nil {
			return workPoint{}, err
		}
		switch outcomeOf(after[pointString(id)].writes, p.version, token) {
		case applied:
			return p, nil
		case unknown:
			return workPoint{}, memory.Errorf(memory.ErrUnavailable, "qdrant: work item %q of queue %q: whether the write was applied is unknown: later writes replaced the point before it was read back", l.ID, l.Queue)
		}
	}
	return workPoint{}, memory.Errorf(memory.ErrUnavailable, "qdrant: work item %q of queue %q was changed by other writers between every read and write, %d times", l.ID, l.Queue, maxAttempts)
}

// EraseWork removes every item of queue whose identity f matches,
// pending or claimed, lapsed or not, and reports exactly how many it
// removed, with no page cap (driver.WorkEraser): remove on the work
// collection, under eraseWorkFilter. Claims on the removed items are
// stale from then on. A store whose work collection does not exist yet
// has nothing to erase.
func (d *Driver) EraseWork(ctx context.Context, queue string, f memory.Filter) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := driver.CheckEraseWork(queue, f); err != nil {
		return 0, err
	}
	leave, err := d.enter()
	if err != nil {
		return 0, err
	}
	defer leave()
	n, err := d.remove(ctx, d.workColl(), eraseWorkFilter(queue, f))
	if isMissing(err) {
		return 0, nil
	}
	return n, err
}

// sweepWork deletes the work collection's points left done by Completes
// that did not remove them and the points of EraseWorks that marked them
// and did not finish, staleMark after they were marked; a work collection
// that does not exist has none.
func (d *Driver) sweepWork(ctx context.Context) error {
	cut := qc.PtrOf(float64(time.Now().Add(-staleMark).Unix()))
	stale := &qc.Filter{Should: []*qc.Condition{
		qc.NewFilterAsCondition(&qc.Filter{Must: []*qc.Condition{qc.NewMatchKeyword(wState, stateDone), qc.NewRange(wDoneAt, &qc.Range{Lt: cut})}}),
		qc.NewFilterAsCondition(&qc.Filter{Must: []*qc.Condition{qc.NewMatchBool(fDead, true), qc.NewRange(fDelAt, &qc.Range{Lt: cut})}}),
	}}
	_, err := d.points().Delete(ctx, &qc.DeletePoints{
		CollectionName: d.workColl(), Wait: qc.PtrOf(true), Ordering: strong(),
		Points: qc.NewPointsSelectorFilter(stale),
	})
	if err != nil {
		if err = classify(ctx, err, "qdrant: removing the work queue's leftover points"); isMissing(err) {
			return nil
		}
	}
	return err
}
