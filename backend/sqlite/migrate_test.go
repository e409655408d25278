package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
)

// TestMigrateFromVersion1 builds a file as the version 1 driver left it,
// with a record in it, and opens it with this driver: the record is kept,
// reads back at version 1 without a vector, can be swapped from there,
// and the file takes vectors and work items.
func TestMigrateFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sqlx.Open(DriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{"PRAGMA journal_mode = WAL", createSchemaTable, migrations[0], "INSERT INTO memory_schema (id, version) VALUES (1, 1)"} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if _, err := db.Exec(`INSERT INTO memory_records
		(id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id, created, expires, tokens, label, rkey, metadata, content)
		VALUES ('old-1', 'fact', 't', 'alice', '', '', '', 's', ?, NULL, 3, '', '', '', 'kept from v1')`, t0.UnixNano()); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()

	d, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open of a version 1 file: %v", err)
	}
	defer d.Close()
	var v int
	if err := d.r.Get(&v, "SELECT version FROM memory_schema WHERE id = 1"); err != nil || v != SchemaVersion {
		t.Fatalf("schema version after migration = %d, %v; want %d", v, err, SchemaVersion)
	}
	id := memory.Identity{Tenant: "t", User: "alice", Session: "s"}
	got := mustList(t, d, at(t, id, memory.LevelSession))
	if len(got) != 1 || got[0].Content != "kept from v1" || got[0].Version != 1 || got[0].Vector != nil {
		t.Fatalf("after migration the session holds %+v, want the v1 record at version 1 without a vector", got)
	}
	rec := got[0]
	rec.Content = "changed"
	rec.Vector = []float32{1, 2, 3}
	if v, err := d.Swap(context.Background(), rec, 1); err != nil || v != 2 {
		t.Fatalf("Swap of the migrated record = %d, %v; want 2", v, err)
	}
	got = mustList(t, d, at(t, id, memory.LevelSession))
	if len(got) != 1 || got[0].Version != 2 || len(got[0].Vector) != 3 {
		t.Fatalf("after Swap the session holds %+v", got)
	}
}
