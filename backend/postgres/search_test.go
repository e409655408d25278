package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
	"github.com/agentmem/memory/internal/pgtest"
)

// searchT0 is the creation time the search tests start from.
var searchT0 = time.Date(2025, 6, 1, 12, 0, 0, 123456789, time.UTC)

// logRecorder is a slog.Handler that keeps every record.
type logRecorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}

func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecorder) WithGroup(string) slog.Handler      { return h }

// count returns how many records of level carry substr in their message.
func (h *logRecorder) count(level slog.Level, substr string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.recs {
		if r.Level == level && strings.Contains(r.Message, substr) {
			n++
		}
	}
	return n
}

// unitRecords returns n facts with random unit vectors of dims
// dimensions drawn from rnd: ids r0000 upward, created a millisecond
// apart from searchT0, each in the identity that identity gives for its
// index.
func unitRecords(rnd *rand.Rand, n, dims int, identity func(i int) memory.Identity) []memory.Record {
	recs := make([]memory.Record, n)
	for i := range recs {
		recs[i] = memory.Record{ID: fmt.Sprintf("r%04d", i), Kind: memory.KindFact, Identity: identity(i), Content: "r",
			Created: searchT0.Add(time.Duration(i) * time.Millisecond), Vector: unitVector(rnd, dims)}
	}
	return recs
}

// unitVector returns a random vector of dims normal values scaled to
// unit length.
func unitVector(rnd *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var s float64
	for i := range v {
		x := rnd.NormFloat64()
		v[i] = float32(x)
		s += x * x
	}
	s = math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) / s)
	}
	return v
}

// refCosine is the tests' own cosine similarity, in float64.
func refCosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// bruteForce is the reference search over recs: the live records q
// matches that carry a vector, by similarity descending, then newest
// first, then by id descending.
func bruteForce(recs []memory.Record, q driver.Query, vec []float32, k int, now time.Time) []driver.Match {
	var out []driver.Match
	for _, r := range recs {
		if r.Vector == nil || r.Expired(now) || !q.Matches(r) {
			continue
		}
		out = append(out, driver.Match{Record: r, Score: refCosine(r.Vector, vec)})
	}
	slices.SortFunc(out, func(a, b driver.Match) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		if c := b.Record.Created.Compare(a.Record.Created); c != 0 {
			return c
		}
		return strings.Compare(b.Record.ID, a.Record.ID)
	})
	return out[:min(k, len(out))]
}

// checkResult checks that got holds live records q matches, with correct
// scores, in the contract's order.
func checkResult(t *testing.T, what string, got []driver.Match, q driver.Query, vec []float32, now time.Time) {
	t.Helper()
	for i, m := range got {
		if !q.Matches(m.Record) || m.Record.Expired(now) || m.Record.Vector == nil {
			t.Errorf("%s: result %d (%s of %+v) is outside the query", what, i, m.Record.ID, m.Record.Identity)
		}
		if ref := refCosine(m.Record.Vector, vec); math.Abs(ref-m.Score) > 1e-9 {
			t.Errorf("%s: %s has score %v, its cosine similarity is %v", what, m.Record.ID, m.Score, ref)
		}
		if i > 0 {
			p := got[i-1]
			if m.Score > p.Score || m.Score == p.Score && (m.Record.Created.After(p.Record.Created) ||
				m.Record.Created.Equal(p.Record.Created) && m.Record.ID > p.Record.ID) {
				t.Errorf("%s: results %d and %d are out of order", what, i-1, i)
			}
		}
	}
}

// sameAsReference checks that got is exactly the reference result: the
// same record ids in the same order, with scores within 1e-9.
func sameAsReference(t *testing.T, what string, got, want []driver.Match) {
	t.Helper()
	onlyIDs := cmpopts.IgnoreFields(memory.Record{}, "Kind", "Identity", "Label", "Key", "Content", "Metadata", "Created", "Expires", "Tokens", "Version", "Vector")
	if diff := cmp.Diff(want, got, onlyIDs, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("%s: results (-want +got):\n%s", what, diff)
	}
}

