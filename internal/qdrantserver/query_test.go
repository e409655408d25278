package qdrantserver

import (
	"context"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

// hybridCollection has a dense ("dense", Dot) and a sparse ("sparse")
// vector. The dense query [1,0] ranks 1,2,3,4; the sparse query {0:1}
// ranks 3,1,4 (point 2 shares no index).
func hybridCollection(t *testing.T) *qdrant.Client {
	t.Helper()
	c := connect(t)
	ctx := context.Background()
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "h",
		VectorsConfig:       qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{"dense": {Size: 2, Distance: qdrant.Distance_Dot}}),
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{"sparse": {}})}); err != nil {
		t.Fatal(err)
	}
	p := func(id uint64, dense []float32, idx uint32, val float32) *qdrant.PointStruct {
		return &qdrant.PointStruct{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{
			"dense": qdrant.NewVector(dense...), "sparse": qdrant.NewVectorSparse([]uint32{idx}, []float32{val})})}
	}
	upsert(t, c, "h", p(1, []float32{3, 0}, 0, 2), p(2, []float32{2, 0}, 5, 1), p(3, []float32{1, 0}, 0, 3), p(4, []float32{0, 1}, 0, 1))
	return c
}

func hybridPrefetch() []*qdrant.PrefetchQuery {
	return []*qdrant.PrefetchQuery{
		{Query: qdrant.NewQuery(1, 0), Using: qdrant.PtrOf("dense"), Limit: qdrant.PtrOf(uint64(3))},
		{Query: qdrant.NewQuerySparse([]uint32{0}, []float32{1}), Using: qdrant.PtrOf("sparse"), Limit: qdrant.PtrOf(uint64(3))},
	}
}

// TestRRF pins Qdrant's fusion: "score(d) = sum 1/(k + r_d)" where "k is a
// constant (set to 2 by default)" and r_d is the 0-based rank (Qdrant's
// test: one point alone scores 0.5, "1 / (0 + 2)"). Dense ranks 1,2,3 and
// sparse ranks 3,1,4, so:
//
//	1: 1/2 + 1/3 = 0.8333; 3: 1/4 + 1/2 = 0.75; 2: 1/3; 4: 1/4.
func TestRRF(t *testing.T) {
	c := hybridCollection(t)
	ctx := context.Background()
	got := must(c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Prefetch: hybridPrefetch(), Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF)}))(t)
	wantScores(t, got, []string{"1", "3", "2", "4"}, []float64{1.0/2 + 1.0/3, 1.0/4 + 1.0/2, 1.0 / 3, 1.0 / 4})

	// "To change the value of constant k in the formula, use the dedicated rrf query."
	// k = 1: 1: 1 + 1/2; 3: 1/3 + 1; 2: 1/2; 4: 1/3.
	got = must(c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Prefetch: hybridPrefetch(), Query: qdrant.NewQueryRRF(&qdrant.Rrf{K: qdrant.PtrOf(uint32(1))})}))(t)
	wantScores(t, got, []string{"1", "3", "2", "4"}, []float64{1.5, 1 + 1.0/3, 0.5, 1.0 / 3})

	// Weighted: "score(d) = sum 1/(k + (r_d + 1)/w_r - 1)"; weights 3 and 1, k = 2:
	// dense ranks score 1/(1/3+1) = 0.75, 1/(2/3+1) = 0.6, 1/(1+1) = 0.5.
	got = must(c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Prefetch: hybridPrefetch(), Query: qdrant.NewQueryRRF(&qdrant.Rrf{Weights: []float32{3, 1}})}))(t)
	wantScores(t, got, []string{"1", "3", "2", "4"}, []float64{0.75 + 1.0/3, 0.5 + 0.5, 0.6, 0.25})

	// "The number of weights must match the number of prefetches."
	_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Prefetch: hybridPrefetch(), Query: qdrant.NewQueryRRF(&qdrant.Rrf{Weights: []float32{1}})})
	wantCode(t, err, codes.InvalidArgument)

	// "Using offset parameter only affects the main query."
	got = must(c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Prefetch: hybridPrefetch(), Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF),
		Offset: qdrant.PtrOf(uint64(1)), Limit: qdrant.PtrOf(uint64(2))}))(t)
	wantScores(t, got, []string{"3", "2"}, []float64{0.75, 1.0 / 3})
}

// TestDBSF: DBSF "normalizes the scores of the points in each query, using
// the mean +/- the 3rd standard deviation as limits, and then sums the
// scores". Both prefetches score 3, 2, 1: mean 2, sample deviation 1, so
// limits -1 and 5 and normalised scores 4/6, 3/6, 2/6.
func TestDBSF(t *testing.T) {
	c := hybridCollection(t)
	got := must(c.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "h", Prefetch: hybridPrefetch(), Query: qdrant.NewQueryFusion(qdrant.Fusion_DBSF)}))(t)
	wantScores(t, got, []string{"1", "3", "2", "4"}, []float64{4.0/6 + 3.0/6, 2.0/6 + 4.0/6, 3.0 / 6, 2.0 / 6})
}

// TestPrefetchFilter: the top-level filter applies to every prefetch
// (Qdrant's planner: "Filters are propagated into the leaves"). Without
// points 1: dense ranks 2,3,4 and sparse 3,4, so 3: 1/3 + 1/2; 4: 1/4 + 1/3; 2: 1/2.
func TestPrefetchFilter(t *testing.T) {
	c := hybridCollection(t)
	got := must(c.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "h", Prefetch: hybridPrefetch(), Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF),
		Filter: &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewHasID(qdrant.NewIDNum(1))}}}))(t)
	wantScores(t, got, []string{"3", "4", "2"}, []float64{1.0/3 + 1.0/2, 1.0/4 + 1.0/3, 1.0 / 2})
}

// TestNestedPrefetch: "Perform the prefetch query (or queries), Apply the
// main query over the results of its prefetch(es)." The inner fusion keeps
// points 1 and 3; the main query re-scores only those, so point 2 (dense
// score 2) is not among the results.
func TestNestedPrefetch(t *testing.T) {
	c := hybridCollection(t)
	got := must(c.Query(context.Background(), &qdrant.QueryPoints{CollectionName: "h",
		Prefetch: []*qdrant.PrefetchQuery{{Prefetch: hybridPrefetch(), Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF), Limit: qdrant.PtrOf(uint64(2))}},
		Query:    qdrant.NewQuery(1, 1), Using: qdrant.PtrOf("dense")}))(t)
	wantScores(t, got, []string{"1", "3"}, []float64{3, 1})
}

// TestQueryErrors: Qdrant's planner answers "cannot apply Fusion without
// prefetches" and "cannot have prefetches without a query".
func TestQueryErrors(t *testing.T) {
	c := hybridCollection(t)
	ctx := context.Background()
	_, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Query: qdrant.NewQueryFusion(qdrant.Fusion_RRF)})
	wantCode(t, err, codes.InvalidArgument)
	_, err = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "h", Prefetch: hybridPrefetch()})
	wantCode(t, err, codes.InvalidArgument)
	_, err = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "missing", Query: qdrant.NewQuery(1, 0)})
	wantCode(t, err, codes.NotFound)
}
