package embedding

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
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
	// tries all fail is left to lapse, so its next claim comes a lease
	// later.
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

// Indexer gives stored records vectors off the write path, with one
// embedder, in batches, and writes each vector with compare-and-swap on
// the record's version (driver.Swapper): a record changed between its read
// and its vector's write is read again and, if its content changed,
// embedded again, so no record is ever given the vector of content it no
// longer has. Nothing but the vector (and so the version) of a record
// changes. Vectors are written through the driver with the record's own
// identity unchanged; the store's posture judged that identity when the
// record was written.
//
// Which records need a vector is found two ways:
//
//   - Enqueue, called after a write, queues the records' ids in the
//     driver's work queue (driver.Claimer). Workers claim leased batches,
//     so several processes and replicas share the work and a batch whose
//     worker died is taken over when its lease lapses. A queued record
//     is embedded at least once unless it is deleted first, it fails
//     MaxClaims claims, or the store loses the queue (the in-memory
//     driver's queue dies with the process).
//   - Backfill lists a scope and embeds its records that have no vector:
//     for data written before the Indexer existed, records dropped from
//     the queue, and drivers without a work queue. It holds the scope's
//     records in memory (List has no pages), and sees what was stored
//     when it listed.
//
// The store records its embedding model (ModelInfo, under ModelRecordID in
// the system tenant). NewIndexer records the model when the store has none
// and fails with memory.ErrConflict, naming both models, when it has
// another; every batch checks again before writing, so an Indexer stops
// (Err) rather than mix two models' vectors. Its dimension is recorded
// with the first vector, and a vector of another dimension is
// memory.ErrConflict.
//
// Re-embedding is explicit: an Indexer with Options.Reembed whose model
// is not the store's marks the store as being re-embedded (ModelInfo.Next).
// From then on Indexers of the old model stop at their next batch, new
// records queued are embedded with the new model, Querier refuses both
// models with memory.ErrConflict (vector search is unavailable, so recall
// falls back to what needs no vectors), and Reembed re-embeds a scope's
// records. The store cannot list its tenants, so the caller calls Reembed
// for every scope that holds vectors, then FinishReembed, which makes the
// new model the store's. Stop Indexers of the old model first: one in the
// middle of a batch when re-embedding starts may still write that batch.
// A store keeps vectors of one dimension, so the new model must have the
// old one's.
//
// An Indexer is safe for concurrent use. Close stops it; it does not close
// the store.
type Indexer struct {
	s     *backend.Store
	sw    driver.Swapper
	cl    driver.Claimer // nil without a work queue
	e     memory.Embedder
	cache *Cache // nil without a cache
	model string
	opt   Options
	role  role
	log   *slog.Logger
	sem   chan struct{}
	wake  chan struct{}
	stop  chan struct{}
	stats struct{ embedded, skipped, conflicts, failed, calls atomic.Int64 }

	mu     sync.Mutex
	closed bool
	err    error // what stopped the workers
	wg     sync.WaitGroup
}

// errStopping reports a wait cut short by Close.
var errStopping = errors.New("embedding: the indexer is closing")

// NewIndexer returns an Indexer over s with embedder e, after checking the
// store's recorded model as the Indexer documentation describes. When the
// driver is a driver.Claimer and Options.NoWorkers is not set, its workers
// start claiming queued work at once. A driver without compare-and-swap
// is memory.ErrUnimplemented; a nil store or embedder, a bad model name or
// option is memory.ErrInvalidArgument.
func NewIndexer(ctx context.Context, s *backend.Store, e memory.Embedder, opt Options) (*Indexer, error) {
	if s == nil || e == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "embedding: nil store or embedder")
	}
	model := e.Model()
	if err := checkModelName(model); err != nil {
		return nil, err
	}
	sw, ok := s.Driver().(driver.Swapper)
	if !ok {
		return nil, memory.Errorf(memory.ErrUnimplemented, "embedding: the %T driver has no compare-and-swap, which writing vectors safely needs", s.Driver())
	}
	if err := fill(&opt); err != nil {
		return nil, err
	}
	r := roleIndex
	if opt.Reembed {
		r = roleReembed
	}
	if _, err := checkModel(ctx, s, model, r, 0); err != nil {
		return nil, err
	}
	x := &Indexer{
		s: s, sw: sw, e: e, model: model, opt: opt, role: r, log: opt.Logger,
		sem:  make(chan struct{}, opt.Workers),
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
	}
	if opt.CacheBytes >= 0 {
		x.cache = NewCache(e, CacheOptions{MaxBytes: opt.CacheBytes})
	}
	x.cl, _ = s.Driver().(driver.Claimer)
	if x.cl != nil && !opt.NoWorkers {
		for range opt.Workers {
			x.wg.Add(1)
			go x.worker()
		}
	}
	return x, nil
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

