package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/postgres"
)

// TestSearchReplacesOldIndex opens a database holding the full-precision
// HNSW index earlier versions of the driver built: the first search
// builds the halfvec index, drops the old one, and reads the new one.
func TestSearchReplacesOldIndex(t *testing.T) {
	requirePgvector(t)
	d, dsn := openFresh(t, postgres.Options{})
	ctx := context.Background()
	var recs []memory.Record
	for i := range 40 {
		v := make([]float32, 8)
		v[i%8] = 1
		v[(i+3)%8] = float32(i) / 40
		recs = append(recs, memory.Record{ID: fmt.Sprintf("r%02d", i), Kind: memory.KindFact,
			Identity: memory.Identity{Tenant: "t", Session: "s"}, Content: "r", Created: searchT0, Vector: v})
	}
	putBatches(t, d, recs, 40)
	db := sqlx.MustOpen("postgres", dsn)
	defer db.Close()
	if _, err := db.Exec(`CREATE EXTENSION IF NOT EXISTS vector;
		CREATE INDEX memory_records_embedding_hnsw ON memory_records
			USING hnsw ((embedding::vector(8)) vector_cosine_ops) WHERE embedding IS NOT NULL`); err != nil {
		t.Fatalf("create the old index: %v", err)
	}

	vec := []float32{1, 0, 0, 0.5, 0, 0, 0, 0}
	got, err := d.Search(ctx, tenantQuery("t"), vec, 5)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	sameAsReference(t, "first search", got, bruteForce(recs, tenantQuery("t"), vec, 5, time.Now()))
	var names []string
	if err := db.Select(&names, `SELECT indexname FROM pg_indexes WHERE tablename = 'memory_records' AND indexdef LIKE '%USING hnsw%'`); err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != postgres.HNSWIndex {
		t.Fatalf("HNSW indexes after the first search: %v, want only %s", names, postgres.HNSWIndex)
	}
	forced := openForced(t, dsn, "", postgres.Options{})
	plan, err := forced.ExplainSearch(ctx, tenantQuery("t"), vec, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, postgres.HNSWIndex) {
		t.Errorf("the search does not read the new index:\n%s", plan)
	}
}

// TestSearchExtremeScales stores vectors whose components are near
// float32's largest and smallest normal values beside ordinary ones. The
// index, which holds them scaled to unit length in half precision, takes
// them all, both when it is built over stored rows and when rows are
// inserted after, and a search through it finds each direction at every
// scale, scored by the stored float32 values.
func TestSearchExtremeScales(t *testing.T) {
	requirePgvector(t)
	d, dsn := openFresh(t, postgres.Options{})
	ctx := context.Background()
	scales := []float32{3e38, 1, 2e-38}
	const dims = 8
	rec := func(scale float32, axis int) memory.Record {
		v := make([]float32, dims)
		v[axis] = scale
		v[(axis+1)%dims] = scale / 4
		return memory.Record{ID: fmt.Sprintf("a%d-%g", axis, scale), Kind: memory.KindFact,
			Identity: memory.Identity{Tenant: "t", Session: "s"}, Content: "r", Created: searchT0, Vector: v}
	}
	var before, after []memory.Record
	for _, s := range scales {
		for axis := range dims {
			if axis < dims/2 {
				before = append(before, rec(s, axis))
			} else {
				after = append(after, rec(s, axis))
			}
		}
	}
	putBatches(t, d, before, 100)
	forced := openForced(t, dsn, "", postgres.Options{})
	// The first search builds the index over the stored rows.
	if _, err := forced.Search(ctx, tenantQuery("t"), before[0].Vector, 1); err != nil {
		t.Fatalf("first Search: %v", err)
	}
	if !forced.SearchUsesIndex() {
		t.Fatal("the first search did not build the index")
	}
	putBatches(t, d, after, 100) // inserted into the index
	for axis := range dims {
		q := make([]float32, dims)
		q[axis] = 1
		q[(axis+1)%dims] = 0.25
		got, err := forced.Search(ctx, tenantQuery("t"), q, len(scales))
		if err != nil {
			t.Fatalf("Search along axis %d: %v", axis, err)
		}
		if len(got) != len(scales) {
			t.Fatalf("axis %d: %d results, want %d", axis, len(got), len(scales))
		}
		for _, m := range got {
			if m.Record.Vector[axis] == 0 || math.Abs(m.Score-1) > 1e-6 {
				t.Errorf("axis %d: found %s with score %v, want a record of this axis scoring 1", axis, m.Record.ID, m.Score)
			}
		}
	}
	plan, err := forced.ExplainSearch(ctx, tenantQuery("t"), before[0].Vector, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, postgres.HNSWIndex) {
		t.Errorf("the searches did not read the index:\n%s", plan)
	}
}

