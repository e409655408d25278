package worker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Defaults of Options.
const (
	// DefaultLease is how long a claimed batch is held (Options.Lease).
	DefaultLease = time.Minute
	// DefaultPoll is the wait between empty claims (Options.Poll).
	DefaultPoll = time.Second
	// DefaultMaxAttempts is the claims of an item before it is given up
	// (Options.MaxAttempts).
	DefaultMaxAttempts = 5
)

// Options configure a Pool; zero values are the documented defaults.
type Options struct {
	// Queue names the work queue claimed from; required.
	Queue string
	// Workers is the number of goroutines claiming and working; zero
	// means 1.
	Workers int
	// Batch is the most items one claim takes and one handler call
	// gets; zero means 1. At most memory.MaxBatch.
	Batch int
	// Lease is how long a claimed batch is held before another worker
	// may take it over; zero means DefaultLease. A handler that may run
	// longer renews its leases or fences its effects (see
	// driver.Claimer).
	Lease time.Duration
	// Poll is the wait between two claims that found nothing, unless
	// Wake or Close cuts it short; zero means DefaultPoll.
	Poll time.Duration
	// MaxAttempts is the claim of an item whose failure gives it up;
	// zero means DefaultMaxAttempts. Claims that ended in Later, Halt or
	// a lapsed lease count too (the driver counts every claim), but only
	// a failure gives an item up.
	MaxAttempts int
	// Backoff returns the delay before an item that failed on its
	// attempt-th claim is claimable again; nil means DefaultBackoff. A
	// negative delay leaves the claim to lapse when its lease ends, as it
	// would have had the worker died: the failed items of one batch then
	// come back together, to be claimed as one batch again.
	// Delays beyond driver.MaxLease are cut to it.
	Backoff func(attempt int) time.Duration
	// GiveUp, if set, is called once for an item given up, with the
	// failure of its last claim, before the item is completed.
	GiveUp func(ctx context.Context, l driver.Lease, err error)
	// Logger receives what background work cannot return: failed claims
	// and batches with failed items (Warn), items given up and halts
	// (Error), each failed item and lapsed leases (Debug). Nil discards
	// them.
	Logger *slog.Logger
}

// fill checks o and sets its defaults.
func (o *Options) fill() error {
	if o.Workers < 0 || o.Batch < 0 || o.Lease < 0 || o.Poll < 0 || o.MaxAttempts < 0 {
		return memory.Errorf(memory.ErrInvalidArgument, "worker: negative Workers, Batch, Lease, Poll or MaxAttempts")
	}
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	set(&o.Workers, 1)
	set(&o.Batch, 1)
	set(&o.MaxAttempts, DefaultMaxAttempts)
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	if o.Poll == 0 {
		o.Poll = DefaultPoll
	}
	if o.Backoff == nil {
		o.Backoff = DefaultBackoff
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	// The driver's checks of a Claim's arguments: the queue name, the
	// batch size and the lease; all of them invalid options here.
	if err := driver.CheckClaim(o.Queue, o.Batch, o.Lease); err != nil {
		msg := err.Error()
		if me := (*memory.Error)(nil); errors.As(err, &me) {
			msg = me.Msg
		}
		return memory.Errorf(memory.ErrInvalidArgument, "worker: options: %s", msg)
	}
	return nil
}
