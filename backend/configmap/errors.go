package configmap

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// classify wraps an API error with the memory sentinel it amounts to, so
// both errors.Is(err, memory.ErrX) and errors.As(err, &*apierrors.StatusError)
// work. Context errors, also when ctx ended during the call, come back
// unchanged. An unreachable or failing API server is memory.ErrClosed, as
// a lost database connection is for the SQL drivers.
func classify(ctx context.Context, err error, msg string) error {
	return driver.Fail(ctx, kindOf, err, msg)
}

// kindOf maps an API error to a sentinel by its status reason.
func kindOf(err error) error {
	switch {
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
		return memory.ErrConflict
	case apierrors.IsNotFound(err):
		return memory.ErrNotFound
	case apierrors.IsRequestEntityTooLargeError(err):
		return memory.ErrTooLarge
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return memory.ErrInvalidArgument
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return memory.ErrPermissionDenied
	case apierrors.IsMethodNotSupported(err):
		return memory.ErrUnimplemented
	}
	return memory.ErrClosed
}

// lostRace reports whether err is a lost optimistic-concurrency race that
// a fresh read-modify-write may win: a stale resourceVersion on update or
// delete, or a create that found the object already made.
func lostRace(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
}