// Model returns the embedder's model name.
func (x *Indexer) Model() string { return x.model }

// Stats returns the Indexer's counters.
func (x *Indexer) Stats() Stats {
	return Stats{
		Embedded:  x.stats.embedded.Load(),
		Skipped:   x.stats.skipped.Load(),
		Conflicts: x.stats.conflicts.Load(),
		Failed:    x.stats.failed.Load(),
		Calls:     x.stats.calls.Load(),
	}
}

// Err returns why the workers stopped claiming work, nil while they run:
// the store's recorded model is no longer this Indexer's (another process
// began re-embedding, say).
func (x *Indexer) Err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// enter registers a call that Close waits for, or fails with
// memory.ErrClosed.
func (x *Indexer) enter() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return memory.Errorf(memory.ErrClosed, "embedding: the indexer is closed")
	}
	x.wg.Add(1)
	return nil
}

// Close stops the Indexer: workers claim nothing more, batches in flight
// finish their embedder call and their writes (a wait between tries is
// cut short, and the batch's queued records released for the next
// claim), and Close returns once they and every Backfill and Reembed in
// progress have returned. Work still queued stays queued, for the next
// Indexer. Later calls fail with memory.ErrClosed. Close is idempotent
// and does not close the store.
func (x *Indexer) Close() error {
	x.mu.Lock()
	if !x.closed {
		x.closed = true
		close(x.stop)
	}
	x.mu.Unlock()
	x.wg.Wait()
	return nil
}

// stopping reports whether Close has been called.
func (x *Indexer) stopping() bool {
	select {
	case <-x.stop:
		return true
	default:
		return false
	}
}

// sleep waits d, or less when ctx ends (its error) or Close is called
// (errStopping).
func (x *Indexer) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-x.stop:
		return errStopping
	}
}

// wants reports whether r should be given a vector: an embedded kind with
// content, and no vector yet unless force.
func (x *Indexer) wants(r memory.Record, force bool) bool {
	return r.Content != "" && slices.Contains(x.opt.Kinds, r.Kind) && (force || r.Vector == nil)
}

// embed returns the vectors of texts, trying the embedder up to
// Options.Tries times.
func (x *Indexer) embed(ctx context.Context, texts []string) ([][]float32, error) {
	wait := x.opt.Backoff
	for try := 1; ; try++ {
		x.stats.calls.Add(1)
		var vecs [][]float32
		var err error
		if x.cache != nil {
			vecs, err = x.cache.Embed(ctx, texts)
		} else if vecs, err = x.e.Embed(ctx, texts); err == nil {
			err = memory.CheckEmbeddings(len(texts), vecs)
		}
		if err == nil {
			return vecs, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if try >= x.opt.Tries || errors.Is(err, memory.ErrInvalidArgument) || errors.Is(err, memory.ErrTooLarge) {
			return nil, err
		}
		x.log.Debug("embedding: embedder call failed; trying again", "model", x.model, "texts", len(texts), "try", try, "err", err)
		if err := x.sleep(ctx, wait); err != nil {
			return nil, err
		}
		wait = min(2*wait, maxBackoff)
	}
}

// modelError marks a failure of the model check, which stops workers.
type modelError struct{ err error }

func (e *modelError) Error() string { return e.err.Error() }
func (e *modelError) Unwrap() error { return e.err }

// batch gives recs (all wanted, at most BatchSize) vectors. It fails as a
// whole when the embedder or the model check does; a record whose write
// fails is logged and counted in Stats.Failed.
func (x *Indexer) batch(ctx context.Context, recs []memory.Record, force bool) (int, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	select {
	case x.sem <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	defer func() { <-x.sem }()
	texts := make([]string, len(recs))
	for i, r := range recs {
		texts[i] = r.Content
	}
	vecs, err := x.embed(ctx, texts)
	if err != nil {
		return 0, err
	}
	if _, err := checkModel(ctx, x.s, x.model, roleIndex, len(vecs[0])); err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, &modelError{err}
	}
	n := 0
	for i, r := range recs {
		ok, err := x.write(ctx, r, vecs[i], force)
		switch {
		case ctx.Err() != nil:
			return n, ctx.Err()
		case err != nil:
			x.stats.failed.Add(1)
			x.log.Error("embedding: writing a vector failed", "record", r.ID, "err", err)
		case ok:
			n++
		}
	}
	x.log.Debug("embedding: batch embedded", "model", x.model, "records", len(recs), "written", n)
	return n, nil
}

// read returns the live record of tenant under id, if any.
func (x *Indexer) read(ctx context.Context, tenant, id string) (memory.Record, bool, error) {
	recs, err := x.s.Driver().List(ctx, driver.Query{
		Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: tenant}},
		IDs:    []string{id},
	})
	if err != nil || len(recs) == 0 {
		return memory.Record{}, false, err
	}
	return recs[0], true, nil
}

