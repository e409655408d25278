package qdrantserver

import (
	"context"
	"math"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
)

// distanceCollection has one named vector per distance and four points.
func distanceCollection(t *testing.T) *qdrant.Client {
	t.Helper()
	c := connect(t)
	params := map[string]*qdrant.VectorParams{}
	for name, d := range map[string]qdrant.Distance{"cos": qdrant.Distance_Cosine, "dot": qdrant.Distance_Dot,
		"euc": qdrant.Distance_Euclid, "man": qdrant.Distance_Manhattan} {
		params[name] = &qdrant.VectorParams{Size: 2, Distance: d}
	}
	if err := c.CreateCollection(context.Background(), &qdrant.CreateCollection{CollectionName: "d", VectorsConfig: qdrant.NewVectorsConfigMap(params)}); err != nil {
		t.Fatal(err)
	}
	vecs := map[uint64][]float32{1: {1, 0}, 2: {0, 1}, 3: {1, 1}, 4: {3, 4}}
	for id := uint64(1); id <= 4; id++ {
		v := vecs[id]
		upsert(t, c, "d", &qdrant.PointStruct{Id: qdrant.NewIDNum(id), Payload: qdrant.NewValueMap(map[string]any{"n": int64(id)}),
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"cos": qdrant.NewVector(v...), "dot": qdrant.NewVector(v...),
				"euc": qdrant.NewVector(v...), "man": qdrant.NewVector(v...)})})
	}
	return c
}

func TestDistances(t *testing.T) {
	c := distanceCollection(t)
	ctx := context.Background()
	sqrt2 := math.Sqrt(2)
	cases := []struct {
		using  string
		ids    []string
		scores []float64
	}{
		// Cosine: the dot product of normalised vectors.
		{"cos", []string{"1", "3", "4", "2"}, []float64{1, 1 / sqrt2, 0.6, 0}},
		// Dot: ties (points 1 and 3) by id.
		{"dot", []string{"4", "1", "3", "2"}, []float64{3, 1, 1, 0}},
		// Euclid and Manhattan report distances, smaller first.
		{"euc", []string{"1", "3", "2", "4"}, []float64{0, 1, sqrt2, math.Sqrt(20)}},
		{"man", []string{"1", "3", "2", "4"}, []float64{0, 1, 2, 6}},
	}
	for _, tc := range cases {
		t.Run(tc.using, func(t *testing.T) {
			got := must(c.Query(ctx, &qdrant.QueryPoints{CollectionName: "d", Query: qdrant.NewQuery(1, 0), Using: qdrant.PtrOf(tc.using)}))(t)
			wantScores(t, got, tc.ids, tc.scores)
			res := must(c.GetPointsClient().Search(ctx, &qdrant.SearchPoints{CollectionName: "d", Vector: []float32{1, 0}, VectorName: qdrant.PtrOf(tc.using), Limit: 10}))(t)
			wantScores(t, res.GetResult(), tc.ids, tc.scores)
		})
	}
}

// TestScoreThreshold: "If defined, less similar results will not be
// returned. Score of the returned result might be higher or smaller than the
// threshold depending on the Distance function used."
func TestScoreThreshold(t *testing.T) {
	c := distanceCollection(t)
	ctx := context.Background()
	got := must(c.Query(ctx, &qdrant.QueryPoints{CollectionName: "d", Query: qdrant.NewQuery(1, 0), Using: qdrant.PtrOf("cos"), ScoreThreshold: qdrant.PtrOf(float32(0.65))}))(t)
	wantScores(t, got, []string{"1", "3"}, []float64{1, 1 / math.Sqrt(2)})
	got = must(c.Query(ctx, &qdrant.QueryPoints{CollectionName: "d", Query: qdrant.NewQuery(1, 0), Using: qdrant.PtrOf("euc"), ScoreThreshold: qdrant.PtrOf(float32(1.2))}))(t)
	wantScores(t, got, []string{"1", "3"}, []float64{0, 1})
}

