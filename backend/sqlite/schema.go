//go:build cgo

package sqlite

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/sqldriver"
)

// migrations[i] takes the schema from version i to version i+1.
//
// The identity indexes are partial: a record is in the index of a field
// only when it has a value for it, so records without a squad, say, cost
// nothing in the squad index. Reads name the index's condition literally.
//
// The identity indexes end with created, not (created, id): a read walks
// them newest first and SQLite orders only records of equal Created by id,
// a block at a time. Leaving the 32-byte id out makes every index entry
// about 40% smaller, which measured faster ingest and no slower reads
// (BENCHMARKS.md, "Choices measured"); the cost is that a block of
// records sharing one creation time is read whole before the newest N of
// them are returned.
//
// Column order matters: SQLite decodes a row's columns left to right, and a
// large Content spills into overflow pages, so the columns filters and the
// ORDER BY read come first and content comes last.
var migrations = []string{
	// 1: the records table and its read-path indexes.
	`CREATE TABLE memory_records (
		id          TEXT    NOT NULL PRIMARY KEY,
		kind        TEXT    NOT NULL,
		tenant_id   TEXT    NOT NULL,
		user_id     TEXT    NOT NULL,
		agent_id    TEXT    NOT NULL,
		instance_id TEXT    NOT NULL,
		squad_id    TEXT    NOT NULL,
		session_id  TEXT    NOT NULL,
		created     INTEGER NOT NULL, -- unix nanoseconds
		expires     INTEGER,          -- unix nanoseconds; NULL means never
		tokens      INTEGER NOT NULL,
		label       TEXT    NOT NULL,
		rkey        TEXT    NOT NULL,
		metadata    TEXT    NOT NULL, -- JSON object; '' when there is none
		content     TEXT    NOT NULL
	) STRICT;
	CREATE INDEX memory_records_session ON memory_records (tenant_id, session_id, created) WHERE session_id != '';
	CREATE INDEX memory_records_user    ON memory_records (tenant_id, user_id, created) WHERE user_id != '';
	CREATE INDEX memory_records_squad   ON memory_records (tenant_id, squad_id, created, instance_id) WHERE squad_id != '';
	CREATE INDEX memory_records_agent   ON memory_records (tenant_id, agent_id, created) WHERE agent_id != '';
	CREATE INDEX memory_records_expires ON memory_records (expires) WHERE expires IS NOT NULL;`,

	// 2: record versions for compare-and-swap, vectors, settings, and the
	// work queue.
	`ALTER TABLE memory_records ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
	ALTER TABLE memory_records ADD COLUMN vector BLOB; -- little-endian float32 values; NULL when none
	CREATE TABLE memory_settings (
		name  TEXT NOT NULL PRIMARY KEY,
		value TEXT NOT NULL
	) STRICT;
	CREATE TABLE memory_work (
		queue       TEXT    NOT NULL,
		id          TEXT    NOT NULL,
		tenant_id   TEXT    NOT NULL,
		user_id     TEXT    NOT NULL,
		agent_id    TEXT    NOT NULL,
		instance_id TEXT    NOT NULL,
		squad_id    TEXT    NOT NULL,
		session_id  TEXT    NOT NULL,
		created     INTEGER NOT NULL,           -- unix nanoseconds
		lease_until INTEGER NOT NULL DEFAULT 0, -- unix nanoseconds; 0 while never claimed
		token       TEXT    NOT NULL DEFAULT '',
		attempts    INTEGER NOT NULL DEFAULT 0,
		payload     TEXT    NOT NULL,
		PRIMARY KEY (queue, id)
	) STRICT;
	CREATE INDEX memory_work_order ON memory_work (queue, created, id);`,

	// 3: record ids are unique per tenant, not per store: the primary key
	// becomes (tenant_id, id). SQLite cannot change a table's key, so the
	// table is rebuilt in one statement batch inside the migration's
	// transaction, and its indexes made again.
	`CREATE TABLE memory_records_v3 (
		id          TEXT    NOT NULL,
		kind        TEXT    NOT NULL,
		tenant_id   TEXT    NOT NULL,
		user_id     TEXT    NOT NULL,
		agent_id    TEXT    NOT NULL,
		instance_id TEXT    NOT NULL,
		squad_id    TEXT    NOT NULL,
		session_id  TEXT    NOT NULL,
		created     INTEGER NOT NULL, -- unix nanoseconds
		expires     INTEGER,          -- unix nanoseconds; NULL means never
		tokens      INTEGER NOT NULL,
		label       TEXT    NOT NULL,
		rkey        TEXT    NOT NULL,
		metadata    TEXT    NOT NULL, -- JSON object; '' when there is none
		content     TEXT    NOT NULL,
		version     INTEGER NOT NULL DEFAULT 1,
		vector      BLOB,             -- little-endian float32 values; NULL when none
		PRIMARY KEY (tenant_id, id)
	) STRICT;
	INSERT INTO memory_records_v3
		(id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
		 created, expires, tokens, label, rkey, metadata, content, version, vector)
	SELECT id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
		created, expires, tokens, label, rkey, metadata, content, version, vector
	FROM memory_records;
	DROP TABLE memory_records;
	ALTER TABLE memory_records_v3 RENAME TO memory_records;
	CREATE INDEX memory_records_session ON memory_records (tenant_id, session_id, created) WHERE session_id != '';
	CREATE INDEX memory_records_user    ON memory_records (tenant_id, user_id, created) WHERE user_id != '';
	CREATE INDEX memory_records_squad   ON memory_records (tenant_id, squad_id, created, instance_id) WHERE squad_id != '';
	CREATE INDEX memory_records_agent   ON memory_records (tenant_id, agent_id, created) WHERE agent_id != '';
	CREATE INDEX memory_records_expires ON memory_records (expires) WHERE expires IS NOT NULL;`,

	// 4: snapshots of the text cache (textsnapshot.go): a new process
	// reads the analysed texts from here instead of analysing every
	// record again.
	`CREATE TABLE memory_text_snapshots (
		generation INTEGER NOT NULL,
		seq        INTEGER NOT NULL,
		data       BLOB    NOT NULL,
		PRIMARY KEY (generation, seq)
	) STRICT;`,

	// 5: snapshots of the vector copy (vectorsnapshot.go): a new process
	// reads the vectors as its search holds them, normalised and
	// quantised, instead of reading and preparing every record's vector.
	`CREATE TABLE memory_vector_snapshots (
		generation INTEGER NOT NULL,
		seq        INTEGER NOT NULL,
		data       BLOB    NOT NULL,
		PRIMARY KEY (generation, seq)
	) STRICT;`,
}

