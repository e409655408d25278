package qdrantserver

import (
	"context"
	"sort"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// pointsService is the Points gRPC service.
type pointsService struct {
	qdrant.UnimplementedPointsServer
	db *store
}

// Upsert inserts or replaces points whole. The batch is checked first and
// applied only if every point is valid. update_filter and update_mode make
// it conditional (see conditional.go): points they exclude are skipped
// silently, and the result is the same either way.
func (s *pointsService) Upsert(_ context.Context, req *qdrant.UpsertPoints) (*qdrant.PointsOperationResponse, error) {
	if req.GetShardKeySelector() != nil {
		return nil, status.Error(codes.Unimplemented, "qdrantserver: shard keys are not supported")
	}
	if err := validateFilter(req.GetUpdateFilter()); err != nil {
		return nil, err
	}
	var resp *qdrant.PointsOperationResponse
	err := s.db.write(req.GetCollectionName(), func(c *collection) error {
		batch := make([]*point, 0, len(req.GetPoints()))
		for _, ps := range req.GetPoints() {
			p, err := c.newPoint(ps)
			if err != nil {
				return err
			}
			batch = append(batch, p)
		}
		for _, p := range c.conditionalKeep(batch, req.UpdateFilter, req.GetUpdateMode()) {
			if old, ok := c.points[p.id]; ok {
				c.untrack(old)
			}
			c.points[p.id] = p
			c.track(p)
		}
		resp = c.updated(req.Wait)
		return nil
	})
	return resp, err
}

// newPoint checks a point against the collection's vectors.
func (c *collection) newPoint(ps *qdrant.PointStruct) (*point, error) {
	if ps.GetId() == nil {
		return nil, badInput("Point does not have an ID")
	}
	id, err := parseID(ps.GetId())
	if err != nil {
		return nil, err
	}
	p := &point{id: id, payload: fromMap(ps.GetPayload()), dense: map[string][]float32{}, sparse: map[string]sparseVec{}}
	switch o := ps.GetVectors().GetVectorsOptions().(type) {
	case *qdrant.Vectors_Vector:
		if err := c.setVector(p, "", o.Vector); err != nil {
			return nil, err
		}
	case *qdrant.Vectors_Vectors:
		for _, name := range sortedKeys(o.Vectors.GetVectors()) {
			if err := c.setVector(p, name, o.Vectors.GetVectors()[name]); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// setVector checks one vector against its configuration and stores it,
// normalised for Cosine.
func (c *collection) setVector(p *point, name string, v *qdrant.Vector) error {
	var dense []float32
	var sparse *sparseVec
	switch o := v.GetVector().(type) {
	case *qdrant.Vector_Dense:
		dense = o.Dense.GetData()
	case *qdrant.Vector_Sparse:
		sv, err := newSparse(o.Sparse.GetIndices(), o.Sparse.GetValues())
		if err != nil {
			return err
		}
		sparse = &sv
	case nil:
		if v.GetIndices() != nil {
			sv, err := newSparse(v.GetIndices().GetData(), v.GetData())
			if err != nil {
				return err
			}
			sparse = &sv
		} else {
			dense = v.GetData()
		}
	default:
		return status.Error(codes.Unimplemented, "qdrantserver: only dense and sparse vectors are supported")
	}
	if sparse != nil {
		if !c.sparse[name] {
			return badInput("Not existing vector name error: %s", name)
		}
		p.sparse[name] = *sparse
		return nil
	}
	cfg, ok := c.dense[name]
	if !ok {
		return badInput("Not existing vector name error: %s", name)
	}
	if len(dense) != cfg.size {
		return badInput("Vector dimension error: expected dim: %d, got %d", cfg.size, len(dense))
	}
	if cfg.distance == qdrant.Distance_Cosine {
		dense = normalize(dense)
	} else {
		dense = append([]float32(nil), dense...)
	}
	p.dense[name] = dense
	return nil
}

// selected returns the points a selector picks, by ids (those that exist)
// or by filter, in id order.
func (c *collection) selected(sel *qdrant.PointsSelector) ([]*point, error) {
	switch o := sel.GetPointsSelectorOneOf().(type) {
	case *qdrant.PointsSelector_Points:
		ids, err := parseIDs(o.Points.GetIds())
		if err != nil {
			return nil, err
		}
		var out []*point
		for _, id := range ids {
			if p, ok := c.points[id]; ok {
				out = append(out, p)
			}
		}
		return out, nil
	case *qdrant.PointsSelector_Filter:
		return c.filtered(o.Filter)
	}
	return nil, badInput("Malformed PointsSelector type")
}

// filtered returns the points passing a filter, in id order.
func (c *collection) filtered(f *qdrant.Filter) ([]*point, error) {
	if err := validateFilter(f); err != nil {
		return nil, err
	}
	var out []*point
	for _, p := range c.points {
		if checkFilter(f, subject{payload: p.payload, p: p}) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id.less(out[j].id) })
	return out, nil
}

// Delete removes points by ids or by filter.
func (s *pointsService) Delete(_ context.Context, req *qdrant.DeletePoints) (*qdrant.PointsOperationResponse, error) {
	var resp *qdrant.PointsOperationResponse
	err := s.db.write(req.GetCollectionName(), func(c *collection) error {
		ps, err := c.selected(req.GetPoints())
		if err != nil {
			return err
		}
		for _, p := range ps {
			c.untrack(p)
			delete(c.points, p.id)
		}
		resp = c.updated(req.Wait)
		return nil
	})
	return resp, err
}

// Get retrieves points by id, in the order asked, skipping missing ones.
func (s *pointsService) Get(_ context.Context, req *qdrant.GetPoints) (*qdrant.GetResponse, error) {
	resp := &qdrant.GetResponse{}
	err := s.db.read(req.GetCollectionName(), func(c *collection) error {
		ids, err := parseIDs(req.GetIds())
		if err != nil {
			return err
		}
		seen := map[pointID]bool{}
		for _, id := range ids {
			p, ok := c.points[id]
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			resp.Result = append(resp.Result, c.retrieved(p, req.GetWithPayload(), req.GetWithVectors()))
		}
		return nil
	})
	return resp, err
}

// retrieved renders a point for Get and Scroll, which return the payload
// unless told otherwise (Qdrant's default for retrieve and scroll) and no
// vectors.
func (c *collection) retrieved(p *point, wp *qdrant.WithPayloadSelector, wv *qdrant.WithVectorsSelector) *qdrant.RetrievedPoint {
	return &qdrant.RetrievedPoint{Id: p.id.proto(), Payload: selectPayload(wp, true, p.payload), Vectors: c.vectorsOut(p, wv)}
}

// vectorsOut renders a point's vectors as asked: a single vector for a
// collection with one unnamed vector, named vectors otherwise.
func (c *collection) vectorsOut(p *point, wv *qdrant.WithVectorsSelector) *qdrant.VectorsOutput {
	var names map[string]bool
	switch o := wv.GetSelectorOptions().(type) {
	case *qdrant.WithVectorsSelector_Enable:
		if !o.Enable {
			return nil
		}
	case *qdrant.WithVectorsSelector_Include:
		names = map[string]bool{}
		for _, n := range o.Include.GetNames() {
			names[n] = true
		}
	default:
		return nil
	}
	if c.unnamed && len(c.sparse) == 0 {
		if v, ok := p.dense[""]; ok && (names == nil || names[""]) {
			return &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vector{Vector: denseOut(v)}}
		}
		return nil
	}
	out := map[string]*qdrant.VectorOutput{}
	for name, v := range p.dense {
		if names == nil || names[name] {
			out[name] = denseOut(v)
		}
	}
	for name, v := range p.sparse {
		if names == nil || names[name] {
			out[name] = &qdrant.VectorOutput{Vector: &qdrant.VectorOutput_Sparse{Sparse: &qdrant.SparseVector{
				Indices: append([]uint32(nil), v.indices...), Values: append([]float32(nil), v.values...)}}}
		}
	}
	return &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vectors{Vectors: &qdrant.NamedVectorsOutput{Vectors: out}}}
}

func denseOut(v []float32) *qdrant.VectorOutput {
	return &qdrant.VectorOutput{Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: append([]float32(nil), v...)}}}
}

