package inmem

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

var (
	_ driver.Claimer    = (*Driver)(nil)
	_ driver.WorkEraser = (*Driver)(nil)
)

// workState is the driver's work queues. They share nothing with the
// records but the driver's clock and closed state, so they have a mutex
// of their own, taken while the driver's read lock is held, never the
// other way round: claims do not wait for record writes.
type workState struct {
	mu     sync.Mutex
	queues map[string]*workQueue
}

// workQueue is one named queue.
type workQueue struct {
	byID map[string]*workItem
	// order holds the items oldest first (created, then id); completed
	// items stay marked done until they are the majority, when order is
	// compacted, or lead it, when they are dropped from its front.
	order []*workItem
	done  int
}

// workItem is one pending or claimed item.
type workItem struct {
	work     driver.Work
	created  int64  // unix nanoseconds
	until    int64  // lease expiry in unix nanoseconds; meaningless while token is ""
	token    string // the current claim's token; "" while pending
	attempts int
	done     bool
}

// lease returns the item's current claim.
func (it *workItem) lease() driver.Lease {
	return driver.Lease{Work: it.work, Token: it.token, Expires: time.Unix(0, it.until).UTC(), Attempt: it.attempts}
}

// claimable reports whether the item may be claimed at now: it is pending
// or its lease has lapsed.
func (it *workItem) claimable(now int64) bool { return it.token == "" || it.until <= now }

// before orders items oldest first: by created, then by id.
func (it *workItem) before(o *workItem) int {
	if c := cmp.Compare(it.created, o.created); c != 0 {
		return c
	}
	return cmp.Compare(it.work.ID, o.work.ID)
}

// queues runs fn on the driver's work queues while holding their lock and
// the driver's read lock, or fails with memory.ErrClosed after Close.
func (d *Driver) queues(fn func(s *workState) error) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return memory.Errorf(memory.ErrClosed, "in-memory driver is closed")
	}
	s := &d.work
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queues == nil {
		s.queues = map[string]*workQueue{}
	}
	return fn(s)
}

// Enqueue adds items, all or nothing, and reports how many were new; see
// driver.Claimer. An id already pending or claimed in its queue, or
// repeated within the batch, is left as it first was.
func (d *Driver) Enqueue(ctx context.Context, items []driver.Work) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := driver.CheckEnqueue(items); err != nil {
		return 0, err
	}
	added := 0
	err := d.queues(func(s *workState) error {
		fresh := map[*workQueue][]*workItem{}
		for _, w := range items {
			q := s.queues[w.Queue]
			if q == nil {
				q = &workQueue{byID: map[string]*workItem{}}
				s.queues[w.Queue] = q
			}
			if q.byID[w.ID] != nil {
				continue
			}
			w.Created = w.Created.UTC().Round(0)
			it := &workItem{work: w, created: w.Created.UnixNano()}
			q.byID[w.ID] = it
			fresh[q] = append(fresh[q], it)
			added++
		}
		for q, its := range fresh {
			q.add(its)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return added, nil
}

// add puts new items into the queue's order.
func (q *workQueue) add(its []*workItem) {
	sorted := len(q.order) == 0 || q.order[len(q.order)-1].before(its[0]) < 0
	for i := 1; sorted && i < len(its); i++ {
		sorted = its[i-1].before(its[i]) < 0
	}
	q.order = append(q.order, its...)
	if !sorted {
		slices.SortFunc(q.order, (*workItem).before)
	}
}

// remove marks a completed item done and keeps the order compact.
func (s *workState) remove(queue string, q *workQueue, it *workItem) {
	it.done = true
	delete(q.byID, it.work.ID)
	q.done++
	if len(q.byID) == 0 {
		delete(s.queues, queue)
		return
	}
	lead := 0
	for lead < len(q.order) && q.order[lead].done {
		lead++
	}
	if lead > 0 {
		clear(q.order[:lead])
		q.order = q.order[lead:]
		q.done -= lead
	}
	if q.done*2 > len(q.order) {
		q.order = slices.DeleteFunc(q.order, func(it *workItem) bool { return it.done })
		q.done = 0
	}
}

// Claim leases up to n claimable items of queue, oldest first; see
// driver.Claimer.
func (d *Driver) Claim(ctx context.Context, queue string, n int, lease time.Duration) ([]driver.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := driver.CheckClaim(queue, n, lease); err != nil {
		return nil, err
	}
	var out []driver.Lease
	err := d.queues(func(s *workState) error {
		now, until, err := driver.LeaseEnd(d.clock, lease)
		if err != nil {
			return err
		}
		q := s.queues[queue]
		if q == nil {
			return nil
		}
		for _, it := range q.order {
			if len(out) == n {
				break
			}
			if it.done || !it.claimable(now) {
				continue
			}
			it.token, it.until = driver.NewLeaseToken(), until
			it.attempts++
			out = append(out, it.lease())
		}
		return nil
	})
	return out, err
}

// Renew extends a current claim; see driver.Claimer.
func (d *Driver) Renew(ctx context.Context, l driver.Lease, lease time.Duration) (driver.Lease, error) {
	if err := ctx.Err(); err != nil {
		return driver.Lease{}, err
	}
	if err := driver.CheckRenew(l, lease); err != nil {
		return driver.Lease{}, err
	}
	var out driver.Lease
	err := d.queues(func(s *workState) error {
		_, until, err := driver.LeaseEnd(d.clock, lease)
		if err != nil {
			return err
		}
		_, it, err := s.current(l)
		if err != nil {
			return err
		}
		it.until = until
		out = it.lease()
		return nil
	})
	return out, err
}

// Complete removes the item of a current claim; see driver.Claimer.
func (d *Driver) Complete(ctx context.Context, l driver.Lease) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := driver.CheckLease(l); err != nil {
		return err
	}
	return d.queues(func(s *workState) error {
		q, it, err := s.current(l)
		if err == nil {
			s.remove(l.Queue, q, it)
		}
		return err
	})
}

// Release makes the item of a current claim claimable at once; see
// driver.Claimer.
func (d *Driver) Release(ctx context.Context, l driver.Lease) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := driver.CheckLease(l); err != nil {
		return err
	}
	return d.queues(func(s *workState) error {
		_, it, err := s.current(l)
		if err == nil {
			it.token, it.until = "", 0
		}
		return err
	})
}

// EraseWork removes every item of queue whose identity f matches, pending
// or claimed, and reports how many; see driver.WorkEraser. The claims on
// them become stale, since their items are gone.
func (d *Driver) EraseWork(ctx context.Context, queue string, f memory.Filter) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := driver.CheckEraseWork(queue, f); err != nil {
		return 0, err
	}
	var n int64
	err := d.queues(func(s *workState) error {
		q := s.queues[queue]
		if q == nil {
			return nil
		}
		var gone []*workItem
		for _, it := range q.order {
			if !it.done && f.Matches(it.work.Identity) {
				gone = append(gone, it)
			}
		}
		// remove compacts q.order, so the items are found first.
		for _, it := range gone {
			s.remove(queue, q, it)
		}
		n = int64(len(gone))
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// current returns the item l claims, or memory.ErrConflict when l is not
// its current claim.
func (s *workState) current(l driver.Lease) (*workQueue, *workItem, error) {
	if q := s.queues[l.Queue]; q != nil {
		if it := q.byID[l.ID]; it != nil && it.token == l.Token {
			return q, it, nil
		}
	}
	return nil, nil, driver.StaleLease(l)
}