// TestSearchEfSearch checks that Options.EfSearch reaches the graph walk:
// over 3,000 random vectors of 32 dimensions, the nearest neighbour found
// with a candidate list of 1,000 is nearly always the true one, and with
// the least list (EfSearch 1, so 2 for k = 1) far less often. Values out
// of range are refused when the driver opens.
func TestSearchEfSearch(t *testing.T) {
	requirePgvector(t)
	d, dsn := openFresh(t, postgres.Options{})
	for _, ef := range []int{-1, 1001} {
		if _, err := postgres.Open(dsn, postgres.Options{EfSearch: ef}); !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("Open with EfSearch %d = %v, want ErrInvalidArgument", ef, err)
		}
	}
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(3000, 32))
	var recs []memory.Record
	for i := range 3000 {
		recs = append(recs, memory.Record{ID: fmt.Sprintf("r%04d", i), Kind: memory.KindFact,
			Identity: memory.Identity{Tenant: "t", Session: "s"}, Content: "r",
			Created: searchT0.Add(time.Duration(i) * time.Millisecond), Vector: unitVector(rnd, 32)})
	}
	putBatches(t, d, recs, 1000)
	if _, err := d.Search(ctx, tenantQuery("t"), unitVector(rnd, 32), 1); err != nil {
		t.Fatalf("first Search: %v", err)
	}
	recall := func(ef int) float64 {
		dd := openForced(t, dsn, "", postgres.Options{EfSearch: ef})
		qr := rand.New(rand.NewPCG(7, 7))
		hits := 0
		const queries = 60
		for range queries {
			vec := unitVector(qr, 32)
			got, err := dd.Search(ctx, tenantQuery("t"), vec, 1)
			if err != nil {
				t.Fatalf("Search with EfSearch %d: %v", ef, err)
			}
			want := bruteForce(recs, tenantQuery("t"), vec, 1, time.Now())
			if len(got) == 1 && got[0].Record.ID == want[0].Record.ID {
				hits++
			}
		}
		return float64(hits) / queries
	}
	wide, narrow := recall(1000), recall(1)
	t.Logf("recall@1: %.3f with EfSearch 1000, %.3f with EfSearch 1", wide, narrow)
	if wide < 0.95 || narrow > wide-0.2 {
		t.Errorf("recall@1 is %.3f with EfSearch 1000 and %.3f with EfSearch 1: the option does not reach the search", wide, narrow)
	}
}

// TestSearchRecallDefault checks DefaultEfSearch on data shaped like
// text embeddings (lowRankVectors: 5,000 vectors of 64 dimensions near a
// 12-dimensional subspace): recall@10 of tenant-wide searches through the
// index is at least 0.95.
func TestSearchRecallDefault(t *testing.T) {
	requirePgvector(t)
	d, _ := openFresh(t, postgres.Options{})
	ctx := context.Background()
	draw := lowRankVectors(64, 12, 0.1)
	rnd := rand.New(rand.NewPCG(5000, 64))
	var recs []memory.Record
	for i := range 5000 {
		recs = append(recs, memory.Record{ID: fmt.Sprintf("r%04d", i), Kind: memory.KindFact,
			Identity: memory.Identity{Tenant: "t", Session: fmt.Sprintf("s%d", i%50)}, Content: "r",
			Created: searchT0.Add(time.Duration(i) * time.Millisecond), Vector: draw(rnd)})
	}
	putBatches(t, d, recs, 1000)
	if _, err := d.Search(ctx, tenantQuery("t"), draw(rnd), 10); err != nil {
		t.Fatalf("first Search: %v", err)
	}
	if !d.SearchUsesIndex() {
		t.Fatal("the first search did not build the index")
	}
	const queries, k = 50, 10
	hits := 0
	for range queries {
		vec := draw(rnd)
		got, err := d.Search(ctx, tenantQuery("t"), vec, k)
		if err != nil {
			t.Fatalf("Search: %v", err)
		}
		want := map[string]bool{}
		for _, m := range bruteForce(recs, tenantQuery("t"), vec, k, time.Now()) {
			want[m.Record.ID] = true
		}
		for _, m := range got {
			if want[m.Record.ID] {
				hits++
			}
		}
	}
	r := float64(hits) / (queries * k)
	t.Logf("recall@%d %.3f over %d queries at EfSearch %d", k, r, queries, postgres.DefaultEfSearch)
	if r < 0.95 {
		t.Errorf("recall@%d is %.3f at the default EfSearch, want at least 0.95", k, r)
	}
}