// putBatches stores recs in batches of size.
func putBatches(t testing.TB, d driver.Driver, recs []memory.Record, size int) {
	t.Helper()
	for len(recs) > 0 {
		n := min(size, len(recs))
		if err := d.Put(context.Background(), recs[:n]); err != nil {
			t.Fatalf("Put: %v", err)
		}
		recs = recs[n:]
	}
}

func sessionQuery(tenant, user, session string) driver.Query {
	return driver.Query{Filter: memory.Filter{
		Match:    memory.FieldTenant | memory.FieldUser | memory.FieldSession,
		Identity: memory.Identity{Tenant: tenant, User: user, Session: session},
	}}
}

func userQuery(tenant, user string) driver.Query {
	return driver.Query{Filter: memory.Filter{
		Match:    memory.FieldTenant | memory.FieldUser,
		Identity: memory.Identity{Tenant: tenant, User: user},
	}}
}

// indexCount returns how many HNSW indexes db has on memory_records,
// whatever their names.
func indexCount(t *testing.T, db *sqlx.DB) int {
	t.Helper()
	var n int
	if err := db.Get(&n, `SELECT count(*) FROM pg_indexes WHERE tablename = 'memory_records' AND indexdef LIKE '%USING hnsw%'`); err != nil {
		t.Fatal(err)
	}
	return n
}

// requirePgvector skips t unless the shared cluster has pgvector, or
// fails it when pgtest.RequireEnv is set, as tests needing a server do.
func requirePgvector(t *testing.T) {
	t.Helper()
	admin, err := sqlx.Open("postgres", sharedCluster(t).DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var n int
	if err := admin.Get(&n, `SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'`); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		msg := fmt.Sprintf("the test cluster has no pgvector: set %s to the bin directory scripts/pgvector-prefix prints", pgtest.BinEnv)
		if os.Getenv(pgtest.RequireEnv) == "" {
			t.Skip(msg + " (or set " + pgtest.RequireEnv + " to make this a failure)")
		}
		t.Fatal(msg)
	}
}

