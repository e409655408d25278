package tiered

import (
	"cmp"
	"log/slog"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/extract"
	"github.com/agentmem/memory/recall"
)

// Defaults of Options.
const (
	// DefaultBudget is the short-term window's token budget.
	DefaultBudget = 4096
	// DefaultMaxTurns is the window's hard cap on turns.
	DefaultMaxTurns = 2000
	// DefaultDigestRetention is how many digest versions a session keeps.
	DefaultDigestRetention = 20
	// DefaultFacts is how many facts a recall returns.
	DefaultFacts = 10
	// DefaultWorkers is how many folds a process runs at once.
	DefaultWorkers = 2
	// DefaultIdleFlush is how long a session stays idle before its tail
	// is folded.
	DefaultIdleFlush = 10 * time.Minute
	// DefaultLease is how long a worker holds a claimed fold before
	// another may take it over.
	DefaultLease = 2 * time.Minute
	// DefaultMaxAttempts is how many times a fold is tried before it is
	// given up.
	DefaultMaxAttempts = 5
	// DefaultSettle is how old a turn must be before a fold evicts it.
	DefaultSettle = 2 * time.Second
)

// FailureMode says whether writes and erasures report failures (Strict)
// or log them and go on (Soft), as the service document's failureMode
// does. Recall is always soft.
type FailureMode int

const (
	// Strict, the default, returns every write and erasure failure.
	Strict FailureMode = iota
	// Soft logs a failed write or erasure to Options.Logger, counts it in
	// Stats.SoftFailures and returns nil: memory is augmentation, and an
	// outage degrades an agent rather than stopping it. Invalid input
	// (a missing session, an invalid turn) is still returned.
	Soft
)

// Options configure a Memory. The zero value is the documented default.
type Options struct {
	// Budget is the short-term window's token budget; zero means
	// DefaultBudget.
	Budget int
	// MaxTurns is the window's hard cap on turns, whatever their tokens;
	// zero means DefaultMaxTurns.
	MaxTurns int
	// Trigger is the token count of a session's unfolded turns above
	// which older turns are folded into the digest; zero means Budget.
	Trigger int
	// Target is the token count a fold evicts down to; zero means
	// Budget/2. 0 < Target < Trigger <= Budget must hold.
	Target int
	// DigestRetention is how many versions of a session's digest are
	// kept, the newest; zero means DefaultDigestRetention.
	DigestRetention int
	// Facts is how many facts Recall returns when its RecallOptions.K is
	// zero; zero means DefaultFacts.
	Facts int
	// Summarizer folds evicted turns into the digest; nil means
	// extract.Rules{}, which needs no model.
	Summarizer extract.Summarizer
	// Extractor turns evicted turns into facts; nil means
	// extract.Rules{}, which needs no model.
	Extractor extract.Extractor
	// Recall configures how facts are ranked (package recall); an
	// Embedder makes it hybrid.
	Recall recall.Options
	// Level is the level a recall reads facts at unless its
	// RecallOptions name one (Recall always): memory.LevelSession,
	// LevelAgent, LevelUser or LevelStore, the baseline read scope of
	// the service document's agents. Empty means memory.LevelSession.
	Level memory.Level
	// FailureMode says whether writes and erasures report failures;
	// the zero value is Strict.
	FailureMode FailureMode
	// Workers is how many folds this process runs at once; zero means
	// DefaultWorkers. With NoWorkers, none: another process folds.
	Workers int
	// NoWorkers runs no background work in this process: folds queued
	// here are done by another replica's Memory on the same store.
	NoWorkers bool
	// IdleFlush is how long after its last turn a session's tail is
	// folded, down to one turn; zero means DefaultIdleFlush, a negative
	// value never.
	IdleFlush time.Duration
	// Lease is how long a worker holds a claimed fold before another
	// replica may take it over; zero means DefaultLease. A fold that
	// takes longer is done again, never twice over: see the package
	// documentation.
	Lease time.Duration
	// MaxAttempts bounds the attempts at one fold; zero means
	// DefaultMaxAttempts.
	MaxAttempts int
	// Settle is how old a turn must be before a fold evicts it: longer
	// than an append takes to commit, and than the clocks of replicas
	// differ. A fold's boundary is the newest turn it folded by creation
	// time, so a turn stamped before it but stored after the fold read
	// the window would be taken for folded. Zero means DefaultSettle.
	Settle time.Duration
	// GiveUp, when not nil, is told of a fold given up after MaxAttempts,
	// with the session's identity and the last error.
	GiveUp func(id memory.Identity, err error)
	// OnFold, when not nil, is told of every fold that called the
	// models, as it ends (see FoldReport): what it folded and spent, per
	// session, for cost accounting. It runs on the fold's worker and must
	// not block.
	OnFold func(FoldReport)
	// Logger receives background failures; nil discards them.
	Logger *slog.Logger
}

