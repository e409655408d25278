package driver_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// TestFail checks how a driver's native errors are classified: wrapped
// with the sentinel its Classifier gives, the native error still
// reachable; an error already classified, nil, and the error of a call
// whose context ended, unchanged.
func TestFail(t *testing.T) {
	native := errors.New("connection reset")
	conflict := func(error) error { return memory.ErrConflict }
	ctx := context.Background()
	err := driver.Fail(ctx, conflict, native, "put")
	if !errors.Is(err, memory.ErrConflict) || !errors.Is(err, native) {
		t.Errorf("Fail = %v: want ErrConflict wrapping the native error", err)
	}
	if again := driver.Fail(ctx, func(error) error { return memory.ErrClosed }, err, "again"); again != err {
		t.Errorf("Fail of a classified error = %v, want it unchanged", again)
	}
	if driver.Fail(ctx, conflict, nil, "put") != nil {
		t.Error("Fail of nil is not nil")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := driver.Fail(done, conflict, native, "put"); err != context.Canceled {
		t.Errorf("Fail with its context cancelled = %v, want context.Canceled", err)
	}
}
