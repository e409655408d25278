package qdrant

import (
	"context"

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

	// Read what the store holds under the batch's ids, and refuse the
	// whole batch before writing anything when another identity holds one.
	ids := make([]*qc.PointId, len(order))
	for n, i := range order {
		ids[n] = qc.NewID(PointID(d.coll, recs[i].Identity.Tenant, recs[i].ID))
	}
	stored, err := d.readOwners(ctx, ids)
	if err != nil {
		return err
	}
	points := make([]*qc.PointStruct, len(order))
	owners := make([]memory.Identity, len(order))
	for n, i := range order {
		r := recs[i]
		version := int64(0)
		if o, ok := stored[pointString(ids[n])]; ok && !o.dead {
			if o.id != r.Identity {
				return driver.HeldByAnother(r.ID)
			}
			version = o.version
		}
		p, err := d.encode(r, version+writes[idKey{r.Identity.Tenant, r.ID}])
		if err != nil {
			return err
		}
		points[n], owners[n] = p, r.Identity
	}

	for _, c := range chunks(points, maxUpsertPoints, maxUpsertBytes) {
		var groups []writerGroup
		at := map[memory.Identity]int{}
		for _, n := range c {
			g, ok := at[owners[n]]
			if !ok {
				g = len(groups)
				at[owners[n]] = g
				groups = append(groups, writerGroup{id: owners[n]})
			}
			groups[g].points = append(groups[g].points, points[n].GetId())
		}
		req := &qc.UpsertPoints{
			CollectionName: d.coll,
			Wait:           qc.PtrOf(true),
			Ordering:       strong(),
			UpdateFilter:   writeFilter(groups),
			Points:         make([]*qc.PointStruct, len(c)),
		}
		for j, n := range c {
			req.Points[j] = points[n]
		}
		if _, err := d.points().Upsert(ctx, req); err != nil {
			return classify(ctx, err, "qdrant: upsert")
		}
	}

	// A point that was absent when read may have been created meanwhile
	// by another identity, whose record the update filter kept: then the
	// id is held by another, and this batch's record under it was not
	// stored.
	after, err := d.readOwners(ctx, ids)
	if err != nil {
		return err
	}
	for n, i := range order {
		if o, ok := after[pointString(ids[n])]; ok && !o.dead && o.id != recs[i].Identity {
			return driver.HeldByAnother(recs[i].ID)
		}
	}
	return nil
}

// owner is what Put reads of a stored point: its identity, version and
// whether a Delete or Sweep has marked it.
type owner struct {
	id      memory.Identity
	version int64
	dead    bool
}

// ownerFields is the payload Put reads.
var ownerFields = func() []string {
	out := []string{fVersion, fDead}
	for _, f := range identityFields {
		out = append(out, f.name)
	}
	return out
}()

// readOwners reads the owners of the points ids that exist, by point id.
func (d *Driver) readOwners(ctx context.Context, ids []*qc.PointId) (map[string]owner, error) {
	out := make(map[string]owner, len(ids))
	for from := 0; from < len(ids); from += maxGetIDs {
		resp, err := d.points().Get(ctx, &qc.GetPoints{
			CollectionName:  d.coll,
			Ids:             ids[from:min(len(ids), from+maxGetIDs)],
			WithPayload:     qc.NewWithPayloadInclude(ownerFields...),
			ReadConsistency: qc.NewReadConsistencyType(qc.ReadConsistencyType_All),
		}, recvOpt)
		if err != nil {
			return nil, classify(ctx, err, "qdrant: reading the batch's ids")
		}
		for _, pt := range resp.GetResult() {
			pr := &payloadReader{p: pt.GetPayload()}
			o := owner{id: pr.identity(), version: pr.int(fVersion)}
			if v, ok := pr.p[fDead].GetKind().(*qc.Value_BoolValue); ok {
				o.dead = v.BoolValue
			} else {
				pr.fail(fDead)
			}
			if pr.bad != "" {
				return nil, errNotRecord(pointString(pt.GetId()), pr.bad)
			}
			out[pointString(pt.GetId())] = o
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
