package tiered

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/internal/worker"
	"github.com/agentmem/memory/tiers/facts"
)

// Queue is the name of the work queue a Memory's background work goes
// through (driver.Claimer): folds, idle flushes and the storing of folds'
// facts.
const Queue = "tiered"

// Memory is the tiered memory of one store: per-session short-term
// windows, rolling digests and long-term facts, folded in the background.
// It is safe for concurrent use; Close stops its background work.
type Memory struct {
	st    *backend.Store
	cl    driver.Claimer
	opt   Options
	facts *facts.Facts
	pool  *worker.Pool // nil with NoWorkers

	mu       sync.Mutex
	sessions map[memory.Identity]*session // by session key (sessionKey)

	closed  atomic.Bool
	calls   sync.WaitGroup
	closing sync.Once
	stats   counters
}

// session is what a Memory remembers of a session it appended to: a
// tally of its unfolded turns, enough to decide when to queue a fold
// without reading the window on every append. The tally counts this
// Memory's appends since it read the window; another replica's appends
// are not in it, so it is read again when it is tallyMaxAge old.
type session struct {
	known         bool      // tokens and turns were read from the store
	read          time.Time // when
	tokens, turns int
	flushQueued   time.Time // when an idle flush was last queued
}

// tallyMaxAge is how long a session's tally is trusted before the window
// is read again: across replicas appending to one session, how late a
// fold may be queued.
const tallyMaxAge = time.Second

// maxSessions bounds the sessions a Memory remembers; past it, it
// forgets them all and reads each again on its next append.
const maxSessions = 1 << 16

// New returns the tiered memory of st. The store's driver must offer a
// work queue (driver.Claimer) that can erase by scope (driver.WorkEraser),
// compare-and-swap (driver.Swapper) and text search (driver.TextRanker or
// driver.TextSearcher); a driver that lacks one is
// memory.ErrUnimplemented. Options out of range are
// memory.ErrInvalidArgument. Unless opt.NoWorkers, New starts the
// background work, which Close stops.
func New(st *backend.Store, opt Options) (*Memory, error) {
	if st == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "tiered: nil store")
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	d := st.Driver()
	cl, ok := d.(driver.Claimer)
	if !ok {
		return nil, memory.Errorf(memory.ErrUnimplemented, "tiered: the %T driver has no work queue (driver.Claimer), which folding needs", d)
	}
	if _, ok := d.(driver.WorkEraser); !ok {
		return nil, memory.Errorf(memory.ErrUnimplemented, "tiered: the %T driver cannot erase queued work (driver.WorkEraser), which erasure needs", d)
	}
	if _, ok := d.(driver.Swapper); !ok {
		return nil, memory.Errorf(memory.ErrUnimplemented, "tiered: the %T driver has no compare-and-swap (driver.Swapper), which versioned digests need", d)
	}
	ro := opt.Recall
	if ro.Embedder != nil {
		ro.Embedder = counting(ro.Embedder)
	}
	f, err := facts.New(st, facts.Options{Recall: ro})
	if err != nil {
		return nil, err
	}
	m := &Memory{st: st, cl: cl, opt: opt, facts: f, sessions: map[memory.Identity]*session{}}
	if !opt.NoWorkers {
		m.pool, err = worker.Start(cl, worker.Options{
			Queue:       Queue,
			Workers:     opt.Workers,
			Lease:       opt.Lease,
			MaxAttempts: opt.MaxAttempts,
			GiveUp:      m.giveUp,
			Logger:      opt.Logger,
		}, m.work)
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Facts returns the long-term fact tier: the calls to add, search, get,
// update, delete and trace facts one by one.
func (m *Memory) Facts() *facts.Facts { return m.facts }

// enter admits a call, or refuses it after Close or with ctx done.
func (m *Memory) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.calls.Add(1)
	if m.closed.Load() {
		m.calls.Done()
		return memory.Errorf(memory.ErrClosed, "tiered: memory is closed")
	}
	return nil
}

func (m *Memory) leave() { m.calls.Done() }

// Close stops the background work, letting folds in flight finish
// (graceful drain), and waits for calls in flight. Work still queued
// stays queued, for the next Memory on the store. It does not close the
// store. Close is idempotent.
func (m *Memory) Close() error {
	var err error
	m.closing.Do(func() {
		m.closed.Store(true)
		if m.pool != nil {
			err = m.pool.Close()
		}
		m.calls.Wait()
	})
	return err
}

// soft returns err, or under Options.FailureMode Soft logs it and
// returns nil, unless it is the caller's mistake (invalid input, a
// missing scope, a refused identity) or ctx's end, which are returned
// in either mode.
func (m *Memory) soft(err error, what string) error {
	if err == nil || m.opt.FailureMode == Strict || callersFault(err) {
		return err
	}
	m.stats.softFailures.Add(1)
	m.opt.Logger.Warn("tiered: "+what+" failed (soft failure mode)", "err", err)
	return nil
}

// callersFault reports whether err is the caller's to fix.
func callersFault(err error) bool {
	for _, k := range []error{memory.ErrInvalidArgument, memory.ErrIncompleteScope, memory.ErrPermissionDenied,
		memory.ErrTooLarge, memory.ErrClosed, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// Stats counts what a Memory spent and did since New.
type Stats struct {
	// Folds counts folds done by this process; FoldedTurns the turns
	// they evicted; Facts the facts they proposed.
	Folds, FoldedTurns, Facts int64
	// Usage is what the folds' model calls spent.
	Usage extract.Usage
	// GivenUp counts folds given up after Options.MaxAttempts.
	GivenUp int64
	// SoftFailures counts write and erasure failures swallowed under
	// FailureMode Soft.
	SoftFailures int64
}

// counters are Stats, updated atomically.
type counters struct {
	folds, foldedTurns, facts, givenUp, softFailures atomic.Int64
	mu                                               sync.Mutex
	usage                                            extract.Usage
}

// Stats returns what the Memory spent and did since New.
func (m *Memory) Stats() Stats {
	m.stats.mu.Lock()
	u := m.stats.usage
	m.stats.mu.Unlock()
	return Stats{
		Folds: m.stats.folds.Load(), FoldedTurns: m.stats.foldedTurns.Load(), Facts: m.stats.facts.Load(),
		Usage: u, GivenUp: m.stats.givenUp.Load(), SoftFailures: m.stats.softFailures.Load(),
	}
}

// spent adds u to the usage of the folds.
func (m *Memory) spent(u extract.Usage) {
	m.stats.mu.Lock()
	m.stats.usage = m.stats.usage.Add(u)
	m.stats.mu.Unlock()
}
