package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
)

func openFresh(t *testing.T, opt postgres.Options) (*postgres.Driver, string) {
	t.Helper()
	dsn := freshDB(t)
	d, err := postgres.Open(dsn, opt)
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d, dsn
}

func tenantQuery(tenant string) driver.Query {
	return driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: tenant}}}
}

// TestConcurrentMigrations opens one fresh database from eight replicas at
// once, each with its own pool: every New succeeds and the schema exists
// once, at the current version.
func TestConcurrentMigrations(t *testing.T) {
	dsn := freshDB(t)
	const replicas = 8
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	dbs := make([]*sqlx.DB, replicas)
	for i := range dbs {
		db, err := sqlx.Open("postgres", dsn)
		if err != nil {
			t.Fatalf("sqlx.Open: %v", err)
		}
		dbs[i] = db
		t.Cleanup(func() { _ = db.Close() })
	}
	start := make(chan struct{})
	for i := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			d, err := postgres.New(dbs[i], postgres.Options{})
			if err == nil {
				err = d.Close()
			}
			errs[i] = err
		}()
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: New: %v", i, err)
		}
	}
	var rows []struct {
		ID      int `db:"id"`
		Version int `db:"version"`
	}
	if err := dbs[0].Select(&rows, "SELECT id, version FROM memory_schema"); err != nil {
		t.Fatalf("read memory_schema: %v", err)
	}
	if len(rows) != 1 || rows[0].Version != postgres.SchemaVersion {
		t.Errorf("memory_schema holds %+v, want one row at version %d", rows, postgres.SchemaVersion)
	}
	var tables, indexes int
	if err := dbs[0].Get(&tables, "SELECT count(*) FROM pg_tables WHERE tablename IN ('memory_records', 'memory_schema')"); err != nil {
		t.Fatal(err)
	}
	if err := dbs[0].Get(&indexes, "SELECT count(*) FROM pg_indexes WHERE tablename = 'memory_records'"); err != nil {
		t.Fatal(err)
	}
	if tables != 2 || indexes != 6 {
		t.Errorf("found %d tables and %d indexes on memory_records, want 2 and 6", tables, indexes)
	}
}

// TestRoundTripStorage checks times (zones, before 1970, the ends of the
// int64 nanosecond range) and metadata, and how they are stored: BIGINT
// unix nanoseconds, NULL for no expiry and no metadata, a JSON object.
func TestRoundTripStorage(t *testing.T) {
	d, _ := openFresh(t, postgres.Options{Clock: func() time.Time { return time.Unix(0, 0) }})
	ctx := context.Background()
	zone := time.FixedZone("UTC-0930", -(9*3600 + 1800))
	id := memory.Identity{Tenant: "t", User: "u"}
	recs := []memory.Record{
		{ID: "a", Kind: memory.KindFact, Identity: id, Content: "x", Created: time.Date(2025, 5, 6, 7, 8, 9, 123456789, zone),
			Expires: time.Date(2200, 1, 1, 0, 0, 0, 1, zone), Metadata: map[string]string{"ключ": "значение", "q": `'"\%_`, "e": ""}},
		{ID: "b", Kind: memory.KindTurn, Identity: id, Label: "user", Created: time.Unix(0, -1<<63+1)},
		{ID: "c", Kind: memory.KindTurn, Identity: id, Label: "user", Created: time.Unix(-1, 999999999), Expires: time.Unix(0, 1<<63-1), Metadata: map[string]string{}},
	}
	if err := d.Put(ctx, recs); err != nil {
		t.Fatalf("Put: %v", err)
	}
	got, err := d.List(ctx, tenantQuery("t"))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(got) != 3 {
		t.Fatalf("List returned %d records, want 3", len(got))
	}
	byID := map[string]memory.Record{}
	for _, r := range got {
		byID[r.ID] = r
	}
	// Times compare with Equal; no metadata must read back as nil, which
	// EquateEmpty does not check, so the loop checks it on its own.
	onlyTimesAndMetadata := cmpopts.IgnoreFields(memory.Record{}, "ID", "Kind", "Identity", "Label", "Key", "Content", "Tokens", "Version", "Vector")
	for _, want := range recs {
		g := byID[want.ID]
		if diff := cmp.Diff(want, g, cmpopts.EquateEmpty(), onlyTimesAndMetadata); diff != "" {
			t.Errorf("%s: times and metadata (-want +got):\n%s", want.ID, diff)
		}
		if len(want.Metadata) == 0 && g.Metadata != nil {
			t.Errorf("%s: metadata %v, want nil", want.ID, g.Metadata)
		}
	}
	var raw []struct {
		ID       string  `db:"id"`
		Created  int64   `db:"created"`
		Expires  *int64  `db:"expires"`
		Metadata *string `db:"metadata"`
	}
	if err := d.DB().Select(&raw, "SELECT id, created, expires, metadata::text AS metadata FROM memory_records ORDER BY id"); err != nil {
		t.Fatal(err)
	}
	if raw[0].Created != recs[0].Created.UnixNano() || raw[0].Expires == nil || raw[0].Metadata == nil || !strings.Contains(*raw[0].Metadata, "значение") {
		t.Errorf("record a stored as %+v", raw[0])
	}
	if raw[1].Expires != nil || raw[1].Metadata != nil || raw[2].Metadata != nil {
		t.Errorf("records b and c stored with an expiry or metadata: %+v %+v", raw[1], raw[2])
	}
}

