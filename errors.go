package memory

import (
	"errors"
	"fmt"
)

// Classified error sentinels. Every error returned by this module that is
// not a context error matches exactly one of them with errors.Is. Errors
// that wrap a native error (a database driver's, a client library's) also
// unwrap to it, so errors.As finds the native error as well.
var (
	// ErrNotFound reports that the named record or document does not exist
	// in the caller's scope.
	ErrNotFound = errors.New("memory: not found")
	// ErrInvalidArgument reports input that can never succeed as given:
	// invalid UTF-8, an empty id, a malformed duration, an unknown level.
	ErrInvalidArgument = errors.New("memory: invalid argument")
	// ErrIncompleteScope reports that the caller's identity lacks a field the
	// requested level needs. It is returned before any storage is touched.
	ErrIncompleteScope = errors.New("memory: incomplete scope")
	// ErrPermissionDenied reports an operation the posture forbids, such as a
	// store-level read without the administrative option, a caller using
	// the tenant reserved for platform data, or a write under a record id
	// another identity of the tenant holds.
	ErrPermissionDenied = errors.New("memory: permission denied")
	// ErrConflict reports a lost optimistic-concurrency race: retrying
	// with a fresh read may succeed.
	ErrConflict = errors.New("memory: conflict")
	// ErrTooLarge reports content, metadata or a batch over a documented limit.
	ErrTooLarge = errors.New("memory: too large")
	// ErrUnimplemented reports an optional capability the driver lacks.
	ErrUnimplemented = errors.New("memory: unimplemented")
	// ErrClosed reports a call on a closed store or driver.
	ErrClosed = errors.New("memory: closed")
	// ErrUnavailable reports that a service the call depends on — an
	// embedding model, a language model — failed or could not be
	// reached. Nothing was stored; retrying later may succeed.
	ErrUnavailable = errors.New("memory: unavailable")
)

// Error is a classified error: Kind is one of the sentinels above and Err,
// when not nil, is the underlying native error. Both are reachable through
// errors.Is and errors.As.
type Error struct {
	Kind error  // one of the Err* sentinels
	Msg  string // what went wrong, for people
	Err  error  // the native cause, or nil
}

// Error returns the message followed by the native cause, if any.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Kind.Error() + ": " + e.Msg + ": " + e.Err.Error()
	}
	return e.Kind.Error() + ": " + e.Msg
}

// Unwrap returns the sentinel and the native cause.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// Errorf returns a classified error of the given kind with a formatted
// message. kind must be one of the Err* sentinels.
func Errorf(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Wrap classifies a native error. It returns nil when err is nil, and
// returns context errors (context.Canceled, context.DeadlineExceeded)
// unchanged so callers can compare them directly.
func Wrap(kind error, err error, msg string) error {
	if err == nil {
		return nil
	}
	if isContextError(err) {
		return err
	}
	return &Error{Kind: kind, Msg: msg, Err: err}
}
