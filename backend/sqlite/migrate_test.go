//go:build cgo

package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
	if len(got) != 1 {
		t.Fatalf("after migration the session holds %d records, want the v1 record", len(got))
	}
	v1 := memory.Record{Content: "kept from v1", Version: 1, Vector: nil}
	if diff := cmp.Diff(v1, got[0], cmpopts.IgnoreFields(memory.Record{}, "ID", "Kind", "Identity", "Label", "Key", "Metadata", "Created", "Expires", "Tokens")); diff != "" {
		t.Fatalf("after migration, the v1 record at version 1 without a vector (-want +got):\n%s", diff)
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

// TestMigrateFromVersion2 builds a file as the version 2 driver left it —
// ids unique per store, a record with a vector, a pending work item — and
// opens it with this driver: the record keeps its fields, version and
// vector, the search finds it, the work item is still claimable, and
// another tenant may now store a record under the same id.
func TestMigrateFromVersion2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.db")
	db, err := sqlx.Open(DriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{"PRAGMA journal_mode = WAL", createSchemaTable, migrations[0], migrations[1], "INSERT INTO memory_schema (id, version) VALUES (1, 2)"} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	vec := encodeVector([]float32{1, 0, 0})
	for _, stmt := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO memory_records
			(id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id, created, expires, tokens, label, rkey, metadata, content, version, vector)
			VALUES ('shared', 'fact', 'acme', 'alice', '', '', '', 's', ?, NULL, 3, '', '', '', 'kept from v2', 4, ?)`, []any{t0.UnixNano(), vec}},
		{`INSERT INTO memory_settings (name, value) VALUES ('vector_dims', '3'), ('vector_epoch', '1')`, nil},
		{`INSERT INTO memory_work (queue, id, tenant_id, user_id, agent_id, instance_id, squad_id, session_id, created, payload)
			VALUES ('fold', 'w1', 'acme', 'alice', '', '', '', 's', ?, '{}')`, []any{t0.UnixNano()}},
	} {
		if _, err := db.Exec(stmt.q, stmt.args...); err != nil {
			t.Fatalf("%s: %v", stmt.q, err)
		}
	}
	_ = db.Close()

	d, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open of a version 2 file: %v", err)
	}
	defer d.Close()
	ctx := context.Background()
	acme := memory.Identity{Tenant: "acme", User: "alice", Session: "s"}
	got := mustList(t, d, at(t, acme, memory.LevelSession))
	if len(got) != 1 {
		t.Fatalf("after migration the session holds %d records, want the v2 record", len(got))
	}
	v2 := memory.Record{ID: "shared", Content: "kept from v2", Version: 4, Tokens: 3}
	if diff := cmp.Diff(v2, got[0], cmpopts.IgnoreFields(memory.Record{}, "Kind", "Identity", "Label", "Key", "Metadata", "Created", "Expires", "Vector")); diff != "" {
		t.Fatalf("after migration, the v2 record at version 4 (-want +got):\n%s", diff)
	}
	if len(got[0].Vector) != 3 {
		t.Fatalf("after migration the v2 record has a vector of %d dimensions, want its 3", len(got[0].Vector))
	}
	matches, err := d.Search(ctx, at(t, acme, memory.LevelSession), []float32{1, 0, 0}, 5)
	if err != nil || len(matches) != 1 || matches[0].Record.ID != "shared" {
		t.Fatalf("search after migration = %+v, %v; want the migrated record", matches, err)
	}
	leases, err := d.Claim(ctx, "fold", 5, time.Minute)
	if err != nil || len(leases) != 1 || leases[0].ID != "w1" {
		t.Fatalf("claim after migration = %+v, %v; want the pending item", leases, err)
	}
	evil := memory.Identity{Tenant: "evil", User: "alice", Session: "s"}
	if err := d.Put(ctx, []memory.Record{{ID: "shared", Kind: memory.KindFact, Identity: evil, Content: "evil's own", Created: t0, Vector: []float32{0, 1, 0}}}); err != nil {
		t.Fatalf("another tenant storing the migrated id: %v", err)
	}
	if got := mustList(t, d, at(t, acme, memory.LevelSession)); len(got) != 1 || got[0].Content != "kept from v2" {
		t.Fatalf("acme's record after another tenant used its id: %+v", got)
	}
}