// write stores vec as rec's vector if rec is unchanged; otherwise it
// reads rec again and, while it still wants a vector, tries again, with
// the vector of its new content when that changed.
func (x *Indexer) write(ctx context.Context, rec memory.Record, vec []float32, force bool) (bool, error) {
	for try := 1; ; try++ {
		r := rec
		r.Vector = vec
		_, err := x.sw.Swap(ctx, r, rec.Version)
		if err == nil {
			x.stats.embedded.Add(1)
			return true, nil
		}
		if !errors.Is(err, memory.ErrConflict) || try >= maxSwapTries {
			return false, err
		}
		x.stats.conflicts.Add(1)
		cur, ok, err := x.read(ctx, rec.Identity.Tenant, rec.ID)
		if err != nil {
			return false, err
		}
		if !ok || !x.wants(cur, force) {
			x.stats.skipped.Add(1)
			return false, nil
		}
		if cur.Content != rec.Content {
			vs, err := x.embed(ctx, []string{cur.Content})
			if err != nil {
				return false, err
			}
			if len(vs[0]) != len(vec) {
				return false, memory.Errorf(memory.ErrConflict, "model %q returned vectors of %d and %d dimensions", x.model, len(vec), len(vs[0]))
			}
			vec = vs[0]
		}
		rec = cur
	}
}

// Backfill gives a vector to every record visible to id at level that
// lacks one (of Options.Kinds, with content), in batches, and returns how
// many it gave. The scope is derived as backend.Store.List derives it.
// Records are listed once, when Backfill starts; it fails on the first
// batch that fails every try, with the records embedded so far kept, and
// stops with memory.ErrClosed when Close is called.
func (x *Indexer) Backfill(ctx context.Context, id memory.Identity, level memory.Level) (int, error) {
	return x.scan(ctx, id, level, false)
}

// Reembed gives every record visible to id at level (of Options.Kinds,
// with content) a vector of the Indexer's model, whether it has one or
// not, in batches, and returns how many it gave; it fails as Backfill
// does. It is the step of a re-embedding (see Indexer) to run for every
// scope, but works on any store whose model is the Indexer's.
func (x *Indexer) Reembed(ctx context.Context, id memory.Identity, level memory.Level) (int, error) {
	return x.scan(ctx, id, level, true)
}

func (x *Indexer) scan(ctx context.Context, id memory.Identity, level memory.Level, force bool) (int, error) {
	if err := x.enter(); err != nil {
		return 0, err
	}
	defer x.wg.Done()
	recs, err := x.s.List(ctx, id, memory.Query{Level: level, Kinds: x.opt.Kinds})
	if err != nil {
		return 0, err
	}
	if _, err := checkModel(ctx, x.s, x.model, roleIndex, 0); err != nil {
		return 0, err
	}
	recs = slices.DeleteFunc(recs, func(r memory.Record) bool { return !x.wants(r, force) })
	done := 0
	for chunk := range slices.Chunk(recs, x.opt.BatchSize) {
		if x.stopping() {
			return done, memory.Errorf(memory.ErrClosed, "embedding: the indexer was closed during the backfill")
		}
		n, err := x.batch(ctx, chunk, force)
		done += n
		if err != nil {
			if ctx.Err() != nil {
				return done, ctx.Err()
			}
			x.stats.failed.Add(int64(len(chunk) - n))
			if errors.Is(err, errStopping) {
				return done, memory.Errorf(memory.ErrClosed, "embedding: the indexer was closed during the backfill")
			}
			var me *modelError
			if errors.As(err, &me) {
				err = me.err
			}
			return done, err
		}
	}
	return done, nil
}

