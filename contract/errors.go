package contract

import (
	"context"
	"errors"
	"net/http"

	"github.com/agentmem/memory"
)

// ErrUnauthenticated reports a request without valid credentials: no
// token, a token that does not verify or has expired, a trusted-header
// request without identity headers. The memory package has no sentinel for
// it, since only the service authenticates; it is this package's.
var ErrUnauthenticated = errors.New("memory: unauthenticated")

// Class is an error's class on the wire: one row of the table below, which
// gives its HTTP status and the sentinel a client's error matches.
//
//	class              status  sentinel
//	invalid_argument   400     memory.ErrInvalidArgument
//	incomplete_scope   400     memory.ErrIncompleteScope
//	unauthenticated    401     ErrUnauthenticated
//	permission_denied  403     memory.ErrPermissionDenied
//	not_found          404     memory.ErrNotFound
//	method_not_allowed 405     memory.ErrInvalidArgument
//	conflict           409     memory.ErrConflict
//	too_large          413     memory.ErrTooLarge
//	canceled           499     context.Canceled
//	internal           500     memory.ErrUnavailable
//	unimplemented      501     memory.ErrUnimplemented
//	unavailable        503     memory.ErrUnavailable
//	closed             503     memory.ErrClosed
//	deadline_exceeded  504     context.DeadlineExceeded
//
// method_not_allowed and internal are the server's own (a wrong method, an
// error no sentinel classifies); every other class is the class of its
// sentinel's errors.
type Class string

// The classes.
const (
	ClassInvalidArgument  Class = "invalid_argument"
	ClassIncompleteScope  Class = "incomplete_scope"
	ClassUnauthenticated  Class = "unauthenticated"
	ClassPermissionDenied Class = "permission_denied"
	ClassNotFound         Class = "not_found"
	ClassMethodNotAllowed Class = "method_not_allowed"
	ClassConflict         Class = "conflict"
	ClassTooLarge         Class = "too_large"
	ClassCanceled         Class = "canceled"
	ClassInternal         Class = "internal"
	ClassUnimplemented    Class = "unimplemented"
	ClassUnavailable      Class = "unavailable"
	ClassClosed           Class = "closed"
	ClassDeadlineExceeded Class = "deadline_exceeded"
)

// StatusClientClosedRequest is the status of ClassCanceled: the caller
// went away before the answer (no standard status says so; 499 is the
// usual one).
const StatusClientClosedRequest = 499

// classes is the one table, in the order ClassOf tries it.
var classes = []struct {
	class    Class
	status   int
	sentinel error
}{
	{ClassCanceled, StatusClientClosedRequest, context.Canceled},
	{ClassDeadlineExceeded, http.StatusGatewayTimeout, context.DeadlineExceeded},
	{ClassInvalidArgument, http.StatusBadRequest, memory.ErrInvalidArgument},
	{ClassIncompleteScope, http.StatusBadRequest, memory.ErrIncompleteScope},
	{ClassUnauthenticated, http.StatusUnauthorized, ErrUnauthenticated},
	{ClassPermissionDenied, http.StatusForbidden, memory.ErrPermissionDenied},
	{ClassNotFound, http.StatusNotFound, memory.ErrNotFound},
	{ClassConflict, http.StatusConflict, memory.ErrConflict},
	{ClassTooLarge, http.StatusRequestEntityTooLarge, memory.ErrTooLarge},
	{ClassUnimplemented, http.StatusNotImplemented, memory.ErrUnimplemented},
	{ClassUnavailable, http.StatusServiceUnavailable, memory.ErrUnavailable},
	{ClassClosed, http.StatusServiceUnavailable, memory.ErrClosed},
	// The server's own classes: no error of theirs is found by sentinel.
	{ClassMethodNotAllowed, http.StatusMethodNotAllowed, memory.ErrInvalidArgument},
	{ClassInternal, http.StatusInternalServerError, memory.ErrUnavailable},
}

// ClassOf returns the class of err: an *Error's own class, else the first
// row of the table whose sentinel err matches, ClassInternal when none
// does, "" for nil.
func ClassOf(err error) Class {
	if err == nil {
		return ""
	}
	if e := (*Error)(nil); errors.As(err, &e) && e.Class != "" {
		return e.Class
	}
	for _, c := range classes {
		if errors.Is(err, c.sentinel) {
			return c.class
		}
	}
	return ClassInternal
}

// Status returns c's HTTP status; 500 for a class not in the table.
func (c Class) Status() int {
	for _, row := range classes {
		if row.class == c {
			return row.status
		}
	}
	return http.StatusInternalServerError
}

// Sentinel returns the error a client's error of class c matches:
// memory.ErrUnavailable for a class not in the table (a newer server's).
func (c Class) Sentinel() error {
	for _, row := range classes {
		if row.class == c {
			return row.sentinel
		}
	}
	return memory.ErrUnavailable
}

// ClassOfStatus returns the class a response without an error body is
// taken for (a proxy's answer, say): the first class of the table with
// that status, else ClassInvalidArgument for another 4xx and ClassInternal
// for anything else.
func ClassOfStatus(status int) Class {
	for _, row := range classes {
		if row.status == status {
			return row.class
		}
	}
	if status >= 400 && status < 500 {
		return ClassInvalidArgument
	}
	return ClassInternal
}

// Error is a classified error on the wire, and the error a client returns
// for it: it matches its class's sentinel with errors.Is.
type Error struct {
	// Class is what kind of failure it is.
	Class Class `json:"class"`
	// Message says what went wrong, for people.
	Message string `json:"message"`
}

// ErrorBody is the body of every failed response.
type ErrorBody struct {
	Error Error `json:"error"`
}

// NewError returns the wire form of err: its class and its message.
func NewError(err error) Error {
	return Error{Class: ClassOf(err), Message: err.Error()}
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel of e's class.
func (e *Error) Unwrap() error { return e.Class.Sentinel() }
