package qdrant

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// classify wraps a gRPC error with the memory sentinel it amounts to, so
// that both errors.Is(err, memory.ErrX) and status.FromError(err) (or
// errors.As to the status error) work. Context errors, also when ctx ended
// during the call, come back unchanged.
func classify(ctx context.Context, err error, msg string) error {
	return driver.Fail(ctx, kindOf, err, msg)
}

// kindOf maps a gRPC error to a sentinel by its status code. A server
// that cannot be reached or fails (Unavailable, Internal, Unknown, a
// deadline or cancellation the caller's context did not cause) is
// memory.ErrClosed, as a lost database connection is for the SQL drivers.
func kindOf(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return memory.ErrClosed
	}
	switch st.Code() {
	case codes.InvalidArgument, codes.OutOfRange, codes.FailedPrecondition:
		return memory.ErrInvalidArgument
	case codes.NotFound:
		return memory.ErrNotFound
	case codes.AlreadyExists, codes.Aborted:
		return memory.ErrConflict
	case codes.PermissionDenied, codes.Unauthenticated:
		return memory.ErrPermissionDenied
	case codes.ResourceExhausted:
		return memory.ErrTooLarge
	case codes.Unimplemented:
		return memory.ErrUnimplemented
	}
	return memory.ErrClosed
}