// TestSearchLargeTable searches a table of 50,000 records, 5,000 of them
// with random unit vectors of 64 dimensions in one tenant: recall@10
// against brute force is at least 0.95 for tenant-wide and per-user
// searches; a tenant-wide search reads the HNSW index; a one-session
// search reads its scope's own index, not the table, and is exact.
// Random vectors have no neighbourhood structure and need a wider
// candidate list than DefaultEfSearch, which is chosen for data shaped
// like embeddings (TestSearchRecallDefault): the driver runs with
// EfSearch 100 (at 60, recall here was 0.93).
func TestSearchLargeTable(t *testing.T) {
	requirePgvector(t)
	log := &logRecorder{}
	d, dsn := openFresh(t, postgres.Options{Logger: slog.New(log), EfSearch: 100})
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(1, 64))
	const dims, n, sessions, users = 64, 5000, 250, 10
	var recs []memory.Record
	for i := range n {
		recs = append(recs, memory.Record{
			ID: fmt.Sprintf("v%05d", i), Kind: memory.KindFact,
			Identity: memory.Identity{Tenant: "recall", User: fmt.Sprintf("u%d", i%users), Session: fmt.Sprintf("s%03d", i%sessions)},
			Content:  "v", Created: searchT0.Add(time.Duration(i) * time.Millisecond), Vector: unitVector(rnd, dims),
		})
	}
	putBatches(t, d, recs, 1000)
	var bulk []memory.Record
	for i := range 45000 {
		bulk = append(bulk, memory.Record{
			ID: fmt.Sprintf("b%05d", i), Kind: memory.KindTurn,
			Identity: memory.Identity{Tenant: "bulk", User: "u", Session: fmt.Sprintf("s%03d", i%900)},
			Content:  "no vector", Created: searchT0,
		})
	}
	putBatches(t, d, bulk, 5000)

	// The first search builds the index over the 5,000 vectors.
	start := time.Now()
	if _, err := d.Search(ctx, tenantQuery("recall"), unitVector(rnd, dims), 10); err != nil {
		t.Fatalf("first Search: %v", err)
	}
	t.Logf("first search, building the index over %d vectors: %v", n, time.Since(start))
	if !d.SearchUsesIndex() {
		t.Fatal("the first search did not build the HNSW index")
	}
	if got := log.count(slog.LevelInfo, "built the vector index"); got != 1 {
		t.Errorf("%d log records of the index build, want 1", got)
	}
	db := sqlx.MustOpen("postgres", dsn)
	defer db.Close()
	if got := indexCount(t, db); got != 1 {
		t.Fatalf("%d HNSW indexes, want 1", got)
	}
	if _, err := db.Exec("ANALYZE memory_records"); err != nil {
		t.Fatal(err)
	}

	recall := func(what string, q func(i int) driver.Query) {
		const queries, k = 50, 10
		hits := 0
		var took time.Duration
		for i := range queries {
			vec := unitVector(rnd, dims)
			qq := q(i)
			start := time.Now()
			got, err := d.Search(ctx, qq, vec, k)
			took += time.Since(start)
			if err != nil {
				t.Fatalf("%s: Search: %v", what, err)
			}
			checkResult(t, what, got, qq, vec, time.Now())
			want := bruteForce(recs, qq, vec, k, time.Now())
			if len(got) != len(want) {
				t.Errorf("%s: %d results, want %d", what, len(got), len(want))
			}
			ids := map[string]bool{}
			for _, m := range want {
				ids[m.Record.ID] = true
			}
			for _, m := range got {
				if ids[m.Record.ID] {
					hits++
				}
			}
		}
		r := float64(hits) / (queries * k)
		t.Logf("%s: recall@%d %.3f over %d queries, %v per search", what, k, r, queries, took/queries)
		if r < 0.95 {
			t.Errorf("%s: recall@%d is %.3f, want at least 0.95", what, k, r)
		}
	}
	recall("tenant-wide", func(int) driver.Query { return tenantQuery("recall") })
	recall("one user", func(i int) driver.Query { return userQuery("recall", fmt.Sprintf("u%d", i%users)) })

	vec := unitVector(rnd, dims)
	plan, err := d.ExplainSearch(ctx, tenantQuery("recall"), vec, 10)
	if err != nil {
		t.Fatalf("ExplainSearch: %v", err)
	}
	if !strings.Contains(plan, postgres.HNSWIndex) {
		t.Errorf("a tenant-wide search over 5,000 vectors does not read the HNSW index:\n%s", plan)
	}

	q := sessionQuery("recall", "u7", "s007")
	plan, err = d.ExplainSearch(ctx, q, vec, 10)
	if err != nil {
		t.Fatalf("ExplainSearch: %v", err)
	}
	t.Logf("plan of a one-session search:\n%s", plan)
	if strings.Contains(plan, "Seq Scan") || !strings.Contains(plan, "memory_records_session") {
		t.Errorf("a one-session search does not read the session index alone:\n%s", plan)
	}
	got, err := d.Search(ctx, q, vec, 10)
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	sameAsReference(t, "one session", got, bruteForce(recs, q, vec, 10, time.Now()))
}