// FinishReembed ends a re-embedding this Indexer began (Options.Reembed):
// the store records the Indexer's model as its own, Querier serves it,
// and Indexers of the old model stay refused. Call it once Reembed has run
// for every scope holding vectors; vectors of scopes it missed stay the
// old model's. It does nothing when the model is already the store's, and
// is memory.ErrConflict when the store is being re-embedded with another
// model, or memory.ErrInvalidArgument without Options.Reembed.
func (x *Indexer) FinishReembed(ctx context.Context) error {
	if err := x.enter(); err != nil {
		return err
	}
	defer x.wg.Done()
	if x.role != roleReembed {
		return memory.Errorf(memory.ErrInvalidArgument, "embedding: FinishReembed needs an Indexer made with Options.Reembed")
	}
	for tries := 1; ; tries++ {
		info, rec, ok, err := readModel(ctx, x.s)
		if err != nil {
			return err
		}
		switch {
		case ok && info.Next == "" && info.Model == x.model:
			return nil
		case !ok || info.Next != x.model:
			return memory.Errorf(memory.ErrConflict, "embedding: the store is not being re-embedded with %q (its model record: %+v)", x.model, info)
		}
		err = writeModel(ctx, x.s, ModelInfo{Model: info.Next, Dims: info.Dims}, rec, rec.Version)
		if errors.Is(err, memory.ErrConflict) && tries < maxModelTries {
			continue
		}
		if err == nil {
			x.log.Info("embedding: re-embedding finished", "from", info.Model, "to", info.Next)
		}
		return err
	}
}

// workID is the queue id of a record: its tenant and id hashed, as record
// ids are unique per tenant only.
func workID(tenant, id string) string {
	h := sha256.New()
	h.Write([]byte(tenant))
	h.Write([]byte{0})
	h.Write([]byte(id))
	return hex.EncodeToString(h.Sum(nil))
}

// Enqueue queues the records id wrote under recordIDs for embedding, in
// the driver's work queue, and wakes a worker; call it after a successful
// write (backend.Store.Add). It checks the writer as Add does
// (backend.Store.CheckWrite). Queueing a record already queued and not yet
// claimed does nothing; workers embed what the record holds when they
// read it, and skip records deleted, not owned by id (its identity is
// neither id nor a document keyed from it) or given a vector meanwhile. A
// driver without a work queue is memory.ErrUnimplemented: use Backfill.
func (x *Indexer) Enqueue(ctx context.Context, id memory.Identity, recordIDs ...string) error {
	if err := x.enter(); err != nil {
		return err
	}
	defer x.wg.Done()
	if x.cl == nil {
		return memory.Errorf(memory.ErrUnimplemented, "embedding: the %T driver has no work queue; use Backfill", x.s.Driver())
	}
	if err := x.s.CheckWrite(id); err != nil {
		return err
	}
	if len(recordIDs) > memory.MaxBatch {
		return memory.Errorf(memory.ErrTooLarge, "embedding: %d record ids, the limit is %d", len(recordIDs), memory.MaxBatch)
	}
	now := x.s.Now()
	items := make([]driver.Work, len(recordIDs))
	for i, rid := range recordIDs {
		switch {
		case rid == "":
			return memory.Errorf(memory.ErrInvalidArgument, "embedding: empty record id")
		case len(rid) > memory.MaxIDBytes:
			return memory.Errorf(memory.ErrTooLarge, "embedding: record id is %d bytes, the limit is %d", len(rid), memory.MaxIDBytes)
		}
		items[i] = driver.Work{Queue: x.opt.Queue, ID: workID(id.Tenant, rid), Identity: id, Payload: rid, Created: now}
	}
	if len(items) == 0 {
		return nil
	}
	if _, err := x.cl.Enqueue(ctx, items); err != nil {
		return err
	}
	select {
	case x.wake <- struct{}{}:
	default:
	}
	return nil
}

// owns reports whether the records id queued include r: r is id's, or a
// document keyed from id at one working level.
func owns(id memory.Identity, r memory.Record) bool {
	if r.Identity == id {
		return true
	}
	l := memory.KeyedLevel(r.Identity)
	return r.Kind == memory.KindDocument && l != "" && r.Identity == id.Only(l.Keyed())
}

func (x *Indexer) worker() {
	defer x.wg.Done()
	ctx := context.Background() // work in flight finishes; Close cuts waits only
	for !x.stopping() && x.Err() == nil {
		leases, err := x.cl.Claim(ctx, x.opt.Queue, x.opt.BatchSize, x.opt.Lease)
		if err != nil {
			x.log.Warn("embedding: claiming queued work failed", "queue", x.opt.Queue, "err", err)
		}
		if len(leases) == 0 {
			t := time.NewTimer(x.opt.Poll)
			select {
			case <-x.stop:
			case <-x.wake:
			case <-t.C:
			}
			t.Stop()
			continue
		}
		x.work(ctx, leases)
	}
}

