package qdrantserver

import (
	"context"

	"github.com/qdrant/go-client/qdrant"
)

// nearestQuery is a query vector and the vector name it searches.
type nearestQuery struct {
	using  string
	dense  []float32
	sparse *sparseVec
}

// nearest scores candidates against q, keeps those within the threshold
// (a score at least it for Cosine, Dot and sparse vectors, a distance at
// most it for Euclid and Manhattan: "less similar results will not be
// returned") and returns the best limit, best first. Points without the
// vector, and for sparse vectors points sharing no index, are not found.
func (c *collection) nearest(q nearestQuery, cands []*point, threshold *float32, limit int) ([]hit, error) {
	var hs []hit
	smaller := false
	if q.sparse != nil {
		if !c.sparse[q.using] {
			return nil, badInput("Not existing vector name error: %s", q.using)
		}
		for _, p := range cands {
			v, ok := p.sparse[q.using]
			if !ok {
				continue
			}
			if s, overlap := sparseDot(v, *q.sparse); overlap {
				hs = append(hs, hit{p: p, score: s})
			}
		}
	} else {
		cfg, ok := c.dense[q.using]
		if !ok {
			return nil, badInput("Not existing vector name error: %s", q.using)
		}
		if len(q.dense) != cfg.size {
			return nil, badInput("Vector dimension error: expected dim: %d, got %d", cfg.size, len(q.dense))
		}
		query := q.dense
		if cfg.distance == qdrant.Distance_Cosine {
			query = normalize(query)
		}
		smaller = smallerBetter(cfg.distance)
		for _, p := range cands {
			if v, ok := p.dense[q.using]; ok {
				hs = append(hs, hit{p: p, score: distanceOf(cfg.distance, v, query)})
			}
		}
	}
	if threshold != nil {
		kept := hs[:0]
		for _, h := range hs {
			if (smaller && h.score <= *threshold) || (!smaller && h.score >= *threshold) {
				kept = append(kept, h)
			}
		}
		hs = kept
	}
	sortHits(hs, smaller)
	if len(hs) > limit {
		hs = hs[:limit]
	}
	return hs, nil
}

// scored renders hits for Search and Query.
func (c *collection) scored(hs []hit, wp *qdrant.WithPayloadSelector, wv *qdrant.WithVectorsSelector) []*qdrant.ScoredPoint {
	out := make([]*qdrant.ScoredPoint, 0, len(hs))
	for _, h := range hs {
		out = append(out, &qdrant.ScoredPoint{
			Id:      h.p.id.proto(),
			Payload: selectPayload(wp, false, h.p.payload),
			Score:   h.score,
			Vectors: c.vectorsOut(h.p, wv),
		})
	}
	return out
}

// Search is the classic nearest-neighbour search: a dense vector (sparse
// when sparse_indices is set) on vector_name, with filter, limit, offset
// and score_threshold; no payload unless asked.
func (s *pointsService) Search(_ context.Context, req *qdrant.SearchPoints) (*qdrant.SearchResponse, error) {
	resp := &qdrant.SearchResponse{}
	err := s.db.read(req.GetCollectionName(), func(c *collection) error {
		var err error
		resp.Result, err = c.search(req)
		return err
	})
	return resp, err
}

// SearchBatch runs several searches on one collection.
func (s *pointsService) SearchBatch(_ context.Context, req *qdrant.SearchBatchPoints) (*qdrant.SearchBatchResponse, error) {
	resp := &qdrant.SearchBatchResponse{}
	err := s.db.read(req.GetCollectionName(), func(c *collection) error {
		for _, sp := range req.GetSearchPoints() {
			r, err := c.search(sp)
			if err != nil {
				return err
			}
			resp.Result = append(resp.Result, &qdrant.BatchResult{Result: r})
		}
		return nil
	})
	return resp, err
}

func (c *collection) search(req *qdrant.SearchPoints) ([]*qdrant.ScoredPoint, error) {
	q := nearestQuery{using: req.GetVectorName(), dense: req.GetVector()}
	if req.SparseIndices != nil {
		sv, err := newSparse(req.GetSparseIndices().GetData(), req.GetVector())
		if err != nil {
			return nil, err
		}
		q = nearestQuery{using: req.GetVectorName(), sparse: &sv}
	}
	cands, err := c.filtered(req.GetFilter())
	if err != nil {
		return nil, err
	}
	offset := int(req.GetOffset())
	hs, err := c.nearest(q, cands, req.ScoreThreshold, int(req.GetLimit())+offset)
	if err != nil {
		return nil, err
	}
	return c.scored(cut(hs, offset), req.GetWithPayload(), req.GetWithVectors()), nil
}

// cut drops the first offset hits.
func cut(hs []hit, offset int) []hit {
	if offset >= len(hs) {
		return nil
	}
	return hs[offset:]
}
