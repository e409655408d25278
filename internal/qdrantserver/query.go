package qdrantserver

import (
	"context"
	"math"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// defaultLimit is the Query API's limit when none is given, for the query
// and for each prefetch ("Max number of points. Default is 10").
const defaultLimit = 10

// defaultRRFK is Qdrant's RRF constant k: "k is a constant (set to 2 by
// default)".
const defaultRRFK = 2

// Query is the universal Query API: a nearest query (dense or sparse) on
// `using`, or no query (points in id order, scored 0), over the whole
// collection or over the results of prefetches, which may nest and are
// fused by RRF or DBSF or re-scored by a nearest query. The top-level filter
// applies to every prefetch ("Filters are propagated into the leaves" in
// Qdrant's planner); offset applies to the top level only.
func (s *pointsService) Query(_ context.Context, req *qdrant.QueryPoints) (*qdrant.QueryResponse, error) {
	resp := &qdrant.QueryResponse{}
	err := s.db.read(req.GetCollectionName(), func(c *collection) error {
		var err error
		resp.Result, err = c.query(req)
		return err
	})
	return resp, err
}

// QueryBatch runs several queries on one collection.
func (s *pointsService) QueryBatch(_ context.Context, req *qdrant.QueryBatchPoints) (*qdrant.QueryBatchResponse, error) {
	resp := &qdrant.QueryBatchResponse{}
	err := s.db.read(req.GetCollectionName(), func(c *collection) error {
		for _, q := range req.GetQueryPoints() {
			r, err := c.query(q)
			if err != nil {
				return err
			}
			resp.Result = append(resp.Result, &qdrant.BatchResult{Result: r})
		}
		return nil
	})
	return resp, err
}

func (c *collection) query(req *qdrant.QueryPoints) ([]*qdrant.ScoredPoint, error) {
	if req.LookupFrom != nil {
		return nil, status.Error(codes.Unimplemented, "qdrantserver: lookup_from is not supported")
	}
	limit := defaultLimit
	if req.Limit != nil {
		limit = int(req.GetLimit())
	}
	offset := int(req.GetOffset())
	hs, err := c.stage(req.GetPrefetch(), req.Query, req.GetUsing(), req.Filter, req.ScoreThreshold, limit+offset)
	if err != nil {
		return nil, err
	}
	return c.scored(cut(hs, offset), req.GetWithPayload(), req.GetWithVectors()), nil
}

// stage runs one level of a query: over the collection when there are no
// prefetches, otherwise over the prefetches' results.
func (c *collection) stage(prefetches []*qdrant.PrefetchQuery, q *qdrant.Query, using string, filter *qdrant.Filter, threshold *float32, limit int) ([]hit, error) {
	if err := validateFilter(filter); err != nil {
		return nil, err
	}
	if len(prefetches) == 0 {
		return c.leaf(q, using, filter, threshold, limit)
	}
	if q == nil {
		return nil, badInput("cannot have prefetches without a query")
	}
	sources := make([][]hit, 0, len(prefetches))
	for _, pf := range prefetches {
		if pf.LookupFrom != nil {
			return nil, status.Error(codes.Unimplemented, "qdrantserver: lookup_from is not supported")
		}
		pfLimit := defaultLimit
		if pf.Limit != nil {
			pfLimit = int(pf.GetLimit())
		}
		hs, err := c.stage(pf.GetPrefetch(), pf.Query, pf.GetUsing(), andFilters(filter, pf.Filter), pf.ScoreThreshold, pfLimit)
		if err != nil {
			return nil, err
		}
		sources = append(sources, hs)
	}
	switch v := q.GetVariant().(type) {
	case *qdrant.Query_Nearest:
		nq, err := nearestOf(v.Nearest, using)
		if err != nil {
			return nil, err
		}
		// Re-score the union of the prefetched points.
		seen := map[pointID]bool{}
		var cands []*point
		for _, src := range sources {
			for _, h := range src {
				if !seen[h.p.id] {
					seen[h.p.id] = true
					cands = append(cands, h.p)
				}
			}
		}
		return c.nearest(nq, cands, threshold, limit)
	case *qdrant.Query_Fusion:
		var fused []hit
		switch v.Fusion {
		case qdrant.Fusion_RRF:
			fused = rrf(sources, defaultRRFK, nil)
		case qdrant.Fusion_DBSF:
			fused = dbsf(sources)
		default:
			return nil, badInput("Unknown fusion %v", v.Fusion)
		}
		return keep(fused, threshold, limit), nil
	case *qdrant.Query_Rrf:
		k := defaultRRFK
		if v.Rrf.K != nil {
			k = int(v.Rrf.GetK())
		}
		w := v.Rrf.GetWeights()
		if len(w) > 0 && len(w) != len(sources) {
			return nil, badInput("Number of weights in RRF should match number of pre-fetches: got %d, expected %d", len(w), len(sources))
		}
		return keep(rrf(sources, k, w), threshold, limit), nil
	}
	return nil, status.Errorf(codes.Unimplemented, "qdrantserver: query %T is not supported", q.GetVariant())
}

// leaf runs a query directly on the collection's points.
func (c *collection) leaf(q *qdrant.Query, using string, filter *qdrant.Filter, threshold *float32, limit int) ([]hit, error) {
	cands, err := c.filtered(filter)
	if err != nil {
		return nil, err
	}
	switch v := q.GetVariant().(type) {
	case nil:
		// No query: points in id order, each scored 0.
		hs := make([]hit, 0, limit)
		for _, p := range cands {
			if len(hs) == limit {
				break
			}
			hs = append(hs, hit{p: p})
		}
		return hs, nil
	case *qdrant.Query_Nearest:
		nq, err := nearestOf(v.Nearest, using)
		if err != nil {
			return nil, err
		}
		return c.nearest(nq, cands, threshold, limit)
	case *qdrant.Query_Fusion, *qdrant.Query_Rrf:
		return nil, badInput("cannot apply Fusion without prefetches")
	}
	return nil, status.Errorf(codes.Unimplemented, "qdrantserver: query %T is not supported", q.GetVariant())
}

// nearestOf reads a nearest query's vector.
func nearestOf(in *qdrant.VectorInput, using string) (nearestQuery, error) {
	switch v := in.GetVariant().(type) {
	case *qdrant.VectorInput_Dense:
		return nearestQuery{using: using, dense: v.Dense.GetData()}, nil
	case *qdrant.VectorInput_Sparse:
		sv, err := newSparse(v.Sparse.GetIndices(), v.Sparse.GetValues())
		if err != nil {
			return nearestQuery{}, err
		}
		return nearestQuery{using: using, sparse: &sv}, nil
	}
	return nearestQuery{}, status.Errorf(codes.Unimplemented, "qdrantserver: nearest %T is not supported", in.GetVariant())
}

// andFilters is Qdrant's Filter::merge_opts: both filters must hold.
func andFilters(a, b *qdrant.Filter) *qdrant.Filter {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewFilterAsCondition(a), qdrant.NewFilterAsCondition(b)}}
}