// Count counts the points passing a filter. It always counts exactly,
// whatever the request's exact flag: Qdrant documents exact false as "count
// approximate number of points faster", and an exact count is a valid
// approximation.
func (s *pointsService) Count(_ context.Context, req *qdrant.CountPoints) (*qdrant.CountResponse, error) {
	var n int
	err := s.db.read(req.GetCollectionName(), func(c *collection) error {
		ps, err := c.filtered(req.GetFilter())
		n = len(ps)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &qdrant.CountResponse{Result: &qdrant.CountResult{Count: uint64(n)}}, nil
}

// Scroll pages through the points passing a filter in id order, from the
// offset id on (inclusive), limit 10 by default; NextPageOffset is the id
// the next page starts at, nil on the last page. With order_by it orders by
// a payload key instead (see orderby.go) and never returns NextPageOffset.
func (s *pointsService) Scroll(_ context.Context, req *qdrant.ScrollPoints) (*qdrant.ScrollResponse, error) {
	resp := &qdrant.ScrollResponse{}
	err := s.db.read(req.GetCollectionName(), func(c *collection) error {
		limit := 10
		if req.Limit != nil {
			limit = int(req.GetLimit())
		}
		if limit == 0 {
			return badInput("Validation error in JSON body: [limit: value 0 invalid, must be 1 or larger]")
		}
		if req.OrderBy != nil {
			ps, err := c.scrollOrdered(req, limit)
			resp.Result = ps
			return err
		}
		var from *pointID
		if req.Offset != nil {
			id, err := parseID(req.GetOffset())
			if err != nil {
				return err
			}
			from = &id
		}
		ps, err := c.filtered(req.GetFilter())
		if err != nil {
			return err
		}
		for _, p := range ps {
			if from != nil && p.id.less(*from) {
				continue
			}
			if len(resp.Result) == limit {
				resp.NextPageOffset = p.id.proto()
				break
			}
			resp.Result = append(resp.Result, c.retrieved(p, req.GetWithPayload(), req.GetWithVectors()))
		}
		return nil
	})
	return resp, err
}
