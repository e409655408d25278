package configmap

import (
	"context"
	"fmt"
	"math/rand/v2"
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

// retry runs attempt until it succeeds or fails for good, retrying every
// lost optimistic-concurrency race after a jittered, growing delay. How
// often a write loses says nothing about how long it has waited (a
// client's rate limiter alone can hold each attempt for seconds), so the
// retries are bounded in time, not in number: by the context, whose error
// comes back unchanged when it ends, and by d.retryFor, after which the
// last loss is memory.ErrConflict — the answer for a caller whose context
// has no deadline, when the ConfigMap keeps changing under it.
func (d *Driver) retry(ctx context.Context, what string, attempt func() error) error {
	start := time.Now()
	deadline := start.Add(d.retryFor)
	for n := 0; ; n++ {
		err := attempt()
		re, lost := err.(errRetry)
		if !lost {
			return err
		}
		delay := min(baseDelay<<min(n, 16), maxDelay)
		delay = delay/2 + rand.N(delay/2)
		if time.Now().Add(delay).After(deadline) {
			return memory.Wrap(memory.ErrConflict, re.err, fmt.Sprintf("%s: lost the optimistic-concurrency race %d times in %s (RetryTimeout %s)",
				what, n+1, time.Since(start).Round(time.Millisecond), d.retryFor))
		}
		d.log.Debug("configmap write conflict, retrying", "what", what, "attempt", n+1, "err", re.err)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
