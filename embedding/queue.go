package embedding

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/worker"
)

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
	if x.pool != nil {
		x.pool.Wake()
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

// poolOptions are the options of the Indexer's worker pool: its batches
// are the Indexer's, and a failed batch waits a lease before its next
// claim.
func (x *Indexer) poolOptions() worker.Options {
	return worker.Options{
		Queue:       x.opt.Queue,
		Workers:     x.opt.Workers,
		Batch:       x.opt.BatchSize,
		Lease:       x.opt.Lease,
		Poll:        x.opt.Poll,
		MaxAttempts: x.opt.MaxClaims,
		Backoff:     func(int) time.Duration { return -1 }, // lapse: the batch comes back whole
		GiveUp:      x.drop,
		Logger:      x.log,
	}
}

// work is the worker pool's handler: it embeds the records of a claimed
// batch, all in one batch, and completes its items itself (complete), to
// queue again the records rewritten meanwhile.
func (x *Indexer) work(ctx context.Context, leases []driver.Lease) []error {
	recs, want := x.claimed(ctx, leases, true)
	if recs == nil {
		return each(leases, worker.Later(0)) // reading failed: the next claim tries again
	}
	_, err := x.batch(ctx, want, false)
	var me *modelError
	switch {
	case err == nil:
		x.complete(ctx, leases, recs)
		return each(leases, worker.Settled)
	case errors.Is(err, errStopping):
		return each(leases, worker.Later(0)) // given back for the next claim
	case errors.As(err, &me):
		x.mu.Lock()
		x.err = me.err
		x.mu.Unlock()
		x.log.Error("embedding: the store's model changed; this indexer stops claiming work", "model", x.model, "err", me.err)
		return each(leases, worker.Halt(me.err)) // given back; the pool stops
	default:
		return each(leases, err) // claimed again a lease later, or dropped (drop)
	}
}

// drop counts and logs a queued record dropped after MaxClaims failed
// claims; the pool then completes its item.
func (x *Indexer) drop(_ context.Context, l driver.Lease, err error) {
	x.stats.failed.Add(1)
	x.log.Error("embedding: a record dropped from the queue without a vector after too many failed claims; Backfill embeds it", "record", l.Payload, "claims", l.Attempt, "err", err)
}

// each returns err for every lease.
func each(leases []driver.Lease, err error) []error {
	out := make([]error, len(leases))
	for i := range out {
		out[i] = err
	}
	return out
}

// claimed reads the records of leases, and returns those it found that
// leases' writers own, by work id, and those of them that want a vector,
// as a list; nil when reading failed. count counts the others in
// Stats.Skipped.
func (x *Indexer) claimed(ctx context.Context, leases []driver.Lease, count bool) (map[string]memory.Record, []memory.Record) {
	byTenant := map[string][]string{}
	for _, l := range leases {
		byTenant[l.Identity.Tenant] = append(byTenant[l.Identity.Tenant], l.Payload)
	}
	read := map[string]memory.Record{} // by work id
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
			read[workID(tenant, r.ID)] = r
		}
	}
	found := make(map[string]memory.Record, len(leases))
	var want []memory.Record
	for _, l := range leases {
		r, ok := read[l.ID]
		if ok && owns(l.Identity, r) {
			found[l.ID] = r
			if x.wants(r, false) {
				want = append(want, r)
				continue
			}
		}
		if count {
			x.stats.skipped.Add(1)
		}
	}
	return found, want
}

// complete completes leases and then queues again those whose records
// were rewritten without a vector since claimed read them (recs: what it
// found, by work id): their writers' Enqueue found the item still
// claimed and did nothing. That covers every lease, the records skipped
// as needing no vector too: a record that had its vector when it was
// read may have been rewritten before the lease was completed.
func (x *Indexer) complete(ctx context.Context, leases []driver.Lease, recs map[string]memory.Record) {
	var done []driver.Lease
	for _, l := range leases {
		if err := x.cl.Complete(ctx, l); err != nil {
			x.log.Debug("embedding: completing a claim failed (its lease lapsed and it was claimed again)", "record", l.Payload, "err", err)
			continue
		}
		done = append(done, l)
	}
	if len(done) == 0 {
		return
	}
	now, _ := x.claimed(ctx, done, false)
	var again []driver.Work
	for _, l := range done {
		// A record not read before (0) was written since.
		if cur, ok := now[l.ID]; ok && x.wants(cur, false) && cur.Version > recs[l.ID].Version {
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