// TestBatchDuplicates checks that the later of two occurrences of an id
// wins, and that occurrences with different identities fail the batch.
func TestBatchDuplicates(t *testing.T) {
	d, _ := openFresh(t, postgres.Options{})
	ctx := context.Background()
	id := memory.Identity{Tenant: "t", Session: "s"}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	r1 := memory.Record{ID: "dup", Kind: memory.KindTurn, Identity: id, Content: "first", Created: now}
	r2 := r1
	r2.Content = "second"
	other := memory.Record{ID: "other", Kind: memory.KindTurn, Identity: id, Content: "o", Created: now}
	if err := d.Put(ctx, []memory.Record{r1, other, r2}); err != nil {
		t.Fatalf("Put: %v", err)
	}
	got, err := d.List(ctx, tenantQuery("t"))
	if err != nil || len(got) != 2 {
		t.Fatalf("List = %d records, %v; want 2", len(got), err)
	}
	for _, r := range got {
		if r.ID == "dup" && r.Content != "second" {
			t.Errorf("dup content %q, want the later occurrence", r.Content)
		}
	}
	r3 := r1
	r3.ID = "fresh"
	r4 := r3
	r4.Identity.Session = "another"
	if err := d.Put(ctx, []memory.Record{r3, r4}); !errors.Is(err, memory.ErrPermissionDenied) {
		t.Fatalf("Put of one id with two identities = %v, want ErrPermissionDenied", err)
	}
	// A conflict with a stored record rolls back the whole batch, across
	// statements.
	batch := make([]memory.Record, 0, 2500)
	for i := range 2500 {
		batch = append(batch, memory.Record{ID: fmt.Sprintf("n-%05d", i), Kind: memory.KindTurn, Identity: id, Created: now})
	}
	bad := r1
	bad.Identity.Session = "thief"
	batch = append(batch, bad)
	err = d.Put(ctx, batch)
	if !errors.Is(err, memory.ErrPermissionDenied) || !strings.Contains(err.Error(), `"dup"`) {
		t.Fatalf("Put stealing an id = %v, want ErrPermissionDenied naming dup", err)
	}
	if got, _ := d.List(ctx, tenantQuery("t")); len(got) != 2 {
		t.Fatalf("after a failed batch, %d records stored, want 2", len(got))
	}
}

// TestLargeBatch writes memory.MaxBatch records in one Put, more than one
// statement's worth.
func TestLargeBatch(t *testing.T) {
	d, _ := openFresh(t, postgres.Options{})
	ctx := context.Background()
	id := memory.Identity{Tenant: "t", Agent: "a"}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	batch := make([]memory.Record, memory.MaxBatch)
	for i := range batch {
		batch[i] = memory.Record{ID: fmt.Sprintf("r-%05d", i), Kind: memory.KindFact, Identity: id, Content: "c",
			Metadata: map[string]string{"i": fmt.Sprint(i)}, Created: now.Add(time.Duration(i))}
	}
	if err := d.Put(ctx, batch); err != nil {
		t.Fatalf("Put: %v", err)
	}
	q := tenantQuery("t")
	q.Limit = 3
	got, err := d.List(ctx, q)
	if err != nil || len(got) != 3 || got[0].ID != "r-09999" || got[2].ID != "r-09997" {
		t.Fatalf("List newest 3 = %v, %v", ids(got), err)
	}
	n, err := d.Delete(ctx, tenantQuery("t"))
	if err != nil || n != memory.MaxBatch {
		t.Fatalf("Delete = %d, %v; want %d", n, err, memory.MaxBatch)
	}
}

