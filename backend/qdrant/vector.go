package qdrant

import (
	"context"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/vecmath"
)

// Search returns the k unexpired records matching q nearest to vec by
// cosine similarity; see driver.VectorSearcher and the package
// documentation.
func (d *Driver) Search(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.Match, error) {
	cands, err := d.nearest(ctx, q, vec, k, nil)
	if err != nil || cands == nil {
		return nil, err
	}
	return matches(cands)
}

// RankVector is Search with each match's driver.Ref in place of its
// record (driver.VectorRanker): it reads only the fields of a Ref and the
// vector of each point.
func (d *Driver) RankVector(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.RefMatch, error) {
	cands, err := d.nearest(ctx, q, vec, k, refFields)
	if err != nil || cands == nil {
		return nil, err
	}
	return refMatches(cands)
}

// nearest runs a vector search, reading the payload keys include (nil:
// a record's). Qdrant ranks the points by the float32 cosine of their
// normalised vectors; nearest scores each point it reads again, in
// float64 from the record's vector as written (vRaw), as the contract's cosine
// similarity, and ranks by that (rank, with the slack float32 rounding
// allows).
func (d *Driver) nearest(ctx context.Context, q driver.Query, vec []float32, k int, include []string) ([]candidate, error) {
	now, leave, err := d.admit(ctx, driver.CheckSearch(q, vec, k))
	if err != nil {
		return nil, err
	}
	defer leave()
	if d.dims == 0 {
		return nil, nil // a store without vectors: nothing is near anything
	}
	if len(vec) != d.dims {
		return nil, driver.DimensionMismatch(len(vec), d.dims)
	}
	req := &qc.QueryPoints{
		CollectionName:  d.coll,
		Query:           qc.NewQueryDense(unit(vec)),
		Using:           qc.PtrOf(vDense),
		Filter:          d.listFilter(q, now),
		WithPayload:     withPayload(include),
		WithVectors:     withRaw(),
		ReadConsistency: readAll(),
	}
	if d.exact {
		req.Params = &qc.SearchParams{Exact: qc.PtrOf(true)}
	}
	score := func(c *candidate) error {
		v := rawVector(c.pt.GetVectors())
		if len(v) != len(vec) {
			return errNotRecord(pointString(c.pt.GetId()), "vector "+vRaw)
		}
		c.score = vecmath.Cosine(v, vec)
		return nil
	}
	return d.rank(ctx, req, k, score, cosineSlack(d.dims))
}

// cosineSlack bounds how far Qdrant's float32 cosine of two unit vectors
// of dims values may be from the float64 one: the rounding of each
// product and sum (dims units in the last place of a float32, 2^-24
// each, doubled), and of the normalisations.
func cosineSlack(dims int) float64 {
	return 1e-6 + 2*float64(dims)*0x1p-24
}
