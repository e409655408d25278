package postgres

import (
	"context"

	"github.com/agentmem/memory/internal/sqldriver"
)

// SchemaVersion is the schema version this driver writes and reads. A
// database with an older version is migrated when opened; a newer one is
// refused.
const SchemaVersion = 6

// AdvisoryLockKey is the key of the transaction-level advisory lock
// (pg_advisory_xact_lock) held while the schema is created or migrated,
// so that replicas opening one database at once take turns. It is the
// first eight bytes of "agentmem" read as a big-endian integer.
const AdvisoryLockKey int64 = 0x6167656e746d656d

// migrations[i] takes the schema from version i to version i+1. Each runs
// in the migrating transaction, under the advisory lock.
//
// Text columns use the "C" collation: ids and identities compare byte for
// byte, and ORDER BY id is byte-wise as the driver contract requires.
var migrations = []string{
	// 1: the records table and its read-path indexes.
	`CREATE TABLE memory_records (
		id          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
		kind        TEXT COLLATE "C" NOT NULL,
		tenant_id   TEXT COLLATE "C" NOT NULL,
		user_id     TEXT COLLATE "C" NOT NULL,
		agent_id    TEXT COLLATE "C" NOT NULL,
		instance_id TEXT COLLATE "C" NOT NULL,
		squad_id    TEXT COLLATE "C" NOT NULL,
		session_id  TEXT COLLATE "C" NOT NULL,
		created     BIGINT NOT NULL, -- unix nanoseconds
		expires     BIGINT,          -- unix nanoseconds; NULL means never
		tokens      BIGINT NOT NULL,
		label       TEXT COLLATE "C" NOT NULL,
		rkey        TEXT COLLATE "C" NOT NULL,
		metadata    JSONB,           -- NULL when there is none
		content     TEXT NOT NULL
	);
	CREATE INDEX memory_records_session ON memory_records (tenant_id, session_id, created DESC, id DESC) WHERE session_id <> '';
	CREATE INDEX memory_records_user    ON memory_records (tenant_id, user_id, created DESC, id DESC) WHERE user_id <> '';
	CREATE INDEX memory_records_squad   ON memory_records (tenant_id, squad_id, created DESC, id DESC) INCLUDE (instance_id) WHERE squad_id <> '';
	CREATE INDEX memory_records_agent   ON memory_records (tenant_id, agent_id, created DESC, id DESC) WHERE agent_id <> '';
	CREATE INDEX memory_records_expires ON memory_records (expires) WHERE expires IS NOT NULL;`,

	// 2: record versions for compare-and-swap, vectors, settings, and the
	// work queue. Vectors are real[] so that the schema does not depend
	// on pgvector; with pgvector, the search index casts them to vector.
	`ALTER TABLE memory_records ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
	ALTER TABLE memory_records ADD COLUMN embedding REAL[]; -- NULL when none
	CREATE TABLE memory_settings (
		name  TEXT COLLATE "C" NOT NULL PRIMARY KEY,
		value TEXT NOT NULL
	);
	CREATE TABLE memory_work (
		queue       TEXT COLLATE "C" NOT NULL,
		id          TEXT COLLATE "C" NOT NULL,
		tenant_id   TEXT COLLATE "C" NOT NULL,
		user_id     TEXT COLLATE "C" NOT NULL,
		agent_id    TEXT COLLATE "C" NOT NULL,
		instance_id TEXT COLLATE "C" NOT NULL,
		squad_id    TEXT COLLATE "C" NOT NULL,
		session_id  TEXT COLLATE "C" NOT NULL,
		created     BIGINT NOT NULL,           -- unix nanoseconds
		lease_until BIGINT NOT NULL DEFAULT 0, -- unix nanoseconds; 0 while never claimed
		token       TEXT COLLATE "C" NOT NULL DEFAULT '',
		attempts    INTEGER NOT NULL DEFAULT 0,
		payload     TEXT NOT NULL,
		PRIMARY KEY (queue, id)
	);
	CREATE INDEX memory_work_order ON memory_work (queue, created, id);`,

	// 3: documents as JSONB. content keeps the exact text the caller
	// wrote, which the driver returns; the generated document column
	// holds the same JSON as jsonb for queries and indexes. Documents
	// stored by an earlier driver, which did not check their JSON, are
	// checked first: when jsonb refuses any, the migration fails naming
	// up to ten of them and leaves the database at version 2. The
	// per-record search runs only when the whole-table check fails.
	`DO $$
	DECLARE
		bad text[] := '{}';
		r   record;
	BEGIN
		BEGIN
			PERFORM count(content::jsonb) FROM memory_records WHERE kind = 'document';
		EXCEPTION WHEN data_exception OR program_limit_exceeded THEN
			FOR r IN SELECT id, content FROM memory_records WHERE kind = 'document' ORDER BY id LOOP
				BEGIN
					PERFORM r.content::jsonb;
				EXCEPTION WHEN data_exception OR program_limit_exceeded THEN
					bad := bad || r.id;
					EXIT WHEN cardinality(bad) = 10;
				END;
			END LOOP;
		END;
		IF cardinality(bad) > 0 THEN
			RAISE EXCEPTION USING ERRCODE = 'invalid_text_representation', MESSAGE =
				'documents whose content is not JSON that jsonb accepts, such as ' || array_to_string(bad, ', ') ||
				'; earlier versions of the driver stored them unchecked: correct or delete them, then open the database again';
		END IF;
	END $$;
	ALTER TABLE memory_records ADD COLUMN document JSONB
		GENERATED ALWAYS AS (CASE WHEN kind = 'document' THEN content::jsonb END) STORED;
	COMMENT ON COLUMN memory_records.content IS
		'The record''s content exactly as written; for a document, the JSON text the driver returns.';
	COMMENT ON COLUMN memory_records.document IS
		'A document''s JSON (kind = ''document'') as jsonb, generated from content, for queries and indexes; NULL for every other kind. Reads return content, never this column''s normalised text.';`,

	// 4: record ids are unique per tenant, not per store: the primary key
	// becomes (tenant_id, id). Ids stored so far are unique, so the new
	// key holds them all.
	`ALTER TABLE memory_records DROP CONSTRAINT memory_records_pkey;
	ALTER TABLE memory_records ADD CONSTRAINT memory_records_pkey PRIMARY KEY (tenant_id, id);`,

	// 5: the log of record changes that text search's caches catch up
	// with (textlog.go): every statement that inserts, updates or deletes
	// records adds the tenant and id of each to memory_text_changes, with
	// its transaction's id, in the same transaction. A TRUNCATE empties
	// the log and moves its floor (the memory_settings row
	// text_log_floor) past every cache. The functions keep the
	// search_path they were created with, so the log is found whatever
	// the writing session's path.
	`CREATE TABLE memory_text_changes (
		xid       xid8 NOT NULL DEFAULT pg_current_xact_id(),
		tenant_id TEXT COLLATE "C" NOT NULL,
		id        TEXT COLLATE "C" NOT NULL
	);
	CREATE INDEX memory_text_changes_xid ON memory_text_changes (xid);
	CREATE FUNCTION memory_text_changed() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
	BEGIN
		IF TG_OP = 'UPDATE' THEN
			INSERT INTO memory_text_changes (tenant_id, id)
				SELECT tenant_id, id FROM changed UNION SELECT tenant_id, id FROM changed_before;
		ELSE
			INSERT INTO memory_text_changes (tenant_id, id) SELECT tenant_id, id FROM changed;
		END IF;
		RETURN NULL;
	END $$;
	CREATE TRIGGER memory_text_inserted AFTER INSERT ON memory_records
		REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION memory_text_changed();
	CREATE TRIGGER memory_text_updated AFTER UPDATE ON memory_records
		REFERENCING NEW TABLE AS changed OLD TABLE AS changed_before FOR EACH STATEMENT EXECUTE FUNCTION memory_text_changed();
	CREATE TRIGGER memory_text_deleted AFTER DELETE ON memory_records
		REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION memory_text_changed();
	CREATE FUNCTION memory_text_truncated() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
	BEGIN
		DELETE FROM memory_text_changes;
		INSERT INTO memory_settings (name, value) VALUES ('text_log_floor', pg_current_xact_id()::text)
			ON CONFLICT (name) DO UPDATE SET value = greatest(memory_settings.value::xid8, excluded.value::xid8)::text;
		RETURN NULL;
	END $$;
	CREATE TRIGGER memory_text_truncated AFTER TRUNCATE ON memory_records
		FOR EACH STATEMENT EXECUTE FUNCTION memory_text_truncated();`,

	// 6: snapshots of the text cache (textsnapshot.go): a new process
	// reads the analysed texts from here, and the changes since from the
	// log, instead of analysing every record again.
	`CREATE TABLE memory_text_snapshots (
		generation BIGINT  NOT NULL,
		seq        INTEGER NOT NULL,
		data       BYTEA   NOT NULL,
		PRIMARY KEY (generation, seq)
	);`,
}

