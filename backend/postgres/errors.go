package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/lib/pq"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/sqldriver"
)

// sq is the SQL this driver shares with the SQLite driver, in
// PostgreSQL's dialect.
var sq = sqldriver.New(sqldriver.Dialect{
	Name:         "postgres",
	Kind:         kindOf,
	Numbered:     true,
	Array:        func(v []string) any { return pq.StringArray(v) },
	LockRow:      " FOR UPDATE",
	DecodeVector: decodeVector,
})

// classify wraps a native error with the memory sentinel kindOf gives it;
// see sqldriver.Classify.
func classify(err error, msg string) error { return driver.Classify(kindOf, err, msg) }

// fail classifies err unless ctx is done; see sqldriver.Fail.
func fail(ctx context.Context, err error, msg string) error {
	return driver.Fail(ctx, kindOf, err, msg)
}

// kindOf maps a native error to a sentinel by its SQLSTATE.
func kindOf(err error) error {
	var pe *pq.Error
	if !errors.As(err, &pe) {
		// database/sql's own failures and network errors: a closed pool,
		// a lost connection.
		return memory.ErrClosed
	}
	code := string(pe.Code)
	switch code {
	case "23505", // unique_violation
		"40001", // serialization_failure
		"40P01", // deadlock_detected
		"55P03", // lock_not_available
		"55006": // object_in_use
		return memory.ErrConflict
	case "22001", // string_data_right_truncation
		"53100", // disk_full
		"53200", // out_of_memory
		"53400": // configuration_limit_exceeded
		return memory.ErrTooLarge
	case "22P02", // invalid_text_representation: text a cast refuses, such as a document's content jsonb cannot parse
		"22P05": // untranslatable_character: \u0000 in a document's content, which jsonb cannot hold
		return memory.ErrInvalidArgument
	case "42501": // insufficient_privilege
		return memory.ErrPermissionDenied
	case "3D000", // invalid_catalog_name: no such database
		"3F000", // invalid_schema_name
		"42P01": // undefined_table
		return memory.ErrNotFound
	case "57014": // query_canceled (by a statement_timeout; a cancelled context returns earlier)
		return memory.ErrClosed
	}
	switch {
	case strings.HasPrefix(code, "54"): // program_limit_exceeded
		return memory.ErrTooLarge
	case strings.HasPrefix(code, "28"): // invalid authorization
		return memory.ErrPermissionDenied
	case strings.HasPrefix(code, "22"), // data exception
		strings.HasPrefix(code, "42"), // syntax error or access rule violation
		strings.HasPrefix(code, "23"): // other integrity violations
		return memory.ErrInvalidArgument
	case strings.HasPrefix(code, "40"): // transaction rollback
		return memory.ErrConflict
	case strings.HasPrefix(code, "25"): // invalid transaction state, e.g. read-only
		if code == "25006" { // read_only_sql_transaction
			return memory.ErrPermissionDenied
		}
	}
	// Connection exceptions, shutdowns, internal and system errors leave
	// the store unusable for this call.
	return memory.ErrClosed
}

// retryable reports whether err is a lost race a Put may retry: a
// serialization failure or a deadlock.
func retryable(err error) bool {
	var pe *pq.Error
	if !errors.As(err, &pe) {
		return false
	}
	return pe.Code == "40001" || pe.Code == "40P01"
}

func itoa(n int) string { return strconv.Itoa(n) }
