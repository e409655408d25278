package qdrant

import (
	"context"
	"slices"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/lexical"
)

// hybridDepth is how many points each of a hybrid search's prefetches
// reads for k results: 4k, at least 20, at most driver.MaxSearchK.
func hybridDepth(k int) int { return min(driver.MaxSearchK, max(20, 4*k)) }

// SearchHybrid returns the k unexpired records matching q that best
// match text and vec together, in one Query API request: a prefetch of
// the text search (the sparse vector, weighed as SearchText weighs it)
// and one of the vector search, each reading hybridDepth(k) points under
// q's filter, fused by Qdrant with Reciprocal Rank Fusion (its default
// k). Score is the fused score; WriterScore is 0. Ties are broken in List
// order, over every point the fusion returns. A text without words, or
// whose words the scope does not hold, leaves the vector prefetch alone;
// on a store without vectors (Options.Dims 0) the text prefetch is alone.
// The arguments are checked as SearchText and Search check them.
//
// Where SearchText and Search rank exactly within their own measures,
// SearchHybrid's prefetches are Qdrant's: a vector prefetch is
// approximate unless Options.ExactSearch is set.
func (d *Driver) SearchHybrid(ctx context.Context, q driver.Query, text string, vec []float32, k int) ([]driver.Match, error) {
	if err := driver.CheckSearch(q, vec, k); err != nil {
		return nil, err
	}
	now, leave, err := d.admit(ctx, driver.CheckSearchText(q, text, k))
	if err != nil {
		return nil, err
	}
	defer leave()
	if d.dims != 0 && len(vec) != d.dims {
		return nil, driver.DimensionMismatch(len(vec), d.dims)
	}
	lq := lexical.NewQuery(text)
	terms, tv, err := d.textQuery(ctx, q.Filter, lq.Terms())
	if err != nil {
		return nil, err
	}
	depth := uint64(hybridDepth(k))
	var prefetch []*qc.PrefetchQuery
	if terms != nil {
		prefetch = append(prefetch, &qc.PrefetchQuery{
			Query:  qc.NewQuerySparse(tv.indices, tv.weights),
			Using:  qc.PtrOf(vText),
			Filter: textFilter(&qc.Filter{}, terms),
			Limit:  qc.PtrOf(depth),
		})
	}
	if d.dims != 0 {
		pf := &qc.PrefetchQuery{Query: qc.NewQueryDense(unit(vec)), Using: qc.PtrOf(vDense), Limit: qc.PtrOf(depth)}
		if d.exact {
			pf.Params = &qc.SearchParams{Exact: qc.PtrOf(true)}
		}
		prefetch = append(prefetch, pf)
	}
	if len(prefetch) == 0 {
		return nil, nil
	}
	// The query's filter applies to every prefetch (Qdrant propagates it).
	pts, err := d.query(ctx, &qc.QueryPoints{
		CollectionName:  d.coll,
		Prefetch:        prefetch,
		Query:           qc.NewQueryRRF(&qc.Rrf{}),
		Filter:          d.listFilter(q, now),
		Limit:           qc.PtrOf(depth * uint64(len(prefetch))),
		WithPayload:     withPayload(nil),
		WithVectors:     withRaw(),
		ReadConsistency: readAll(),
	})
	if err != nil {
		return nil, err
	}
	cands, err := candidates(pts, byQdrant, nil)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(cands, compareCandidates)
	return matches(cands[:min(k, len(cands))])
}
