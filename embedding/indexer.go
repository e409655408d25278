package embedding

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/worker"
)

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
	pool  *worker.Pool   // the workers claiming queued work; nil without a queue or with NoWorkers
	e     memory.Embedder
	cache *Cache // nil without a cache
	model string
	opt   Options
	role  role
	log   *slog.Logger
	sem   chan struct{}
	stop  chan struct{}
	stats struct{ embedded, skipped, conflicts, failed, calls atomic.Int64 }

	mu     sync.Mutex
	closed bool
	err    error          // what stopped the workers
	wg     sync.WaitGroup // calls in progress
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
		stop: make(chan struct{}),
	}
	if opt.CacheBytes >= 0 {
		x.cache = NewCache(e, CacheOptions{MaxBytes: opt.CacheBytes})
	}
	x.cl, _ = s.Driver().(driver.Claimer)
	if x.cl != nil && !opt.NoWorkers {
		p, err := worker.Start(x.cl, x.poolOptions(), x.work)
		if err != nil {
			return nil, err
		}
		x.pool = p
	}
	return x, nil
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
	if x.pool != nil {
		_ = x.pool.Close() // always nil
	}
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
