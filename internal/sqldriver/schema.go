package sqldriver

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"strconv"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Schema is a driver's schema history, kept in its own SQL text: the
// migrations are frozen, each as it first shipped.
type Schema struct {
	// Version is the version the driver writes and reads.
	Version int
	// Migrations[i] takes the schema from version i to version i+1.
	Migrations []string
	// CreateTable creates the memory_schema table unless it exists.
	CreateTable string
	// Exists reads whether the memory_schema table exists, as a boolean.
	Exists string
}

// recordSchemaSQL records the schema version in memory_schema's one row.
const recordSchemaSQL = `INSERT INTO memory_schema (id, version) VALUES (1, ?)
	ON CONFLICT (id) DO UPDATE SET version = excluded.version`

// CheckVersion refuses a recorded schema version v that the driver cannot
// migrate from: a newer one with memory.ErrUnimplemented, a negative one
// with memory.ErrInvalidArgument.
func (s *SQL) CheckVersion(sc Schema, v int) error {
	if v > sc.Version {
		return memory.Errorf(memory.ErrUnimplemented,
			"%s: the database has schema version %d, newer than version %d this driver supports; upgrade the driver", s.d.Name, v, sc.Version)
	}
	if v < 0 {
		return memory.Errorf(memory.ErrInvalidArgument, "%s: the database has invalid schema version %d", s.d.Name, v)
	}
	return nil
}

// SchemaVersion reads the recorded schema version on q; 0 means no schema
// yet. Errors come back unclassified.
func (s *SQL) SchemaVersion(ctx context.Context, q Queryer, sc Schema) (int, error) {
	var exists bool
	if err := q.QueryRowContext(ctx, sc.Exists).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	var v int
	err := q.QueryRowContext(ctx, `SELECT version FROM memory_schema WHERE id = 1`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// Migrate brings the schema to sc.Version on q, which must be a
// transaction holding the lock that makes migrations take turns (the
// caller's: SQLite's immediate transaction, PostgreSQL's advisory lock).
// It reads the version again under that lock, since another process may
// have migrated meanwhile, runs the migrations from there, each logged to
// log, and records the new version. Errors are classified.
func (s *SQL) Migrate(ctx context.Context, q Queryer, sc Schema, log *slog.Logger) error {
	if _, err := q.ExecContext(ctx, sc.CreateTable); err != nil {
		return driver.Classify(s.d.Kind, err, s.d.Name+": create schema table")
	}
	v, err := s.SchemaVersion(ctx, q, sc)
	if err != nil {
		return driver.Classify(s.d.Kind, err, s.d.Name+": read schema version")
	}
	if err := s.CheckVersion(sc, v); err != nil {
		return err
	}
	for ; v < sc.Version; v++ {
		if _, err := q.ExecContext(ctx, sc.Migrations[v]); err != nil {
			return driver.Classify(s.d.Kind, err, s.d.Name+": migrate schema to version "+strconv.Itoa(v+1))
		}
		log.Debug(s.d.Name+": migrated schema", "version", v+1)
	}
	_, err = q.ExecContext(ctx, s.recordSchemaSQL, sc.Version)
	return driver.Classify(s.d.Kind, err, s.d.Name+": record schema version")
}