const createSchemaTable = `CREATE TABLE IF NOT EXISTS memory_schema (
	id      INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
	version INTEGER NOT NULL
)`

// schema is the driver's schema history, for sqldriver's bookkeeping.
var schema = sqldriver.Schema{
	Version:     SchemaVersion,
	Migrations:  migrations,
	CreateTable: createSchemaTable,
	Exists:      `SELECT to_regclass('memory_schema') IS NOT NULL`,
}

// setup brings the schema to SchemaVersion. When the recorded version is
// current it reads one row and takes no lock; otherwise it migrates in
// one transaction under the advisory lock, reading the version again once
// the lock is held, since another replica may have migrated meanwhile.
func (d *Driver) setup(ctx context.Context) error {
	v, err := sq.SchemaVersion(ctx, d.db, schema)
	if err != nil {
		return classify(err, "postgres: read schema version")
	}
	d.log.Debug("postgres: opened", "schema_version", v)
	if v == SchemaVersion {
		return nil
	}
	if err := sq.CheckVersion(schema, v); err != nil {
		return err
	}
	tx, err := d.db.BeginTxx(ctx, nil)
	if err != nil {
		return classify(err, "postgres: begin migration")
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, AdvisoryLockKey); err != nil {
		return classify(err, "postgres: take the migration lock")
	}
	if err := sq.Migrate(ctx, tx, schema, d.log); err != nil {
		return err
	}
	return classify(tx.Commit(), "postgres: commit migration")
}
