package configmap

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/agentmem/memory"
)

// Backoff bounds between conflicting attempts: the n-th retry waits a
// random time in [d/2, d) with d = baseDelay·2ⁿ, at most maxDelay.
const (
	baseDelay = 5 * time.Millisecond
	maxDelay  = 500 * time.Millisecond
)

// errRetry is what an attempt returns when it lost the race and may be
// tried again; it carries the API error for the final report.
type errRetry struct{ err error }

// Error describes the lost race.
func (e errRetry) Error() string { return e.err.Error() }

// retry runs attempt until it succeeds, fails for good, or has lost the
// race MaxAttempts times, waiting a jittered, growing delay in between.
// The last loss is memory.ErrConflict.
func (d *Driver) retry(ctx context.Context, what string, attempt func() error) error {
	var last error
	for n := range MaxAttempts {
		err := attempt()
		re, lost := err.(errRetry)
		if !lost {
			return err
		}
		last = re.err
		if n == MaxAttempts-1 {
			break
		}
		d.log.Debug("configmap write conflict, retrying", "what", what, "attempt", n+1, "err", last)
		delay := min(baseDelay<<n, maxDelay)
		delay = delay/2 + rand.N(delay/2)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return memory.Wrap(memory.ErrConflict, last, what+": lost the optimistic-concurrency race "+strconv.Itoa(MaxAttempts)+" times")
}