func ids(recs []memory.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

// TestLifecycle checks that New leaves the injected handle open, that
// Close is idempotent and that later calls fail with ErrClosed.
func TestLifecycle(t *testing.T) {
	dsn := freshDB(t)
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d, err := postgres.New(db, postgres.Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := db.Ping(); err != nil {
		t.Fatalf("the injected handle was closed: %v", err)
	}
	if _, err := d.List(context.Background(), tenantQuery("t")); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("List after Close = %v, want ErrClosed", err)
	}
	if _, err := d.Sweep(context.Background()); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("Sweep after Close = %v, want ErrClosed", err)
	}

	if _, err := postgres.New(nil, postgres.Options{}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("New(nil) = %v, want ErrInvalidArgument", err)
	}
	if _, err := postgres.Open("", postgres.Options{}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf(`Open("") = %v, want ErrInvalidArgument`, err)
	}
	if _, err := postgres.Open("postgres://%zz", postgres.Options{}); !errors.Is(err, memory.ErrInvalidArgument) {
		t.Errorf("Open(malformed) = %v, want ErrInvalidArgument", err)
	}
}

// TestErrors checks classification: a missing database is ErrNotFound and
// still unwraps to *pq.Error; a newer schema is ErrUnimplemented.
func TestErrors(t *testing.T) {
	c := sharedCluster(t)
	dsn := fmt.Sprintf("host=%s port=%d user=postgres dbname=no_such_db sslmode=disable", c.SocketDir, c.Port)
	_, err := postgres.Open(dsn, postgres.Options{})
	var pe *pq.Error
	if !errors.Is(err, memory.ErrNotFound) || !errors.As(err, &pe) || pe.Code != "3D000" {
		t.Errorf("Open of a missing database = %v, want ErrNotFound wrapping pq error 3D000", err)
	}

	d, dsn2 := openFresh(t, postgres.Options{})
	if _, err := d.DB().Exec("UPDATE memory_schema SET version = 99"); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(dsn2, postgres.Options{}); !errors.Is(err, memory.ErrUnimplemented) {
		t.Errorf("Open of a newer schema = %v, want ErrUnimplemented", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.List(ctx, tenantQuery("t")); err != context.Canceled {
		t.Errorf("List with a cancelled context = %v, want context.Canceled unchanged", err)
	}
}

// TestByteOrder checks that List orders ids byte-wise, not by a locale.
func TestByteOrder(t *testing.T) {
	d, _ := openFresh(t, postgres.Options{})
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	in := []string{"a", "B", "é", "Z", "_", "aa", "A"}
	var recs []memory.Record
	for _, id := range in {
		recs = append(recs, memory.Record{ID: id, Kind: memory.KindTurn, Identity: memory.Identity{Tenant: "t", Session: "s"}, Created: now})
	}
	if err := d.Put(ctx, recs); err != nil {
		t.Fatal(err)
	}
	got, err := d.List(ctx, tenantQuery("t"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"é", "aa", "a", "_", "Z", "B", "A"}
	if fmt.Sprint(ids(got)) != fmt.Sprint(want) {
		t.Errorf("order %q, want %q", ids(got), want)
	}
}

// TestDocumentJSONB checks the document column: for a document it holds
// the content as jsonb, which the server can query and compare, while
// content and reads keep the exact text; for every other kind it is NULL.
func TestDocumentJSONB(t *testing.T) {
	d, _ := openFresh(t, postgres.Options{})
	ctx := context.Background()
	id := memory.Identity{Tenant: "t", Agent: "a", Squad: "s"}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	payload := " {\"b\": [1, \"x\", {\"c\": null}], \"a\": \"caf\\u00e9 \\ud83d\\ude00\", \"a\": 2, \"n\": 1E3 }\n"
	doc := memory.NewDocument(id, "plan", "working", payload, now)
	recs := []memory.Record{
		doc,
		{ID: "fact", Kind: memory.KindFact, Identity: id, Content: `{"looks":"like JSON"}`, Created: now},
		{ID: "turn", Kind: memory.KindTurn, Identity: id, Label: "user", Content: "not JSON", Created: now},
	}
	if err := d.Put(ctx, recs); err != nil {
		t.Fatalf("Put: %v", err)
	}
	type documentRow struct {
		Content  string `db:"content"`
		Document string `db:"document"`
		A        string `db:"a"`
		B1       string `db:"b1"`
		N        string `db:"n"`
		Same     bool   `db:"same"`
		Contains bool   `db:"contains"`
	}
	var row documentRow
	err := d.DB().Get(&row, `SELECT content, document::text AS document, document->>'a' AS a, document->'b'->>1 AS b1,
		(document->'n')::numeric::text AS n, document = content::jsonb AS same, document @> '{"b":[{"c":null}]}' AS contains
		FROM memory_records WHERE id = $1`, doc.ID)
	if err != nil {
		t.Fatalf("read the document column: %v", err)
	}
	if row.Content != payload {
		t.Errorf("content = %q, want the text written, %q", row.Content, payload)
	}
	// jsonb keeps the last of duplicate keys, orders keys, drops white
	// space and writes numbers out: the reason reads return content.
	if want := `{"a": 2, "b": [1, "x", {"c": null}], "n": 1000}`; row.Document != want {
		t.Errorf("document = %s, want the payload as jsonb, %s", row.Document, want)
	}
	queries := documentRow{A: "2", B1: "x", N: "1000", Same: true, Contains: true} // equal to content::jsonb, containing {"b":[{"c":null}]}
	if diff := cmp.Diff(queries, row, cmpopts.IgnoreFields(documentRow{}, "Content", "Document")); diff != "" {
		t.Errorf("queries of the document column (-want +got):\n%s", diff)
	}
	var nulls []string
	if err := d.DB().Select(&nulls, `SELECT id FROM memory_records WHERE document IS NULL ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(nulls) != "[fact turn]" {
		t.Errorf("records without a jsonb document: %q, want [fact turn]", nulls)
	}
	got, err := d.List(ctx, tenantQuery("t"))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, g := range got {
		if g.ID == doc.ID && g.Content != payload {
			t.Errorf("List returned the document as %q, want the text written, %q", g.Content, payload)
		}
	}
	// Replacing the document recomputes the column.
	doc.Content = `{"a":3}`
	if err := d.Put(ctx, []memory.Record{doc}); err != nil {
		t.Fatalf("Put of a replacement: %v", err)
	}
	var a string
	if err := d.DB().Get(&a, `SELECT document->>'a' FROM memory_records WHERE id = $1`, doc.ID); err != nil || a != "3" {
		t.Errorf("document->>'a' after a replacement = %q, %v; want 3", a, err)
	}
}

// TestDocumentCastErrors stores, bypassing Validate, documents whose
// content jsonb refuses, alone and in a batch: each fails with
// memory.ErrInvalidArgument wrapping the server's error, and nothing of
// the batch is stored.
func TestDocumentCastErrors(t *testing.T) {
	d, _ := openFresh(t, postgres.Options{})
	ctx := context.Background()
	id := memory.Identity{Tenant: "t", Squad: "s"}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for content, code := range map[string]pq.ErrorCode{
		`v1`:           "22P02",
		`{"a":1,}`:     "22P02",
		`"\u0000"`:     "22P05",
		`"\ud800"`:     "22P02",
		`["\ude00"]`:   "22P02",
		`{"a":[1,2]`:   "22P02",
		`{"a":1} true`: "22P02",
	} {
		bad := memory.NewDocument(id, "k-"+content, "working", content, now)
		good := memory.NewDocument(id, "good", "working", `{}`, now)
		for _, batch := range [][]memory.Record{{bad}, {good, bad}} {
			err := d.PutUncheckedForTest(ctx, batch)
			var pe *pq.Error
			if !errors.Is(err, memory.ErrInvalidArgument) || !errors.As(err, &pe) || pe.Code != code {
				t.Errorf("Put of %d records with the document %q = %v, want ErrInvalidArgument wrapping pq error %s", len(batch), content, err, code)
			}
			for _, s := range []error{memory.ErrClosed, memory.ErrTooLarge, memory.ErrConflict} {
				if errors.Is(err, s) {
					t.Errorf("Put of the document %q = %v, which also matches %v", content, err, s)
				}
			}
		}
	}
	if got, err := d.List(ctx, tenantQuery("t")); err != nil || len(got) != 0 {
		t.Errorf("after the refused documents the tenant holds %q, %v; want nothing", ids(got), err)
	}
}
