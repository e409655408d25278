package sqlite

import (
	"context"
	"errors"
	"strconv"

	"github.com/mattn/go-sqlite3"

	"github.com/agentmem/memory"
)

// classify wraps a native error with the memory sentinel that describes it
// (see the package documentation). It returns nil for nil, context errors
// and already classified errors unchanged.
func classify(err error, msg string) error {
	if err == nil {
		return nil
	}
	var me *memory.Error
	if errors.As(err, &me) {
		return err
	}
	return memory.Wrap(kindOf(err), err, msg)
}

// fail classifies err, unless ctx is done: then the failure is the
// cancellation's doing and ctx.Err() is returned unchanged.
func fail(ctx context.Context, err error, msg string) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return classify(err, msg)
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

func itoa(n int) string { return strconv.Itoa(n) }
