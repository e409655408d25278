package embedding

import (
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Defaults of Options.
const (
	// DefaultBatchSize is the texts of one embedder call (Options.BatchSize).
	DefaultBatchSize = 64
	// DefaultTries is the tries of one embedder call (Options.Tries).
	DefaultTries = 3
	// DefaultBackoff is the wait before a second try (Options.Backoff).
	DefaultBackoff = 200 * time.Millisecond
	// DefaultQueue is the work queue's name (Options.Queue).
	DefaultQueue = "embed"
	// DefaultLease is how long a claimed batch is held (Options.Lease).
	DefaultLease = 2 * time.Minute
	// DefaultPoll is how often idle workers look for work (Options.Poll).
	DefaultPoll = time.Second
	// DefaultMaxClaims is the failed claims before a queued record is
	// dropped (Options.MaxClaims).
	DefaultMaxClaims = 5
)

// MaxModelBytes is the longest model name an Indexer or Querier accepts.
const MaxModelBytes = 256

// maxBackoff caps the wait between two tries of an embedder call.
const maxBackoff = 30 * time.Second

// maxSwapTries bounds how often one record's vector write is retried after
// the record changed under it.
const maxSwapTries = 5

// DefaultKinds are the kinds an Indexer embeds when Options.Kinds is
// empty: everything but keyed JSON documents, which are state handed
// between steps rather than text to search.
var DefaultKinds = []memory.Kind{memory.KindTurn, memory.KindSummary, memory.KindDigest, memory.KindFact}

// Options configure an Indexer. The zero value is the documented default.
type Options struct {
	// BatchSize is the most texts one embedder call carries; zero means
	// DefaultBatchSize. At most memory.MaxBatch.
	BatchSize int
	// Workers bounds the batches embedded at once, queued and Backfill's
	// together, and is the number of goroutines claiming queued work;
	// zero means 1.
	Workers int
	// Tries is how often one embedder call is tried before its batch
	// fails; zero means DefaultTries. Errors of kind
	// memory.ErrInvalidArgument or memory.ErrTooLarge (the texts or the
	// model's output can never succeed as given) and context errors are
	// not retried.
	Tries int
	// Backoff is the wait before the second try, doubled for each
	// further one up to 30 s; zero means DefaultBackoff.
	Backoff time.Duration
	// Kinds are the record kinds given vectors; empty means DefaultKinds.
	// Records with empty content are never embedded.
	Kinds []memory.Kind
	// Queue names the work queue of Enqueue (driver.Claimer); empty
	// means DefaultQueue. Indexers sharing a store and a queue share its
	// work.
	Queue string
	// Lease is how long a worker holds a claimed batch before another may
	// take it over; zero means DefaultLease. A batch whose embedder
	// tries all fail is held for one more lease, so its next claim comes
	// a lease later.
	Lease time.Duration
	// Poll is how often an idle worker looks for work that other
	// processes queued; zero means DefaultPoll. Work this Indexer's
	// Enqueue queues wakes a worker at once.
	Poll time.Duration
	// MaxClaims is how many claims of one queued record may fail before
	// the record is dropped from the queue, left without a vector (the
	// record itself is kept; Backfill gives it one later); zero means
	// DefaultMaxClaims.
	MaxClaims int
	// NoWorkers leaves queued work to other processes: this Indexer
	// enqueues, backfills and re-embeds, but claims nothing.
	NoWorkers bool
	// CacheBytes bounds the content-hash cache in front of the embedder
	// (see Cache); zero means DefaultCacheBytes, negative means no cache.
	CacheBytes int
	// Reembed allows an Indexer whose model is not the store's to start
	// an explicit re-embedding, instead of failing with
	// memory.ErrConflict; see Indexer.
	Reembed bool
	// Logger receives what background work cannot return: failed
	// batches (Warn), records given up (Error), debug records of
	// batches. Nil discards them.
	Logger *slog.Logger
}

// Stats are an Indexer's counters since it was made.
type Stats struct {
	// Embedded counts vectors written.
	Embedded int64
	// Skipped counts records that needed no vector when their turn came:
	// deleted or expired, given a vector meanwhile, of a kind not
	// embedded, empty, or queued by an identity that does not own them.
	Skipped int64
	// Conflicts counts vector writes that found the record changed since
	// it was read, and so read it again.
	Conflicts int64
	// Failed counts records left without a vector: their batch failed
	// every try (queued records: MaxClaims claims), or writing the vector
	// failed.
	Failed int64
	// Calls counts embedder calls, retries included; texts the cache
	// answers cost none.
	Calls int64
}

func fill(o *Options) error {
	switch {
	case o.BatchSize < 0 || o.BatchSize > memory.MaxBatch:
		return memory.Errorf(memory.ErrInvalidArgument, "embedding: BatchSize %d; it must be between 1 and %d (0: %d)", o.BatchSize, memory.MaxBatch, DefaultBatchSize)
	case o.Workers < 0 || o.Tries < 0 || o.Backoff < 0 || o.Lease < 0 || o.Poll < 0 || o.MaxClaims < 0:
		return memory.Errorf(memory.ErrInvalidArgument, "embedding: negative Workers, Tries, Backoff, Lease, Poll or MaxClaims")
	case o.Lease != 0 && (o.Lease < driver.MinLease || o.Lease > driver.MaxLease):
		return memory.Errorf(memory.ErrInvalidArgument, "embedding: Lease %s; it must be between %s and %s", o.Lease, driver.MinLease, driver.MaxLease)
	}
	for _, k := range o.Kinds {
		if !k.Valid() {
			return memory.Errorf(memory.ErrInvalidArgument, "embedding: unknown kind %q", string(k))
		}
	}
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	set(&o.BatchSize, DefaultBatchSize)
	set(&o.Workers, 1)
	set(&o.Tries, DefaultTries)
	set(&o.MaxClaims, DefaultMaxClaims)
	if o.Backoff == 0 {
		o.Backoff = DefaultBackoff
	}
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	if o.Poll == 0 {
		o.Poll = DefaultPoll
	}
	if o.Queue == "" {
		o.Queue = DefaultQueue
	}
	if len(o.Kinds) == 0 {
		o.Kinds = DefaultKinds
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

func checkModelName(model string) error {
	switch {
	case model == "":
		return memory.Errorf(memory.ErrInvalidArgument, "embedding: the embedder's model name is empty")
	case len(model) > MaxModelBytes:
		return memory.Errorf(memory.ErrInvalidArgument, "embedding: the model name is %d bytes, the limit is %d", len(model), MaxModelBytes)
	case !utf8.ValidString(model) || strings.ContainsFunc(model, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return memory.Errorf(memory.ErrInvalidArgument, "embedding: the model name %q is not printable UTF-8", model)
	}
	return nil
}
