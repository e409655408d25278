package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/postgres"
)

// TestMigrateFromVersion1 builds a database as the version 1 driver left
// it, with a record in it, and opens it with this driver, which migrates
// it to the current version: the record is kept, reads back at version 1
// without a vector, and can be swapped and given a vector from there.
func TestMigrateFromVersion1(t *testing.T) {
	dsn := freshDB(t)
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 5, 6, 7, 8, 9, 10, time.UTC)
	for _, stmt := range []string{postgres.CreateSchemaTableForTest, postgres.MigrationsForTest[0], "INSERT INTO memory_schema (id, version) VALUES (1, 1)"} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if _, err := db.Exec(`INSERT INTO memory_records
		(id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id, created, expires, tokens, label, rkey, metadata, content)
		VALUES ('old-1', 'fact', 't', 'alice', '', '', '', 's', $1, NULL, 3, '', '', NULL, 'kept from v1')`, t0.UnixNano()); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	d, err := postgres.Open(dsn, postgres.Options{})
	if err != nil {
		t.Fatalf("Open of a version 1 database: %v", err)
	}
	defer d.Close()
	ctx := context.Background()
	got, err := d.List(ctx, tenantQuery("t"))
	if err != nil || len(got) != 1 {
		t.Fatalf("after migration the tenant holds %d records, %v; want the v1 record", len(got), err)
	}
	v1 := memory.Record{Content: "kept from v1", Version: 1, Vector: nil}
	if diff := cmp.Diff(v1, got[0], cmpopts.IgnoreFields(memory.Record{}, "ID", "Kind", "Identity", "Label", "Key", "Metadata", "Created", "Expires", "Tokens")); diff != "" {
		t.Fatalf("after migration, the v1 record at version 1 without a vector (-want +got):\n%s", diff)
	}
	rec := got[0]
	rec.Content = "changed"
	rec.Vector = []float32{1, 2, 3}
	if v, err := d.Swap(ctx, rec, 1); err != nil || v != 2 {
		t.Fatalf("Swap of the migrated record = %d, %v; want 2", v, err)
	}
	got, err = d.List(ctx, tenantQuery("t"))
	if err != nil || len(got) != 1 {
		t.Fatalf("after Swap the tenant holds %d records, %v; want 1", len(got), err)
	}
	swapped := memory.Record{Identity: memory.Identity{Tenant: "t", User: "alice", Session: "s"}, Version: 2}
	if diff := cmp.Diff(swapped, got[0], cmpopts.IgnoreFields(memory.Record{}, "ID", "Kind", "Label", "Key", "Content", "Metadata", "Created", "Expires", "Tokens", "Vector")); diff != "" {
		t.Fatalf("after Swap the tenant holds (-want +got):\n%s", diff)
	}
	if len(got[0].Vector) != 3 {
		t.Fatalf("after Swap the record has a vector of %d dimensions, want 3", len(got[0].Vector))
	}
}