// FoldReport is what one fold did and spent.
type FoldReport struct {
	// Identity is the session's (the fold's work item's).
	Identity memory.Identity
	// Version is the digest version the fold wrote, or tried to.
	Version int64
	// Turns is how many turns it evicted; Facts how many facts the
	// Extractor proposed from them.
	Turns, Facts int
	// Flush reports a fold of all turns but the newest (an idle flush,
	// Flush).
	Flush bool
	// Usage is what its Summarize and Extract calls spent, as they
	// reported it.
	Usage extract.Usage
	// Stored reports that its digest version was stored. A fold that
	// lost the version to another fold of the session, or whose session
	// was erased meanwhile, stored nothing (Err nil); one that failed
	// (Err) is tried again until Options.MaxAttempts.
	Stored bool
	Err    error
}

// withDefaults returns opt with every zero field set to its default, and
// checks the result.
func (opt Options) withDefaults() (Options, error) {
	opt.Budget = cmp.Or(opt.Budget, DefaultBudget)
	opt.MaxTurns = cmp.Or(opt.MaxTurns, DefaultMaxTurns)
	opt.Trigger = cmp.Or(opt.Trigger, opt.Budget)
	opt.Target = cmp.Or(opt.Target, opt.Budget/2)
	opt.DigestRetention = cmp.Or(opt.DigestRetention, DefaultDigestRetention)
	opt.Facts = cmp.Or(opt.Facts, DefaultFacts)
	opt.Workers = cmp.Or(opt.Workers, DefaultWorkers)
	opt.IdleFlush = cmp.Or(opt.IdleFlush, DefaultIdleFlush)
	opt.Lease = cmp.Or(opt.Lease, DefaultLease)
	opt.MaxAttempts = cmp.Or(opt.MaxAttempts, DefaultMaxAttempts)
	opt.Settle = cmp.Or(opt.Settle, DefaultSettle)
	if opt.Level == "" {
		opt.Level = memory.LevelSession
	}
	if opt.Summarizer == nil {
		opt.Summarizer = extract.Rules{}
	}
	if opt.Extractor == nil {
		opt.Extractor = extract.Rules{}
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	bad := func(format string, args ...any) (Options, error) {
		return opt, memory.Errorf(memory.ErrInvalidArgument, "tiered: "+format, args...)
	}
	switch {
	case opt.Budget < 1 || opt.Budget > 1<<24:
		return bad("Budget is %d; it must be between 1 and %d", opt.Budget, 1<<24)
	case opt.MaxTurns < 1 || opt.MaxTurns > memory.MaxBatch:
		return bad("MaxTurns is %d; it must be between 1 and %d", opt.MaxTurns, memory.MaxBatch)
	case !(0 < opt.Target && opt.Target < opt.Trigger && opt.Trigger <= opt.Budget):
		return bad("Target %d, Trigger %d and Budget %d must satisfy 0 < Target < Trigger <= Budget", opt.Target, opt.Trigger, opt.Budget)
	case opt.DigestRetention < 1:
		return bad("DigestRetention is %d; at least 1", opt.DigestRetention)
	case opt.Facts < 1 || opt.Facts > 1000:
		return bad("Facts is %d; it must be between 1 and 1000", opt.Facts)
	case opt.Workers < 1 || opt.Workers > 256:
		return bad("Workers is %d; it must be between 1 and 256", opt.Workers)
	case opt.Lease < time.Second || opt.Lease > 24*time.Hour:
		return bad("Lease is %v; it must be between 1s and 24h", opt.Lease)
	case opt.Settle < 0 || opt.Settle > time.Hour:
		return bad("Settle is %v; it must be between 0 and 1h", opt.Settle)
	case opt.MaxAttempts < 1:
		return bad("MaxAttempts is %d; at least 1", opt.MaxAttempts)
	case !opt.Level.Valid():
		return bad("Level is %q, not a level", opt.Level)
	case opt.FailureMode != Strict && opt.FailureMode != Soft:
		return bad("FailureMode is %d; it must be Strict or Soft", opt.FailureMode)
	}
	return opt, nil
}
