package worker

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Handler does the work of a claimed batch. It returns, for each lease in
// the same order, nil when the item is done, or an error: Settled, Later,
// Halt or a failure (see the package documentation). A nil slice means
// every item is done; a slice of another length than the batch is a bug
// that fails every item of the batch.
//
// Its context derives from context.Background(): Close does not cancel
// it, so a batch in flight runs to its end. A handler that waits (between
// tries of a model call, say) watches for shutdown itself or returns
// Later and lets the queue wait. The leases are the handler's to read;
// the pool settles the items from its own copy.
type Handler func(ctx context.Context, leases []driver.Lease) []error

// Pool is a set of goroutines claiming batches of one queue and handing
// them to a Handler. It is safe for concurrent use.
type Pool struct {
	cl   driver.Claimer
	opt  Options
	h    Handler
	log  *slog.Logger
	wake chan struct{}
	quit chan struct{} // closed once the workers are to stop claiming
	wg   sync.WaitGroup

	mu       sync.Mutex
	quitting bool
	halted   error

	stats struct{ done, failed, givenUp atomic.Int64 }
}

// Stats are a Pool's counters since it started.
type Stats struct {
	// Done counts items the handler finished: nil or Settled.
	Done int64
	// Failed counts failures: items the handler failed, once per claim,
	// the last claim of an item given up included.
	Failed int64
	// GivenUp counts items given up after MaxAttempts claims.
	GivenUp int64
}

// Start checks opt and starts opt.Workers goroutines claiming batches of
// opt.Queue from cl for h. A nil claimer or handler, or an invalid option,
// is memory.ErrInvalidArgument.
func Start(cl driver.Claimer, opt Options, h Handler) (*Pool, error) {
	if cl == nil || h == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "worker: nil claimer or handler")
	}
	if err := opt.fill(); err != nil {
		return nil, err
	}
	p := &Pool{
		cl: cl, opt: opt, h: h, log: opt.Logger,
		wake: make(chan struct{}, 1),
		quit: make(chan struct{}),
	}
	p.wg.Add(opt.Workers)
	for range opt.Workers {
		go p.run()
	}
	return p, nil
}

// Wake tells the pool an item was enqueued: a worker waiting between empty
// claims claims at once. It never blocks, and after Close or a halt it
// does nothing.
func (p *Pool) Wake() {
	select {
	case <-p.quit:
		return
	default:
	}
	select {
	case p.wake <- struct{}{}:
	default: // a wake is pending already
	}
}

// Close stops the pool: workers claim nothing more, a wait between empty
// claims ends at once, and Close returns when every batch in flight has
// run to its end and been settled. Close is idempotent and safe to call
// concurrently; every call waits. It does not close the claimer, and
// always returns nil.
func (p *Pool) Close() error {
	p.stop()
	p.wg.Wait()
	return nil
}

// Err returns the error a handler halted the pool with (Halt), or nil.
func (p *Pool) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.halted
}

// Stats returns the pool's counters.
func (p *Pool) Stats() Stats {
	return Stats{Done: p.stats.done.Load(), Failed: p.stats.failed.Load(), GivenUp: p.stats.givenUp.Load()}
}

// stop makes the workers stop claiming.
func (p *Pool) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked()
}

// stopLocked is stop with p.mu held.
func (p *Pool) stopLocked() {
	if !p.quitting {
		p.quitting = true
		close(p.quit)
	}
}

// halt records err, the first halt's, and stops claiming: by the time
// Err returns it, the workers are stopped.
func (p *Pool) halt(err error) {
	p.mu.Lock()
	first := p.halted == nil
	if first {
		p.halted = err
	}
	p.stopLocked()
	p.mu.Unlock()
	if first {
		p.log.Error("worker: a handler halted the pool; it claims nothing more", "queue", p.opt.Queue, "err", err)
	}
}

// stopped reports whether the workers are to stop claiming.
func (p *Pool) stopped() bool {
	select {
	case <-p.quit:
		return true
	default:
		return false
	}
}

// run is one worker: it claims, works and settles batches until the pool
// stops, waiting Poll (or for Wake) after a claim that found nothing.
func (p *Pool) run() {
	defer p.wg.Done()
	ctx := context.Background() // work in flight finishes; Close cuts waits only
	for !p.stopped() {
		leases, err := p.cl.Claim(ctx, p.opt.Queue, p.opt.Batch, p.opt.Lease)
		if err != nil {
			p.log.Warn("worker: claiming work failed", "queue", p.opt.Queue, "err", err)
			leases = nil
		}
		if len(leases) == 0 {
			p.idle()
			continue
		}
		if p.stopped() {
			// Claimed while the pool stopped: given back unworked, so
			// nothing is handled once Close or a halt returned.
			for _, l := range leases {
				p.hold(ctx, l, 0)
			}
			return
		}
		p.work(ctx, leases)
	}
}

// idle waits Poll, or less when woken or stopped.
func (p *Pool) idle() {
	t := time.NewTimer(p.opt.Poll)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.wake:
	case <-p.quit:
	}
}

// work hands a batch to the handler and settles each of its items.
func (p *Pool) work(ctx context.Context, leases []driver.Lease) {
	errs := p.h(ctx, slices.Clone(leases))
	switch {
	case errs == nil:
		errs = make([]error, len(leases))
	case len(errs) != len(leases):
		bad := fmt.Errorf("worker: the handler returned %d results for a batch of %d items", len(errs), len(leases))
		p.log.Error("worker: handler bug: every item of the batch fails", "queue", p.opt.Queue, "err", bad)
		errs = make([]error, len(leases))
		for i := range errs {
			errs[i] = bad
		}
	}
	failed, first := 0, error(nil)
	for i, l := range leases {
		if err := p.settle(ctx, l, errs[i]); err != nil {
			failed++
			first = cmp.Or(first, err)
		}
	}
	if failed > 0 {
		p.log.Warn("worker: items of a batch failed; each is claimed again after its backoff", "queue", p.opt.Queue, "items", failed, "err", first)
	}
}
