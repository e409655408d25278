//go:build cgo

package sqlite

import (
	"context"
	"errors"

	"github.com/mattn/go-sqlite3"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/sqldriver"
)

// sq is the SQL this driver shares with the PostgreSQL driver, in
// SQLite's dialect.
var sq = sqldriver.New(sqldriver.Dialect{Name: "sqlite", Kind: kindOf, PinIndex: true, DecodeVector: decodeVector, Blobs: blobsOn})

// classify wraps a native error with the memory sentinel kindOf gives it;
// see sqldriver.Classify.
func classify(err error, msg string) error { return driver.Classify(kindOf, err, msg) }

// fail classifies err unless ctx is done; see sqldriver.Fail.
func fail(ctx context.Context, err error, msg string) error {
	return driver.Fail(ctx, kindOf, err, msg)
}

func kindOf(err error) error {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		// database/sql's own failures: a closed pool or connection.
		return memory.ErrClosed
	}
	switch se.Code {
	case sqlite3.ErrBusy, sqlite3.ErrLocked, sqlite3.ErrConstraint, sqlite3.ErrSchema:
		return memory.ErrConflict
	case sqlite3.ErrTooBig, sqlite3.ErrFull:
		return memory.ErrTooLarge
	case sqlite3.ErrPerm, sqlite3.ErrReadonly, sqlite3.ErrAuth:
		return memory.ErrPermissionDenied
	case sqlite3.ErrCantOpen:
		return memory.ErrNotFound
	case sqlite3.ErrError, sqlite3.ErrMismatch, sqlite3.ErrRange, sqlite3.ErrNotADB, sqlite3.ErrFormat, sqlite3.ErrCorrupt:
		return memory.ErrInvalidArgument
	}
	// I/O errors, out of memory, misuse, interrupts and the rest leave the
	// storage unusable for this call.
	return memory.ErrClosed
}
