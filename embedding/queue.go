package embedding

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
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

// giveBack releases leases so the next claim takes them at once.
func (x *Indexer) giveBack(ctx context.Context, leases []driver.Lease) {
	for _, l := range leases {
		if err := x.cl.Release(ctx, l); err != nil {
			x.log.Debug("embedding: releasing a claim failed", "record", l.Payload, "err", err)
		}
	}
}

// complete completes leases and then queues again those whose records
// were rewritten without a vector since claimed read them (recs: what it
// found, by work id): their writers' Enqueue found the item still
// claimed and did nothing. That covers every lease, the records skipped
// as needing no vector too: a record that had its vector when it was
// read may have been rewritten before the lease was completed. With nil
// recs (leases given up) nothing is queued again.
func (x *Indexer) complete(ctx context.Context, leases []driver.Lease, recs map[string]memory.Record) {
	var done []driver.Lease
	for _, l := range leases {
		if err := x.cl.Complete(ctx, l); err != nil {
			x.log.Debug("embedding: completing a claim failed (its lease lapsed and it was claimed again)", "record", l.Payload, "err", err)
			continue
		}
		done = append(done, l)
	}
	if len(done) == 0 || recs == nil {
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