// openForced opens a driver on dsn whose server sessions find sorting so
// costly that every search the HNSW index can serve reads it, however
// selective its filter; extra adds more server settings.
func openForced(t *testing.T, dsn, extra string, opt postgres.Options) *postgres.Driver {
	t.Helper()
	d, err := postgres.Open(dsn+" options='-c enable_sort=off "+extra+"'", opt)
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// TestSearchIdenticalVectors stores 2,400 records with one and the same
// vector across three tenants (two sharing a prefix), four users and
// eight sessions, so that only the scope filter separates them. Every
// search, at every level and however it is planned, returns k records
// of the caller's scope. Forced onto the HNSW index, and with the index
// scan cut short (hnsw.max_scan_tuples), it still returns k.
func TestSearchIdenticalVectors(t *testing.T) {
	requirePgvector(t)
	d, dsn := openFresh(t, postgres.Options{})
	same := []float32{0.5, -1, 0.25, 2, 0, 1, -0.75, 0.125}
	tenants := []string{"iso", "iso-x", "other"}
	var recs []memory.Record
	for _, tenant := range tenants {
		for i := range 800 {
			recs = append(recs, memory.Record{
				ID: fmt.Sprintf("%s-%04d", tenant, i), Kind: memory.KindFact,
				Identity: memory.Identity{Tenant: tenant, User: fmt.Sprintf("u%d", i%4), Session: fmt.Sprintf("s%d", i%8)},
				Content:  "same", Created: searchT0.Add(time.Duration(i%13) * time.Second), Vector: same,
			})
		}
	}
	putBatches(t, d, recs, 1000)
	db := sqlx.MustOpen("postgres", dsn)
	defer db.Close()

	drivers := []struct {
		what string
		d    *postgres.Driver
	}{
		{"planner's choice", d},
		{"forced onto the index", openForced(t, dsn, "", postgres.Options{})},
		{"index scan cut short", openForced(t, dsn, "-c hnsw.max_scan_tuples=5", postgres.Options{})},
	}
	ctx := context.Background()
	for _, dr := range drivers {
		for _, tenant := range tenants {
			for _, q := range []driver.Query{
				tenantQuery(tenant),
				userQuery(tenant, "u1"),
				sessionQuery(tenant, "u1", "s5"),
			} {
				for _, k := range []int{1, 10, 100} {
					what := fmt.Sprintf("%s, %+v, k=%d", dr.what, q.Filter, k)
					got, err := dr.d.Search(ctx, q, same, k)
					if err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					checkResult(t, what, got, q, same, time.Now())
					if want := len(bruteForce(recs, q, same, k, time.Now())); len(got) != want {
						t.Errorf("%s: %d results, want %d", what, len(got), want)
					}
				}
			}
		}
		if !dr.d.SearchUsesIndex() {
			t.Errorf("%s: the driver does not use the HNSW index", dr.what)
		}
	}
	plan, err := drivers[1].d.ExplainSearch(ctx, sessionQuery("iso", "u1", "s5"), same, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, postgres.HNSWIndex) {
		t.Errorf("the forced driver's one-session search does not read the HNSW index:\n%s", plan)
	}
	if got := indexCount(t, db); got != 1 {
		t.Errorf("%d HNSW indexes, want 1", got)
	}
}

// TestSearchFiltersInsideSearch puts the records nearest the query out of
// reach by kind, key or expiry, in greater number than the index's scan
// window, and checks that the search still returns k records that pass,
// the same as brute force, whether or not the search reads the index.
func TestSearchFiltersInsideSearch(t *testing.T) {
	requirePgvector(t)
	now := searchT0.Add(time.Hour)
	clock := func() time.Time { return now }
	d, dsn := openFresh(t, postgres.Options{Clock: clock})
	rnd := rand.New(rand.NewPCG(2, 16))
	const dims = 16
	query := unitVector(rnd, dims)
	near := func(i int) []float32 { // close to query
		v := unitVector(rnd, dims)
		for j := range v {
			v[j] = query[j] + 0.05*v[j]
		}
		return v
	}
	id := memory.Identity{Tenant: "filters", User: "u", Session: "s"}
	var recs []memory.Record
	for i := range 1500 {
		r := memory.Record{ID: fmt.Sprintf("near-%04d", i), Kind: memory.KindFact, Identity: id, Key: "k",
			Content: "near", Created: searchT0, Vector: near(i)}
		switch i % 3 {
		case 0:
			r.Kind = memory.KindTurn // excluded by kind
		case 1:
			r.Key = "other" // excluded by key
		case 2:
			r.Expires = searchT0.Add(time.Minute) // expired at now
		}
		recs = append(recs, r)
	}
	for i := range 300 {
		recs = append(recs, memory.Record{ID: fmt.Sprintf("far-%03d", i), Kind: memory.KindFact, Identity: id, Key: "k",
			Content: "far", Created: searchT0.Add(time.Duration(i) * time.Second), Vector: unitVector(rnd, dims)})
	}
	putBatches(t, d, recs, 1000)
	q := sessionQuery("filters", "u", "s")
	q.Kinds = []memory.Kind{memory.KindFact, memory.KindDocument}
	q.Key = "k"
	ctx := context.Background()
	for _, dr := range []struct {
		what string
		d    *postgres.Driver
	}{
		{"planner's choice", d},
		{"forced onto the index", openForced(t, dsn, "", postgres.Options{Clock: clock})},
		{"index scan cut short", openForced(t, dsn, "-c hnsw.max_scan_tuples=100", postgres.Options{Clock: clock})},
	} {
		for _, k := range []int{10, 50} {
			what := fmt.Sprintf("%s, k=%d", dr.what, k)
			got, err := dr.d.Search(ctx, q, query, k)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			checkResult(t, what, got, q, query, now)
			for _, m := range got {
				if m.Record.Content != "far" {
					t.Errorf("%s: %s passed the filter", what, m.Record.ID)
				}
			}
			want := bruteForce(recs, q, query, k, now)
			if len(got) != k {
				t.Errorf("%s: %d results, want %d", what, len(got), k)
			}
			hits := 0
			for _, m := range want {
				if slices.ContainsFunc(got, func(g driver.Match) bool { return g.Record.ID == m.Record.ID }) {
					hits++
				}
			}
			if float64(hits) < 0.9*float64(k) {
				t.Errorf("%s: %d of the %d nearest records passing the filter found", what, hits, k)
			}
		}
	}
}

// TestSearchErrors covers an empty store, dimension mismatches (on the
// driver that fixed the dimension and on another that has not cached
// it), a cancelled context and a closed driver.
func TestSearchErrors(t *testing.T) {
	d, dsn := openFresh(t, postgres.Options{})
	ctx := context.Background()
	q := tenantQuery("t")
	for _, dims := range []int{1, 8, 3000} {
		v := make([]float32, dims)
		v[0] = 1
		if got, err := d.Search(ctx, q, v, 5); err != nil || len(got) != 0 {
			t.Errorf("Search of an empty store with %d dimensions: %d results, %v", dims, len(got), err)
		}
	}
	rec := memory.Record{ID: "a", Kind: memory.KindFact, Identity: memory.Identity{Tenant: "t"}, Content: "a",
		Created: searchT0, Vector: []float32{1, 2, 3, 4, 5, 6, 7, 8}}
	if err := d.Put(ctx, []memory.Record{rec}); err != nil {
		t.Fatal(err)
	}
	other, err := postgres.Open(dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, dr := range []*postgres.Driver{d, other} {
		for _, v := range [][]float32{{1, 2, 3, 4}, make9f(), {1}} {
			_, err := dr.Search(ctx, q, v, 5)
			if !errors.Is(err, memory.ErrInvalidArgument) {
				t.Errorf("Search with %d dimensions in a store of 8: %v, want ErrInvalidArgument", len(v), err)
			}
		}
		got, err := dr.Search(ctx, q, rec.Vector, 5)
		if err != nil || len(got) != 1 || got[0].Record.ID != "a" || math.Abs(got[0].Score-1) > 1e-12 {
			t.Errorf("Search for the one record: %+v, %v", got, err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := d.Search(cancelled, q, rec.Vector, 5); err != context.Canceled {
		t.Errorf("Search with a cancelled context: %v, want context.Canceled", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Search(ctx, q, rec.Vector, 5); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("Search after Close: %v, want ErrClosed", err)
	}
}

func make9f() []float32 { return []float32{1, 2, 3, 4, 5, 6, 7, 8, 9} }

// TestSearchConcurrentFirstSearches starts the first searches of two
// replicas at once: every search succeeds and the index is built once.
func TestSearchConcurrentFirstSearches(t *testing.T) {
	requirePgvector(t)
	d, dsn := openFresh(t, postgres.Options{})
	rnd := rand.New(rand.NewPCG(3, 8))
	recs := unitRecords(rnd, 500, 32, func(i int) memory.Identity {
		return memory.Identity{Tenant: "t", Session: fmt.Sprintf("s%d", i%5)}
	})
	putBatches(t, d, recs, 500)
	other, err := postgres.Open(dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	vec := unitVector(rnd, 32)
	want := bruteForce(recs, tenantQuery("t"), vec, 10, time.Now())
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		dr := []*postgres.Driver{d, other}[i%2]
		wg.Go(func() {
			<-start
			got, err := dr.Search(context.Background(), tenantQuery("t"), vec, 10)
			if err == nil && len(got) != len(want) {
				err = fmt.Errorf("%d results, want %d", len(got), len(want))
			}
			errs <- err
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent first search: %v", err)
		}
	}
	db := sqlx.MustOpen("postgres", dsn)
	defer db.Close()
	if got := indexCount(t, db); got != 1 {
		t.Errorf("%d HNSW indexes, want 1", got)
	}
	if !d.SearchUsesIndex() || !other.SearchUsesIndex() {
		t.Error("a replica does not use the index")
	}
}

// TestSearchBeyondIndexDims searches a store of 4,096 dimensions, more
// than the HNSW index takes: no index is built, and the server's exact
// search equals brute force.
func TestSearchBeyondIndexDims(t *testing.T) {
	requirePgvector(t)
	d, dsn := openFresh(t, postgres.Options{})
	rnd := rand.New(rand.NewPCG(4, 4096))
	var recs []memory.Record
	for i := range 200 {
		recs = append(recs, memory.Record{ID: fmt.Sprintf("r%03d", i), Kind: memory.KindFact,
			Identity: memory.Identity{Tenant: "t", Session: fmt.Sprintf("s%d", i%2)}, Content: "r",
			Created: searchT0.Add(time.Duration(i%10) * time.Second), Vector: unitVector(rnd, memory.MaxVectorDims)})
	}
	putBatches(t, d, recs, 100)
	for i := range 5 {
		vec := unitVector(rnd, memory.MaxVectorDims)
		q := []driver.Query{tenantQuery("t"), sessionQuery("t", "", "s1")}[i%2]
		got, err := d.Search(context.Background(), q, vec, 10)
		if err != nil {
			t.Fatalf("Search: %v", err)
		}
		sameAsReference(t, fmt.Sprintf("search %d", i), got, bruteForce(recs, q, vec, 10, time.Now()))
	}
	db := sqlx.MustOpen("postgres", dsn)
	defer db.Close()
	if got := indexCount(t, db); got != 0 {
		t.Errorf("%d HNSW indexes for 4,096 dimensions, want none", got)
	}
	if d.SearchUsesIndex() {
		t.Error("the driver sets index parameters without an index")
	}
}

// exactFallback stores random records in the database dsn names through
// a driver that cannot have pgvector, and checks that several searches
// equal brute force and that the warning is logged exactly once.
func exactFallback(t *testing.T, dsn string) {
	t.Helper()
	log := &logRecorder{}
	now := searchT0.Add(time.Minute)
	d, err := postgres.Open(dsn, postgres.Options{Logger: slog.New(log), Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	defer d.Close()
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(5, 24))
	const dims = 24
	kinds := []memory.Kind{memory.KindFact, memory.KindTurn, memory.KindDocument}
	var recs []memory.Record
	for i := range 1200 {
		r := memory.Record{
			ID: fmt.Sprintf("r%04d", i), Kind: kinds[rnd.IntN(len(kinds))],
			Identity: memory.Identity{Tenant: []string{"a", "b"}[rnd.IntN(2)], User: fmt.Sprintf("u%d", rnd.IntN(3)), Session: fmt.Sprintf("s%d", rnd.IntN(4))},
			Key:      fmt.Sprintf("k%d", rnd.IntN(3)), Content: `"r"`, Created: searchT0.Add(time.Duration(rnd.IntN(100)) * time.Second),
		}
		if rnd.IntN(10) > 0 {
			r.Vector = unitVector(rnd, dims)
		}
		if rnd.IntN(6) == 0 {
			r.Expires = searchT0.Add(time.Duration(rnd.IntN(120)) * time.Second)
		}
		recs = append(recs, r)
	}
	// Some exact ties: copies of one vector, where List order decides.
	recs[0].Vector = unitVector(rnd, dims)
	for i := range 30 {
		recs[i].Vector = recs[0].Vector
		recs[i].Identity.Tenant = "a"
		recs[i].Expires = time.Time{}
	}
	putBatches(t, d, recs, 500)

	queries := []driver.Query{
		tenantQuery("a"),
		tenantQuery("b"),
		userQuery("a", "u1"),
		sessionQuery("b", "u2", "s3"),
		{Filter: tenantQuery("a").Filter, Kinds: []memory.Kind{memory.KindFact}, Key: "k1"},
		{Filter: tenantQuery("b").Filter, IDs: []string{"r0001", "r0100", "r0200", "r0300", "r0400", "r0500"}},
	}
	for i := range 12 {
		q := queries[i%len(queries)]
		vec := unitVector(rnd, dims)
		if i == 0 {
			vec = recs[0].Vector
		}
		for _, k := range []int{1, 10, 40} {
			got, err := d.Search(ctx, q, vec, k)
			if err != nil {
				t.Fatalf("Search %d: %v", i, err)
			}
			what := fmt.Sprintf("search %d (%+v), k=%d", i, q.Filter, k)
			checkResult(t, what, got, q, vec, now)
			sameAsReference(t, what, got, bruteForce(recs, q, vec, k, now))
		}
	}
	if got := log.count(slog.LevelWarn, "pgvector"); got != 1 {
		t.Errorf("%d warnings that pgvector is missing over 36 searches, want exactly 1", got)
	}
	if d.SearchUsesIndex() {
		t.Error("the driver claims an index without pgvector")
	}
	// The failed CREATE EXTENSION left nothing behind: writes and reads go on.
	extra := memory.Record{ID: "extra", Kind: memory.KindFact, Identity: memory.Identity{Tenant: "a"}, Content: "x",
		Created: searchT0, Vector: unitVector(rnd, dims)}
	if err := d.Put(ctx, []memory.Record{extra}); err != nil {
		t.Fatalf("Put after the fallback: %v", err)
	}
	got, err := d.Search(ctx, tenantQuery("a"), extra.Vector, 1)
	if err != nil || len(got) != 1 || got[0].Record.ID != "extra" {
		t.Errorf("Search for the record just stored: %+v, %v", got, err)
	}
	db := sqlx.MustOpen("postgres", dsn)
	defer db.Close()
	var exts int
	if err := db.Get(&exts, `SELECT count(*) FROM pg_extension WHERE extname = 'vector'`); err != nil || exts != 0 {
		t.Errorf("pgvector extensions: %d, %v; want none", exts, err)
	}
	if got := indexCount(t, db); got != 0 {
		t.Errorf("%d HNSW indexes without pgvector, want none", got)
	}
}

// TestSearchWithoutPgvector runs the exact fallback on a cluster of the
// machine's stock PostgreSQL, which has no pgvector. Were pgvector ever
// installed there, the driver connects as a role that may not create it,
// which the driver treats the same way.
func TestSearchWithoutPgvector(t *testing.T) {
	c := pgtest.StockForTest(t)
	admin := sqlx.MustOpen("postgres", c.DSN)
	defer admin.Close()
	var available int
	if err := admin.Get(&available, `SELECT count(*) FROM pg_available_extensions WHERE name = 'vector'`); err != nil {
		t.Fatal(err)
	}
	if available == 0 {
		exactFallback(t, c.DSN)
		return
	}
	t.Logf("the stock cluster has pgvector; searching as a role that may not create it")
	exactFallback(t, unprivilegedDB(t, admin, c.DSN))
}

// TestSearchWithoutExtensionPrivilege runs the exact fallback on the
// shared cluster, which has pgvector, as a role that owns its database
// but may not create the extension (pgvector is not a trusted one).
func TestSearchWithoutExtensionPrivilege(t *testing.T) {
	c := sharedCluster(t)
	admin := sqlx.MustOpen("postgres", c.DSN)
	defer admin.Close()
	exactFallback(t, unprivilegedDB(t, admin, c.DSN))
}

// searchers numbers the roles unprivilegedDB creates.
var searchers atomic.Int64

// unprivilegedDB creates a login role without superuser and a database it
// owns, dropped when t ends, and returns the DSN connecting as that role.
func unprivilegedDB(t *testing.T, admin *sqlx.DB, adminDSN string) string {
	t.Helper()
	name := fmt.Sprintf("searcher_%d", searchers.Add(1))
	for _, stmt := range []string{
		"CREATE ROLE " + name + " LOGIN NOSUPERUSER",
		"CREATE DATABASE " + name + " OWNER " + name,
	} {
		if _, err := admin.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		db, err := sqlx.Open("postgres", adminDSN)
		if err != nil {
			t.Error(err)
			return
		}
		defer db.Close()
		for _, stmt := range []string{"DROP DATABASE IF EXISTS " + name + " WITH (FORCE)", "DROP ROLE IF EXISTS " + name} {
			if _, err := db.Exec(stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	return strings.Replace(strings.Replace(adminDSN, "user=postgres", "user="+name, 1), "dbname=postgres", "dbname="+name, 1)
}