const createSchemaTable = `CREATE TABLE IF NOT EXISTS memory_schema (
	id      INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
	version INTEGER NOT NULL
) STRICT`

// schema is the driver's schema history, for sqldriver's bookkeeping.
var schema = sqldriver.Schema{
	Version:     SchemaVersion,
	Migrations:  migrations,
	CreateTable: createSchemaTable,
	Exists:      `SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'memory_schema')`,
}

// setup puts the database in WAL mode, checks that an in-memory database
// is not spread over several connections, and brings the schema to
// SchemaVersion.
func (d *Driver) setup(ctx context.Context) error {
	conn, err := d.w.Connx(ctx)
	if err != nil {
		return classify(err, "sqlite: connect")
	}
	var mode string
	err = conn.GetContext(ctx, &mode, "PRAGMA journal_mode = WAL")
	if err == nil {
		var file string
		file, err = mainFile(ctx, conn)
		d.inMemory = file == ""
		if err == nil && file == "" && d.w.Stats().MaxOpenConnections != 1 {
			conn.Close()
			return memory.Errorf(memory.ErrInvalidArgument, "sqlite: an in-memory database needs a handle limited to one connection (SetMaxOpenConns(1))")
		}
	}
	var v int
	if err == nil {
		v, err = sq.SchemaVersion(ctx, conn, schema)
	}
	conn.Close()
	if err != nil {
		return classify(err, "sqlite: read schema version")
	}
	d.log.Debug("sqlite: opened", "journal_mode", mode, "schema_version", v)
	if v == SchemaVersion {
		return nil
	}
	if err := sq.CheckVersion(schema, v); err != nil {
		return err
	}
	// The immediate transaction is the migration's lock.
	return d.write(ctx, func(conn *sqlx.Conn) error { return sq.Migrate(ctx, conn, schema, d.log) })
}

// mainFile returns the file name of the main database; empty for an
// in-memory or temporary database.
func mainFile(ctx context.Context, conn *sqlx.Conn) (string, error) {
	rows, err := conn.QueryxContext(ctx, "PRAGMA database_list")
	if err != nil {
		return "", err
	}
	defer rows.Close()
	file := ""
	for rows.Next() {
		var seq int
		var name, f string
		if err := rows.Scan(&seq, &name, &f); err != nil {
			return "", err
		}
		if name == "main" {
			file = f
		}
	}
	return file, rows.Err()
}