// work embeds the records of a claimed batch and completes its items.
func (x *Indexer) work(ctx context.Context, leases []driver.Lease) {
	recs, want := x.claimed(ctx, leases, true)
	if recs == nil {
		x.giveBack(ctx, leases) // reading failed: the next claim tries again
		return
	}
	_, err := x.batch(ctx, want, false)
	var me *modelError
	switch {
	case err == nil:
	case errors.Is(err, errStopping):
		x.giveBack(ctx, leases)
		return
	case errors.As(err, &me):
		x.mu.Lock()
		x.err = me.err
		x.mu.Unlock()
		x.log.Error("embedding: the store's model changed; this indexer stops claiming work", "model", x.model, "err", me.err)
		x.giveBack(ctx, leases)
		return
	default:
		var left, dropped []driver.Lease
		for _, l := range leases {
			if l.Attempt >= x.opt.MaxClaims {
				dropped = append(dropped, l)
			} else {
				left = append(left, l)
			}
		}
		x.log.Warn("embedding: a queued batch failed; it is claimed again when its lease lapses", "records", len(left), "err", err)
		if len(dropped) > 0 {
			x.stats.failed.Add(int64(len(dropped)))
			ids := make([]string, len(dropped))
			for i, l := range dropped {
				ids[i] = l.Payload
			}
			x.log.Error("embedding: records dropped from the queue without a vector after too many failed claims; Backfill embeds them", "records", ids, "claims", x.opt.MaxClaims, "err", err)
			x.complete(ctx, dropped, nil)
		}
		return
	}
	x.complete(ctx, leases, recs)
}

// claimed reads the records of leases, and returns those that want a
// vector, by work id and as a list; nil when reading failed. count counts
// the others in Stats.Skipped.
func (x *Indexer) claimed(ctx context.Context, leases []driver.Lease, count bool) (map[string]memory.Record, []memory.Record) {
	byTenant := map[string][]string{}
	for _, l := range leases {
		byTenant[l.Identity.Tenant] = append(byTenant[l.Identity.Tenant], l.Payload)
	}
	found := map[string]memory.Record{} // by work id
	for tenant, ids := range byTenant {
		rs, err := x.s.Driver().List(ctx, driver.Query{
			Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: tenant}},
			IDs:    ids,
		})
		if err != nil {
			x.log.Warn("embedding: reading queued records failed", "err", err)
			return nil, nil
		}
		for _, r := range rs {
			found[workID(tenant, r.ID)] = r
		}
	}
	var want []memory.Record
	for _, l := range leases {
		r, ok := found[l.ID]
		if !ok || !owns(l.Identity, r) || !x.wants(r, false) {
			if count {
				x.stats.skipped.Add(1)
			}
			delete(found, l.ID)
			continue
		}
		want = append(want, r)
	}
	return found, want
}

// giveBack releases leases so the next claim takes them at once.
func (x *Indexer) giveBack(ctx context.Context, leases []driver.Lease) {
	for _, l := range leases {
		if err := x.cl.Release(ctx, l); err != nil {
			x.log.Debug("embedding: releasing a claim failed", "record", l.Payload, "err", err)
		}
	}
}

// complete completes leases and then queues again those of recs (the
// records read for them, by work id) that were rewritten without a vector
// since: their writer's Enqueue found the item still claimed and did
// nothing.
func (x *Indexer) complete(ctx context.Context, leases []driver.Lease, recs map[string]memory.Record) {
	var done []driver.Lease
	for _, l := range leases {
		if err := x.cl.Complete(ctx, l); err != nil {
			x.log.Debug("embedding: completing a claim failed (its lease lapsed and it was claimed again)", "record", l.Payload, "err", err)
			continue
		}
		if _, ok := recs[l.ID]; ok {
			done = append(done, l)
		}
	}
	if len(done) == 0 {
		return
	}
	now, _ := x.claimed(ctx, done, false)
	var again []driver.Work
	for _, l := range done {
		cur, ok := now[l.ID]
		if ok && cur.Version > recs[l.ID].Version {
			w := l.Work
			w.Created = x.s.Now()
			again = append(again, w)
		}
	}
	if len(again) > 0 {
		if _, err := x.cl.Enqueue(ctx, again); err != nil {
			x.log.Error("embedding: queueing rewritten records again failed; Backfill embeds them", "records", len(again), "err", err)
		}
	}
}
