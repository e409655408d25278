package driver

import (
	"context"
	"errors"

	"github.com/agentmem/memory"
)

// Classifier maps a native error to the memory sentinel that describes it:
// each driver has one for its client's errors.
type Classifier func(error) error

// Classify wraps err with the sentinel kind gives it. It returns nil for
// nil, and context errors and already classified errors unchanged.
func Classify(kind Classifier, err error, msg string) error {
	if err == nil {
		return nil
	}
	var me *memory.Error
	if errors.As(err, &me) {
		return err
	}
	return memory.Wrap(kind(err), err, msg)
}

// Fail classifies err, unless ctx is done: then the failure is the
// cancellation's doing and ctx.Err() is returned unchanged.
func Fail(ctx context.Context, kind Classifier, err error, msg string) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return Classify(kind, err, msg)
}
