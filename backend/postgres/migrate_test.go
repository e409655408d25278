package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/postgres"
)

// TestMigrateFromVersion1 builds a database as the version 1 driver left
// it, with a record in it, and opens it with this driver: the record is
// kept, reads back at version 1 without a vector, and can be swapped and
// given a vector from there.
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
	if err != nil || len(got) != 1 || got[0].Content != "kept from v1" || got[0].Version != 1 || got[0].Vector != nil {
		t.Fatalf("after migration the tenant holds %+v, %v; want the v1 record at version 1 without a vector", got, err)
	}
	rec := got[0]
	rec.Content = "changed"
	rec.Vector = []float32{1, 2, 3}
	if v, err := d.Swap(ctx, rec, 1); err != nil || v != 2 {
		t.Fatalf("Swap of the migrated record = %d, %v; want 2", v, err)
	}
	got, err = d.List(ctx, tenantQuery("t"))
	if err != nil || len(got) != 1 || got[0].Version != 2 || len(got[0].Vector) != 3 || got[0].Identity != (memory.Identity{Tenant: "t", User: "alice", Session: "s"}) {
		t.Fatalf("after Swap the tenant holds %+v, %v", got, err)
	}
}