// TestQueryOptions: filter, limit, offset, with_payload and with_vectors; a
// Cosine vector comes back normalised, as Qdrant stores it.
func TestQueryOptions(t *testing.T) {
	c := distanceCollection(t)
	ctx := context.Background()
	got := must(c.Query(ctx, &qdrant.QueryPoints{CollectionName: "d", Query: qdrant.NewQuery(1, 0), Using: qdrant.PtrOf("dot"),
		Filter: &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatchInt("n", 1)}},
		Limit:  qdrant.PtrOf(uint64(2)), Offset: qdrant.PtrOf(uint64(1)),
		WithPayload: qdrant.NewWithPayload(true), WithVectors: qdrant.NewWithVectorsInclude("cos")}))(t)
	wantScores(t, got, []string{"3", "2"}, []float64{1, 0})
	if n := got[0].GetPayload()["n"].GetIntegerValue(); n != 3 {
		t.Fatalf("payload n = %d, want 3", n)
	}
	vs := got[0].GetVectors().GetVectors().GetVectors()
	if len(vs) != 1 {
		t.Fatalf("vectors %v, want only cos", vs)
	}
	v := vs["cos"].GetDenseVector().GetData()
	if math.Abs(float64(v[0])-1/math.Sqrt(2)) > 1e-6 || math.Abs(float64(v[1])-1/math.Sqrt(2)) > 1e-6 {
		t.Fatalf("cos vector %v, want normalised", v)
	}
	// No payload unless asked, for search and query.
	got = must(c.Query(ctx, &qdrant.QueryPoints{CollectionName: "d", Query: qdrant.NewQuery(1, 0), Using: qdrant.PtrOf("dot")}))(t)
	if got[0].GetPayload() != nil || got[0].GetVectors() != nil {
		t.Fatalf("payload or vectors without asking: %v", got[0])
	}
	// No query at all: points in id order, scored 0.
	got = must(c.Query(ctx, &qdrant.QueryPoints{CollectionName: "d", Limit: qdrant.PtrOf(uint64(3))}))(t)
	wantScores(t, got, []string{"1", "2", "3"}, []float64{0, 0, 0})
}

// TestSparse: a sparse query scores the dot product over shared indices;
// Qdrant's SparseVector::score returns "None if the vectors do not
// overlap", so points sharing no index, or without the vector, are not found.
func TestSparse(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "s",
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{"text": {}})}); err != nil {
		t.Fatal(err)
	}
	sp := func(id uint64, idx []uint32, val []float32) *qdrant.PointStruct {
		return &qdrant.PointStruct{Id: qdrant.NewIDNum(id), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"text": qdrant.NewVectorSparse(idx, val)})}
	}
	upsert(t, c, "s", sp(1, []uint32{3, 1}, []float32{2, 1}), sp(2, []uint32{2}, []float32{5}), sp(3, []uint32{7, 3}, []float32{1, 1}),
		&qdrant.PointStruct{Id: qdrant.NewIDNum(4), Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{})})
	got := must(c.Query(ctx, &qdrant.QueryPoints{CollectionName: "s", Query: qdrant.NewQuerySparse([]uint32{3, 7}, []float32{1.5, 2}), Using: qdrant.PtrOf("text")}))(t)
	wantScores(t, got, []string{"3", "1"}, []float64{3.5, 3})
	// Indices must be unique.
	_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "s", Points: []*qdrant.PointStruct{sp(5, []uint32{1, 1}, []float32{1, 2})}})
	wantCode(t, err, codes.InvalidArgument)
}

// TestWrongDimension: a vector of the wrong size is InvalidArgument, on
// upsert and on query.
func TestWrongDimension(t *testing.T) {
	c := distanceCollection(t)
	ctx := context.Background()
	_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: "d", Points: []*qdrant.PointStruct{{Id: qdrant.NewIDNum(9),
		Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"dot": qdrant.NewVector(1, 2, 3)})}}})
	wantCode(t, err, codes.InvalidArgument)
	_, err = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "d", Query: qdrant.NewQuery(1, 2, 3), Using: qdrant.PtrOf("dot")})
	wantCode(t, err, codes.InvalidArgument)
	_, err = c.Query(ctx, &qdrant.QueryPoints{CollectionName: "d", Query: qdrant.NewQuery(1, 2), Using: qdrant.PtrOf("nope")})
	wantCode(t, err, codes.InvalidArgument)
	// The failed upsert wrote nothing.
	if n := must(c.Count(ctx, &qdrant.CountPoints{CollectionName: "d"}))(t); n != 4 {
		t.Fatalf("count %d, want 4", n)
	}
}
