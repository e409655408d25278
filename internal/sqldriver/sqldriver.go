// Package sqldriver is the code the SQL drivers (backend/sqlite,
// backend/postgres) share, written once and spelled for each engine by a
// Dialect: record queries built from a driver.Query, record, lease and
// text-cache rows read, a compare-and-swap's stored version checked,
// work-queue claims renewed and settled and a scope's work erased, the
// vector dimension read, the schema version kept, calls gated against
// Close, and native errors classified.
//
// The Dialect carries what differs in spelling only: ? or $n
// placeholders, SQLite's index pinning with unary + or PostgreSQL's
// partial-index conditions, IN lists or array parameters, and the row
// lock of a read-then-write. New builds each shared statement in the
// dialect once. What differs in substance stays in the drivers: how a
// batch is inserted, how claims pick rows (SQLite under its immediate
// transaction, PostgreSQL with FOR UPDATE SKIP LOCKED), vector search,
// and the migrations' frozen SQL text.
package sqldriver

import (
	"context"
	"database/sql"

	"github.com/agentmem/memory"
)

// Queryer runs statements. *sql.DB, *sql.Tx and *sql.Conn satisfy it, and
// so do their sqlx wrappers.
type Queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// RowsQueryer runs queries that return rows: a Queryer, or a driver's set
// of prepared statements.
type RowsQueryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Collect reads every row with scan and closes rows. limit, when positive,
// sizes the result up front. It returns nil when there are no rows; errors
// come back unclassified, for the caller to classify.
func Collect(rows *sql.Rows, limit int, scan func(*sql.Rows) (memory.Record, error)) ([]memory.Record, error) {
	defer rows.Close()
	var out []memory.Record
	if limit > 0 {
		out = make([]memory.Record, 0, min(limit, 256))
	}
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
