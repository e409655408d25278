package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
)

// axisRecords returns n facts of tenant t, session s, whose vectors of 8
// dimensions are the i%8-th axis tilted towards the (i+shift)%8-th by
// i/n.
func axisRecords(n, shift int) []memory.Record {
	recs := make([]memory.Record, 0, n)
	for i := range n {
		v := make([]float32, 8)
		v[i%8] = 1
		v[(i+shift)%8] = float32(i) / float32(n)
		recs = append(recs, memory.Record{ID: fmt.Sprintf("r%03d", i), Kind: memory.KindFact,
			Identity: memory.Identity{Tenant: "t", Session: "s"}, Content: "r", Created: searchT0, Vector: v})
	}
	return recs
}

// TestSearchReplacesOldIndex opens a database holding the full-precision
// HNSW index earlier versions of the driver built: the first search
// builds the halfvec index, drops the old one, and reads the new one.
func TestSearchReplacesOldIndex(t *testing.T) {
	requirePgvector(t)
	d, dsn := openFresh(t, postgres.Options{})
	ctx := context.Background()
	recs := axisRecords(40, 3)
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

// TestSearchAnalyses checks that the first search, which builds the
// index, leaves memory_records with the statistics without which the
// planner reads no index.
func TestSearchAnalyses(t *testing.T) {
	requirePgvector(t)
	d, dsn := openFresh(t, postgres.Options{})
	putBatches(t, d, axisRecords(300, 5), 100)
	db := sqlx.MustOpen("postgres", dsn)
	defer db.Close()
	columns := func() int {
		var n int
		if err := db.Get(&n, `SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'memory_records'`); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := columns(); n != 0 {
		t.Fatalf("memory_records has statistics of %d columns before the first search: the test proves nothing", n)
	}
	if _, err := d.Search(context.Background(), tenantQuery("t"), []float32{1, 0, 0, 0, 0, 0.5, 0, 0}, 5); err != nil {
		t.Fatal(err)
	}
	if n := columns(); n == 0 {
		t.Error("the first search built the index and left memory_records without statistics")
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
	recs := unitRecords(rnd, 3000, 32, func(int) memory.Identity { return memory.Identity{Tenant: "t", Session: "s"} })
	putBatches(t, d, recs, 1000)
	if _, err := d.Search(ctx, tenantQuery("t"), unitVector(rnd, 32), 1); err != nil {
		t.Fatalf("first Search: %v", err)
	}
	recall := func(ef, own int) float64 {
		dd := openForced(t, dsn, fmt.Sprintf("-c hnsw.ef_search=%d", own), postgres.Options{EfSearch: ef})
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
	// The connections' own hnsw.ef_search is the opposite of the option
	// each time: the option must win.
	wide, narrow := recall(1000, 1), recall(1, 1000)
	t.Logf("recall@1: %.3f with EfSearch 1000, %.3f with EfSearch 1", wide, narrow)
	if wide < 0.95 || narrow > wide-0.2 {
		t.Errorf("recall@1 is %.3f with EfSearch 1000 and %.3f with EfSearch 1: the option does not reach the search", wide, narrow)
	}
}

// TestSearchLeavesConnection checks that the index scan's parameters a
// search sets last only for its own statement: on the driver's one
// connection, whose own hnsw.ef_search is 33, both settings read as
// before after searches through the index, including one that comes up
// short and searches again exactly.
func TestSearchLeavesConnection(t *testing.T) {
	requirePgvector(t)
	d, dsn := openFresh(t, postgres.Options{})
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(400, 16))
	recs := unitRecords(rnd, 400, 16, func(i int) memory.Identity {
		return memory.Identity{Tenant: "t", Session: fmt.Sprintf("s%d", i%2)}
	})
	putBatches(t, d, recs, 400)
	one := openForced(t, dsn, "-c hnsw.ef_search=33", postgres.Options{MaxConns: 1, EfSearch: 200})
	settings := func(when string) {
		t.Helper()
		var ef, iterative string
		if err := one.DB().QueryRowContext(ctx, `SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan')`).Scan(&ef, &iterative); err != nil {
			t.Fatalf("%s: read the settings: %v", when, err)
		}
		if ef != "33" || iterative != "off" {
			t.Errorf("%s: hnsw.ef_search = %s, hnsw.iterative_scan = %s; want 33 and off, the connection's own", when, ef, iterative)
		}
	}
	vec := unitVector(rnd, 16)
	got, err := one.Search(ctx, tenantQuery("t"), vec, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !one.SearchUsesIndex() {
		t.Fatal("the search did not use the index")
	}
	sameAsReference(t, "broad search", got, bruteForce(recs, tenantQuery("t"), vec, 10, time.Now()))
	settings("after a search")
	q := sessionQuery("t", "", "s1")
	if got, err = one.Search(ctx, q, vec, 300); err != nil {
		t.Fatal(err)
	}
	if len(got) != 200 {
		t.Errorf("a search for 300 of a session's 200 records returned %d", len(got))
	}
	settings("after a search that came up short")
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

// TestSearchShortScopes checks the searches that start without an
// iterative scan. Tenant "big" holds 2,700 of 3,000 random vectors, and
// ten small tenants 30 each; the index is forced. A search of "big" holds
// k rows in its first walk and is never remembered as short, and gives
// the very rows a search starting with an iterative scan gives. A small
// tenant's first search comes up short and is remembered, and its results
// match exact search nearly always.
func TestSearchShortScopes(t *testing.T) {
	requirePgvector(t)
	d, dsn := openFresh(t, postgres.Options{})
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(3000, 16))
	recs := unitRecords(rnd, 3000, 16, func(i int) memory.Identity {
		if i%10 == 0 {
			return memory.Identity{Tenant: fmt.Sprintf("small%d", i/10%10), Session: "s"}
		}
		return memory.Identity{Tenant: "big", Session: "s"}
	})
	putBatches(t, d, recs, 1000)
	if _, err := d.Search(ctx, tenantQuery("big"), unitVector(rnd, 16), 1); err != nil {
		t.Fatalf("first Search: %v", err)
	}
	plain := openForced(t, dsn, "", postgres.Options{})
	iterative := openForced(t, dsn, "", postgres.Options{})
	big := tenantQuery("big")
	iterative.RememberShort(big, 1)
	for i := range 30 {
		vec := unitVector(rnd, 16)
		got, err := plain.Search(ctx, big, vec, 10)
		if err != nil {
			t.Fatal(err)
		}
		want, err := iterative.Search(ctx, big, vec, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, func(a, b driver.Match) bool { return a.Record.ID == b.Record.ID }) {
			t.Fatalf("query %d: a search starting without an iterative scan found %v, one starting with it %v", i, matchIDs(got), matchIDs(want))
		}
	}
	if n := plain.ShortScopes(); n != 0 {
		t.Fatalf("after searches of a tenant holding 90%% of the records, %d scopes are remembered as short", n)
	}

	small := tenantQuery("small3")
	hits, total := 0, 0
	for i := range 20 {
		vec := unitVector(rnd, 16)
		got, err := plain.Search(ctx, small, vec, 10)
		if err != nil {
			t.Fatal(err)
		}
		if n := plain.ShortScopes(); n != 1 {
			t.Fatalf("after %d searches of a tenant holding 1%% of the records, %d scopes are remembered as short, want 1", i+1, n)
		}
		want := bruteForce(recs, small, vec, 10, time.Now())
		if len(got) != len(want) {
			t.Fatalf("search %d of the small tenant: %d results, want %d", i, len(got), len(want))
		}
		for _, m := range got {
			if m.Record.Identity.Tenant != "small3" {
				t.Fatalf("search of small3 returned a record of %s", m.Record.Identity.Tenant)
			}
			total++
			if slices.ContainsFunc(want, func(w driver.Match) bool { return w.Record.ID == m.Record.ID }) {
				hits++
			}
		}
	}
	if r := float64(hits) / float64(total); r < 0.95 {
		t.Errorf("recall@10 of the small tenant's searches is %.3f, want at least 0.95", r)
	}
}

// matchIDs returns the matched records' ids in order.
func matchIDs(ms []driver.Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Record.ID
	}
	return out
}
