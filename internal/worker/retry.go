package worker

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Settled is a handler's result for an item it settled itself: completed
// (before publishing its result, say), released or renewed. The pool
// counts it as done and leaves the lease alone.
var Settled = errors.New("worker: settled by the handler")

// Later returns a handler's result for an item that is neither done nor
// failed and is to be claimed again after d: a timer such as "flush this
// session once it has been idle ten minutes". The item holds its lease
// until d has passed (d shorter than driver.MinLease gives it back at
// once, so a handler returning Later(0) for an item that stays unready
// makes its pool spin; d beyond driver.MaxLease is cut to it). Later
// never gives an item up, however many claims it takes; but the driver
// counts every claim, so an item that fails after them is given up if it
// has had MaxAttempts claims by then.
func Later(d time.Duration) error { return &laterError{d} }

// Halt returns a handler's result for an item that cannot be worked by
// this pool any more (its model changed under it, say): the item is given
// back, claimable at once by other pools, and this pool stops claiming
// (Close still waits for the batches in flight). Err returns err.
func Halt(err error) error {
	if err == nil {
		err = errors.New("worker: halted")
	}
	return &haltError{err}
}

type laterError struct{ d time.Duration }

func (e *laterError) Error() string { return "worker: claim again after " + e.d.String() }

type haltError struct{ err error }

func (e *haltError) Error() string { return "worker: halt: " + e.err.Error() }
func (e *haltError) Unwrap() error { return e.err }

// maxBackoff caps DefaultBackoff.
const maxBackoff = 5 * time.Minute

// DefaultBackoff is Options.Backoff's default: exponential from one
// second, doubling with each attempt, capped at five minutes, with jitter
// (a random delay between half and all of that).
func DefaultBackoff(attempt int) time.Duration {
	d := time.Second << min(max(attempt-1, 0), 9)
	d = min(d, maxBackoff)
	return d/2 + rand.N(d/2+1)
}

// settle does what the handler's result err says of the item of l, and
// returns err when it was a failure the item is claimed again after.
func (p *Pool) settle(ctx context.Context, l driver.Lease, err error) error {
	var later *laterError
	var halt *haltError
	switch {
	case err == nil:
		p.stats.done.Add(1)
		p.complete(ctx, l)
	case errors.Is(err, Settled):
		p.stats.done.Add(1)
	case errors.As(err, &halt):
		p.halt(halt.err)
		p.hold(ctx, l, 0)
	case errors.As(err, &later):
		p.hold(ctx, l, later.d)
	case l.Attempt >= p.opt.MaxAttempts:
		p.stats.failed.Add(1)
		p.stats.givenUp.Add(1)
		p.log.Error("worker: an item is given up after failing its last claim", "queue", p.opt.Queue, "item", l.ID, "claims", l.Attempt, "err", err)
		if p.opt.GiveUp != nil {
			p.opt.GiveUp(ctx, l, err)
		}
		p.complete(ctx, l)
	default:
		p.stats.failed.Add(1)
		d := p.opt.Backoff(l.Attempt)
		p.log.Debug("worker: an item failed; it is claimed again after a backoff", "queue", p.opt.Queue, "item", l.ID, "claim", l.Attempt, "backoff", d, "err", err)
		if d >= 0 {
			p.hold(ctx, l, d)
		}
		return err
	}
	return nil
}

// complete completes the item of l.
func (p *Pool) complete(ctx context.Context, l driver.Lease) {
	err := p.cl.Complete(ctx, l)
	switch {
	case err == nil:
	case errors.Is(err, memory.ErrConflict):
		p.log.Debug("worker: completing an item found its lease lapsed and the item claimed again", "queue", p.opt.Queue, "item", l.ID, "err", err)
	default:
		p.log.Warn("worker: completing an item failed; it is claimed again when its lease lapses", "queue", p.opt.Queue, "item", l.ID, "err", err)
	}
}

// hold makes the item of l claimable again after d: it renews the lease
// to end then, or releases the item when d is shorter than a lease can be
// or the renewal fails.
func (p *Pool) hold(ctx context.Context, l driver.Lease, d time.Duration) {
	if d >= driver.MinLease {
		_, err := p.cl.Renew(ctx, l, min(d, driver.MaxLease))
		if err == nil {
			return
		}
		p.log.Debug("worker: renewing an item's lease failed; releasing it", "queue", p.opt.Queue, "item", l.ID, "err", err)
	}
	if err := p.cl.Release(ctx, l); err != nil {
		level := slog.LevelWarn
		if errors.Is(err, memory.ErrConflict) {
			level = slog.LevelDebug // claimed again or completed meanwhile
		}
		p.log.Log(ctx, level, "worker: releasing an item failed", "queue", p.opt.Queue, "item", l.ID, "err", err)
	}
}