// rrf is Qdrant's reciprocal rank fusion: each source adds
// 1 / ((rank+1)/weight + k - 1) to a point at 0-based rank, which is
// 1 / (k + rank) with the default weight 1; a weight of 0 or less adds
// nothing.
func rrf(sources [][]hit, k int, weights []float32) []hit {
	return fuse(sources, func(src, rank int) float32 {
		w := float32(1)
		if weights != nil {
			w = weights[src]
		}
		if w <= 0 {
			return 0
		}
		return 1 / (float32(rank+1)/w + float32(k) - 1)
	})
}

// dbsf is Qdrant's distribution-based score fusion: each source's scores
// are normalised between mean - 3σ and mean + 3σ (sample deviation; a lone
// point, or a source with σ = 0, scores 0.5) and summed per point.
func dbsf(sources [][]hit) []hit {
	norms := make([][]float32, len(sources))
	for si, src := range sources {
		norm := make([]float32, len(src))
		switch len(src) {
		case 0:
		case 1:
			norm[0] = 0.5
		default:
			var mean, agg float64
			for i, h := range src {
				old := float64(h.score) - mean
				mean += old / float64(i+1)
				agg += old * (float64(h.score) - mean)
			}
			sd := math.Sqrt(agg / float64(len(src)-1))
			lo, hi := float32(mean-3*sd), float32(mean+3*sd)
			for i, h := range src {
				if lo == hi {
					norm[i] = 0.5
				} else {
					norm[i] = (h.score - lo) / (hi - lo)
				}
			}
		}
		norms[si] = norm
	}
	return fuse(sources, func(src, rank int) float32 { return norms[src][rank] })
}

// fuse sums, for each point of sources, what score gives it for its rank
// in each source holding it, and returns the points best first.
func fuse(sources [][]hit, score func(src, rank int) float32) []hit {
	scores := map[pointID]*hit{}
	var order []*hit
	for si, src := range sources {
		for rank, h := range src {
			s := score(si, rank)
			if e, ok := scores[h.p.id]; ok {
				e.score += s
				continue
			}
			e := &hit{p: h.p, score: s}
			scores[h.p.id] = e
			order = append(order, e)
		}
	}
	out := make([]hit, len(order))
	for i, e := range order {
		out[i] = *e
	}
	sortHits(out, false)
	return out
}

// keep applies a fused result's threshold (a score at least it) and limit.
func keep(hs []hit, threshold *float32, limit int) []hit {
	if threshold != nil {
		kept := hs[:0]
		for _, h := range hs {
			if h.score >= *threshold {
				kept = append(kept, h)
			}
		}
		hs = kept
	}
	if len(hs) > limit {
		hs = hs[:limit]
	}
	return hs
}