// versionTwoDB builds a database as the version 2 driver left it and runs
// inserts, statements of rows for memory_records, in it; it returns the
// database's DSN.
func versionTwoDB(t *testing.T, inserts ...string) string {
	t.Helper()
	dsn := freshDB(t)
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{postgres.CreateSchemaTableForTest, postgres.MigrationsForTest[0], postgres.MigrationsForTest[1],
		"INSERT INTO memory_schema (id, version) VALUES (1, 2)"}
	for _, stmt := range append(stmts, inserts...) {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return dsn
}

// v2Row returns the insert of a version 2 record of kind in tenant t.
func v2Row(id, kind, content string) string {
	return `INSERT INTO memory_records
		(id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id, created, expires, tokens, label, rkey, metadata, content, version)
		VALUES ('` + id + `', '` + kind + `', 't', '', 'a', '', 'sq', '', 1, NULL, 0, '', '` + id + `', NULL, '` + content + `', 4)`
}

// TestMigrateFromVersion2 opens a version 2 database holding documents and
// other records from four replicas at once: the advisory lock lets one of
// them migrate, every Open succeeds, records read back exactly as written,
// and the new document column holds each document as jsonb and NULL for
// every other kind.
func TestMigrateFromVersion2(t *testing.T) {
	payload := ` {"b": 1, "a": [1E400, 0.10], "a": "\u00e9"} `
	dsn := versionTwoDB(t,
		v2Row("doc-1", "document", payload),
		v2Row("doc-2", "document", `[]`),
		v2Row("fact-1", "fact", `not JSON`),
		v2Row("turn-1", "turn", `{"unclosed":`))

	const replicas = 4
	drivers := make([]*postgres.Driver, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			drivers[i], errs[i] = postgres.Open(dsn, postgres.Options{})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: Open of a version 2 database: %v", i, err)
		}
		defer drivers[i].Close()
	}
	d := drivers[0]
	var version int
	if err := d.DB().Get(&version, "SELECT version FROM memory_schema"); err != nil || version != postgres.SchemaVersion {
		t.Fatalf("schema version after migration = %d, %v; want %d", version, err, postgres.SchemaVersion)
	}
	got, err := d.List(context.Background(), tenantQuery("t"))
	if err != nil || len(got) != 4 {
		t.Fatalf("after migration List = %q, %v; want the 4 version 2 records", ids(got), err)
	}
	want := map[string]string{"doc-1": payload, "doc-2": `[]`, "fact-1": `not JSON`, "turn-1": `{"unclosed":`}
	for _, r := range got {
		if r.Content != want[r.ID] || r.Version != 4 {
			t.Errorf("%s after migration: content %q at version %d, want %q at version 4", r.ID, r.Content, r.Version, want[r.ID])
		}
	}
	var rows []struct {
		ID       string  `db:"id"`
		Document *string `db:"document"`
		A        *string `db:"a"`
	}
	if err := d.DB().Select(&rows, `SELECT id, document::text AS document, document->>'a' AS a FROM memory_records ORDER BY id`); err != nil {
		t.Fatalf("read the document column: %v", err)
	}
	for _, r := range rows {
		isDoc := strings.HasPrefix(r.ID, "doc-")
		if isDoc != (r.Document != nil) {
			t.Errorf("%s: document column %v; want jsonb for documents only", r.ID, r.Document)
		}
	}
	if len(rows) != 4 || rows[0].A == nil || *rows[0].A != "é" || *rows[1].Document != "[]" {
		t.Errorf("document column after migration: %+v; want doc-1's a = é and doc-2 = []", rows)
	}
	// Documents written after the migration get the column too.
	doc := memory.NewDocument(memory.Identity{Tenant: "t", Squad: "sq"}, "new", "working", `{"a":"new"}`, time.Unix(2, 0))
	if err := drivers[1].Put(context.Background(), []memory.Record{doc}); err != nil {
		t.Fatalf("Put after migration: %v", err)
	}
	var a string
	if err := d.DB().Get(&a, `SELECT document->>'a' FROM memory_records WHERE id = $1`, doc.ID); err != nil || a != "new" {
		t.Errorf("document->>'a' of a document written after migration = %q, %v; want new", a, err)
	}
	// Schema 4: ids are unique per tenant, so another tenant stores a
	// record under a migrated id beside it.
	other := memory.Record{ID: "doc-1", Kind: memory.KindFact, Identity: memory.Identity{Tenant: "other", Session: "s"}, Content: "other's own", Created: time.Unix(3, 0)}
	if err := drivers[2].Put(context.Background(), []memory.Record{other}); err != nil {
		t.Fatalf("another tenant storing a migrated id: %v", err)
	}
	q := tenantQuery("t")
	q.IDs = []string{"doc-1"}
	if got, err := d.List(context.Background(), q); err != nil || len(got) != 1 || got[0].Content != payload {
		t.Errorf("the migrated doc-1 after another tenant used its id: %+v, %v", got, err)
	}
}

// TestMigrateFromVersion2RefusesInvalidDocuments opens a version 2
// database holding documents that jsonb refuses, which the version 2
// driver stored unchecked: Open fails with memory.ErrInvalidArgument
// naming them, the database stays at version 2 untouched, and once they
// are corrected Open migrates it.
func TestMigrateFromVersion2RefusesInvalidDocuments(t *testing.T) {
	dsn := versionTwoDB(t,
		v2Row("ok-doc", "document", `{}`),
		v2Row("bad-text", "document", `v1`),
		v2Row("bad-nul", "document", `"\u0000"`),
		v2Row("bad-surrogate", "document", `["\ud800"]`),
		v2Row("fact", "fact", `v1`))
	_, err := postgres.Open(dsn, postgres.Options{})
	if !errors.Is(err, memory.ErrInvalidArgument) {
		t.Fatalf("Open of a version 2 database holding invalid documents = %v, want ErrInvalidArgument", err)
	}
	for _, id := range []string{"bad-text", "bad-nul", "bad-surrogate"} {
		if !strings.Contains(err.Error(), id) {
			t.Errorf("the migration error does not name %s: %v", id, err)
		}
	}
	if strings.Contains(err.Error(), "ok-doc") || strings.Contains(err.Error(), "fact") {
		t.Errorf("the migration error names a record that is not an invalid document: %v", err)
	}
	db, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version, columns int
	if err := db.Get(&version, "SELECT version FROM memory_schema"); err != nil || version != 2 {
		t.Errorf("schema version after the failed migration = %d, %v; want 2", version, err)
	}
	if err := db.Get(&columns, `SELECT count(*) FROM information_schema.columns WHERE table_name = 'memory_records' AND column_name = 'document'`); err != nil || columns != 0 {
		t.Errorf("the failed migration left %d document columns (%v); want none", columns, err)
	}
	if _, err := db.Exec(`UPDATE memory_records SET content = '"v1"' WHERE kind = 'document' AND id LIKE 'bad-%'`); err != nil {
		t.Fatal(err)
	}
	d, err := postgres.Open(dsn, postgres.Options{})
	if err != nil {
		t.Fatalf("Open once the documents are corrected: %v", err)
	}
	defer d.Close()
	var docs int
	if err := d.DB().Get(&docs, `SELECT count(*) FROM memory_records WHERE document IS NOT NULL`); err != nil || docs != 4 {
		t.Errorf("%d documents as jsonb after the migration (%v), want 4", docs, err)
	}
}
