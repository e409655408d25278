package worker_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/worker"
)

// TestEveryItemDoneOnce has two pools of eight workers share a queue:
// every item reaches a handler exactly once and is completed.
func TestEveryItemDoneOnce(t *testing.T) {
	q := newQueue(t, nil)
	var c calls
	h := func(_ context.Context, leases []driver.Lease) []error {
		c.add(leases)
		return nil
	}
	opt := worker.Options{Queue: "q", Workers: 8, Batch: 3, Poll: time.Millisecond}
	a, b := start(t, q, opt, h), start(t, q, opt, h)
	all := ids(300)
	for i := 0; i < len(all); i += 50 {
		enqueue(t, q, "q", all[i:i+50]...)
		a.Wake()
		b.Wake()
	}
	eventually(t, "every item is done", func() bool { return a.Stats().Done+b.Stats().Done == int64(len(all)) })
	_ = a.Close()
	_ = b.Close()
	if c.total() != len(all) {
		t.Errorf("%d handler calls for %d items", c.total(), len(all))
	}
	for _, id := range all {
		if n := c.of(id); n != 1 {
			t.Errorf("item %s handled %d times", id, n)
		}
		if pending(t, q, "q", id) {
			t.Errorf("item %s was not completed", id)
		}
	}
	if a.Stats().Done == 0 || b.Stats().Done == 0 {
		t.Logf("one pool did all the work: %+v, %+v", a.Stats(), b.Stats())
	}
}

// TestFailureThenSuccess fails an item once: it is claimable again only
// after Backoff of its attempt, then done.
func TestFailureThenSuccess(t *testing.T) {
	clk := newClock()
	q := newQueue(t, clk)
	var c calls
	var backoffs []int
	var mu sync.Mutex
	h := func(_ context.Context, leases []driver.Lease) []error {
		c.add(leases)
		if c.total() == 1 {
			return results(leases, errors.New("boom"))
		}
		return nil
	}
	p := start(t, q, worker.Options{Queue: "q", Poll: time.Millisecond, Backoff: func(attempt int) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		backoffs = append(backoffs, attempt)
		return time.Hour
	}}, h)
	enqueue(t, q, "q", "a")
	eventually(t, "the first claim fails", func() bool { return p.Stats().Failed == 1 })
	never(t, "the item was claimed again before its backoff ended", 30*time.Millisecond, func() bool { return c.total() > 1 })
	clk.advance(time.Hour)
	eventually(t, "the item is done", func() bool { return p.Stats().Done == 1 })
	mu.Lock()
	if len(backoffs) != 1 || backoffs[0] != 1 {
		t.Errorf("Backoff called with attempts %v, want [1]", backoffs)
	}
	mu.Unlock()
	if c.claims[1].Attempt != 2 {
		t.Errorf("second claim is attempt %d", c.claims[1].Attempt)
	}
	if st := p.Stats(); st != (worker.Stats{Done: 1, Failed: 1}) {
		t.Errorf("stats %+v", st)
	}
	_ = p.Close()
	if pending(t, q, "q", "a") {
		t.Error("the item was not completed")
	}
}

// TestNegativeBackoffLapses fails a batch of two items with a negative
// backoff: their claims are left to lapse, not renewed one by one, so
// neither comes back before the lease ends, and both come back in one
// batch.
func TestNegativeBackoffLapses(t *testing.T) {
	clk := newClock()
	q := newQueue(t, clk)
	var c calls
	var batches []int
	var mu sync.Mutex
	h := func(_ context.Context, leases []driver.Lease) []error {
		c.add(leases)
		mu.Lock()
		batches = append(batches, len(leases))
		first := len(batches) == 1
		mu.Unlock()
		if first {
			return results(leases, errors.New("boom"))
		}
		return nil
	}
	enqueue(t, q, "q", "a", "b")
	p := start(t, q, worker.Options{Queue: "q", Batch: 2, Lease: time.Minute, Poll: time.Millisecond,
		Backoff: func(int) time.Duration { return -1 }}, h)
	eventually(t, "the batch fails", func() bool { return p.Stats().Failed == 2 })
	never(t, "an item came back before its lease lapsed", 30*time.Millisecond, func() bool { return c.total() > 2 })
	clk.advance(time.Minute + time.Millisecond)
	eventually(t, "both items are done", func() bool { return p.Stats().Done == 2 })
	mu.Lock()
	defer mu.Unlock()
	if len(batches) != 2 || batches[0] != 2 || batches[1] != 2 {
		t.Errorf("batches of %v, want [2 2]: the failed batch came back split", batches)
	}
}

// TestGiveUp fails an item on every claim: on its MaxAttempts-th, GiveUp
// is called once, while the item is still queued, and it is completed.
func TestGiveUp(t *testing.T) {
	q := newQueue(t, nil)
	var c calls
	boom := errors.New("boom")
	h := func(_ context.Context, leases []driver.Lease) []error {
		c.add(leases)
		return results(leases, boom)
	}
	var gave atomic.Int32
	p := start(t, q, worker.Options{
		Queue: "q", Poll: time.Millisecond, MaxAttempts: 3,
		Backoff: func(int) time.Duration { return time.Millisecond },
		GiveUp: func(_ context.Context, l driver.Lease, err error) {
			gave.Add(1)
			if l.ID != "a" || l.Attempt != 3 || !errors.Is(err, boom) {
				t.Errorf("GiveUp(%s, attempt %d, %v)", l.ID, l.Attempt, err)
			}
			if !pending(t, q, "q", "a") {
				t.Error("GiveUp was called after the item was completed")
			}
		},
	}, h)
	enqueue(t, q, "q", "a")
	eventually(t, "the item is given up", func() bool { return p.Stats().GivenUp == 1 })
	_ = p.Close()
	if n := gave.Load(); n != 1 {
		t.Errorf("GiveUp called %d times", n)
	}
	if n := c.of("a"); n != 3 {
		t.Errorf("the item was handled %d times, want MaxAttempts = 3", n)
	}
	if st := p.Stats(); st != (worker.Stats{Failed: 3, GivenUp: 1}) {
		t.Errorf("stats %+v", st)
	}
	if pending(t, q, "q", "a") {
		t.Error("the item given up was not completed")
	}
}

// TestLater puts an item off more often than MaxAttempts: it is claimed
// again only once d has passed, and never given up.
func TestLater(t *testing.T) {
	clk := newClock()
	q := newQueue(t, clk)
	var c calls
	const putOff = 5
	h := func(_ context.Context, leases []driver.Lease) []error {
		c.add(leases)
		if c.total() <= putOff {
			return results(leases, worker.Later(10*time.Minute))
		}
		return nil
	}
	p := start(t, q, worker.Options{
		Queue: "q", Poll: time.Millisecond, MaxAttempts: 2,
		GiveUp: func(context.Context, driver.Lease, error) { t.Error("an item put off was given up") },
	}, h)
	enqueue(t, q, "q", "a")
	for i := 1; i <= putOff; i++ {
		eventually(t, "the item is claimed", func() bool { return c.total() == i })
		never(t, "the item was claimed again before its time", 10*time.Millisecond, func() bool { return c.total() > i })
		clk.advance(10 * time.Minute)
	}
	eventually(t, "the item is done", func() bool { return p.Stats().Done == 1 })
	if st := p.Stats(); st != (worker.Stats{Done: 1}) {
		t.Errorf("stats %+v", st)
	}
}

// TestLaterZeroGivesBackAtOnce: Later with less than a lease's minimum
// releases the item, claimed again without waiting for Poll.
func TestLaterZeroGivesBackAtOnce(t *testing.T) {
	q := newQueue(t, nil)
	var c calls
	h := func(_ context.Context, leases []driver.Lease) []error {
		c.add(leases)
		if c.total() == 1 {
			return results(leases, worker.Later(0))
		}
		return nil
	}
	p := start(t, q, worker.Options{Queue: "q", Poll: time.Hour}, h)
	enqueue(t, q, "q", "a")
	p.Wake()
	eventually(t, "the item is done", func() bool { return p.Stats().Done == 1 })
}

// TestSettled: the pool leaves an item its handler settled alone.
func TestSettled(t *testing.T) {
	q := newQueue(t, nil)
	h := func(_ context.Context, leases []driver.Lease) []error {
		return results(leases, worker.Settled)
	}
	p := start(t, q, worker.Options{Queue: "q", Poll: time.Millisecond}, h)
	enqueue(t, q, "q", "a")
	eventually(t, "the item is handled", func() bool { return p.Stats().Done == 1 })
	_ = p.Close()
	if !pending(t, q, "q", "a") {
		t.Error("the pool completed an item its handler settled")
	}
}

// TestHalt: a handler's Halt gives the item back and stops the pool.
func TestHalt(t *testing.T) {
	q := newQueue(t, nil)
	var c calls
	why := errors.New("the model changed")
	h := func(_ context.Context, leases []driver.Lease) []error {
		c.add(leases)
		return results(leases, worker.Halt(why))
	}
	p := start(t, q, worker.Options{Queue: "q", Workers: 3, Poll: time.Millisecond}, h)
	enqueue(t, q, "q", "a")
	eventually(t, "the pool halts", func() bool { return p.Err() != nil })
	if !errors.Is(p.Err(), why) {
		t.Errorf("Err = %v", p.Err())
	}
	enqueue(t, q, "q", "b")
	p.Wake()
	never(t, "a halted pool claimed", 20*time.Millisecond, func() bool { return c.total() > 1 })
	_ = p.Close()
	// Given back: claimable at once.
	ls, err := q.Claim(context.Background(), "q", 2, time.Minute)
	if err != nil || len(ls) != 2 || ls[0].ID != "a" {
		t.Errorf("Claim after the halt = %v, %v", ls, err)
	}
}

// TestHandlerBug: a result slice of the wrong length fails the batch; a
// nil one completes it.
func TestHandlerBug(t *testing.T) {
	q := newQueue(t, nil)
	var n atomic.Int32
	h := func(_ context.Context, leases []driver.Lease) []error {
		if n.Add(1) == 1 {
			return []error{nil}
		}
		return nil
	}
	p := start(t, q, worker.Options{Queue: "q", Batch: 2, Poll: time.Millisecond, Backoff: func(int) time.Duration { return time.Millisecond }}, h)
	enqueue(t, q, "q", "a", "b")
	eventually(t, "both items are done", func() bool { return p.Stats().Done == 2 })
	if st := p.Stats(); st.Failed != 2 {
		t.Errorf("stats %+v, want the first batch's two items failed", st)
	}
}

// TestCloseDrains: Close waits for a batch in flight, whose context it
// does not cancel, and the batch is settled before Close returns.
func TestCloseDrains(t *testing.T) {
	q := newQueue(t, nil)
	entered, release := make(chan struct{}), make(chan struct{})
	var cancelled atomic.Bool
	h := func(ctx context.Context, leases []driver.Lease) []error {
		close(entered)
		<-release
		cancelled.Store(ctx.Err() != nil)
		return nil
	}
	p, err := worker.Start(q, worker.Options{Queue: "q", Poll: time.Millisecond}, h)
	if err != nil {
		t.Fatal(err)
	}
	enqueue(t, q, "q", "a")
	<-entered
	closed := make(chan error)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a batch was in flight", err)
	case <-time.After(30 * time.Millisecond):
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if cancelled.Load() {
		t.Error("Close cancelled the context of the batch in flight")
	}
	if pending(t, q, "q", "a") {
		t.Error("the batch in flight was not completed before Close returned")
	}
	p.Wake() // a no-op after Close
}

// TestCloseConcurrent closes an idle pool with a long Poll from several
// goroutines at once, and again: every call returns promptly.
func TestCloseConcurrent(t *testing.T) {
	q := newQueue(t, nil)
	p, err := worker.Start(q, worker.Options{Queue: "q", Workers: 4, Poll: time.Hour}, func(context.Context, []driver.Lease) []error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if err := p.Close(); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		_ = p.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("Close did not return")
	}
}

// countClaims counts Claim calls.
type countClaims struct {
	driver.Claimer
	n atomic.Int32
}

func (c *countClaims) Claim(ctx context.Context, queue string, n int, lease time.Duration) ([]driver.Lease, error) {
	defer c.n.Add(1)
	return c.Claimer.Claim(ctx, queue, n, lease)
}

// TestWake: with an hour's Poll, an item enqueued after the worker found
// the queue empty is handled at once when the pool is woken.
func TestWake(t *testing.T) {
	q := &countClaims{Claimer: newQueue(t, nil)}
	p := start(t, q, worker.Options{Queue: "q", Poll: time.Hour}, func(context.Context, []driver.Lease) []error { return nil })
	eventually(t, "the worker finds the queue empty", func() bool { return q.n.Load() == 1 })
	enqueue(t, q, "q", "a")
	p.Wake()
	p.Wake() // never blocks
	eventually(t, "the item is done", func() bool { return p.Stats().Done == 1 })
}

// TestClaimErrorsRetried: a failing Claim is retried after Poll.
func TestClaimErrorsRetried(t *testing.T) {
	q := &failClaims{Claimer: newQueue(t, nil)}
	q.fails.Store(3)
	p := start(t, q, worker.Options{Queue: "q", Poll: time.Millisecond}, func(context.Context, []driver.Lease) []error { return nil })
	enqueue(t, q, "q", "a")
	eventually(t, "the item is done", func() bool { return p.Stats().Done == 1 })
	if n := q.fails.Load(); n > 0 {
		t.Errorf("%d claim failures left", n)
	}
}

// failClaims fails the first Claims.
type failClaims struct {
	driver.Claimer
	fails atomic.Int32
}

func (c *failClaims) Claim(ctx context.Context, queue string, n int, lease time.Duration) ([]driver.Lease, error) {
	if c.fails.Add(-1) >= 0 {
		return nil, memory.Errorf(memory.ErrUnavailable, "no database")
	}
	return c.Claimer.Claim(ctx, queue, n, lease)
}

func TestInvalidOptions(t *testing.T) {
	q := newQueue(t, nil)
	h := func(context.Context, []driver.Lease) []error { return nil }
	for _, c := range []struct {
		name string
		cl   driver.Claimer
		opt  worker.Options
		h    worker.Handler
	}{
		{"nil claimer", nil, worker.Options{Queue: "q"}, h},
		{"nil handler", q, worker.Options{Queue: "q"}, nil},
		{"no queue", q, worker.Options{}, h},
		{"long queue", q, worker.Options{Queue: strings.Repeat("q", driver.MaxQueueBytes+1)}, h},
		{"negative workers", q, worker.Options{Queue: "q", Workers: -1}, h},
		{"negative batch", q, worker.Options{Queue: "q", Batch: -1}, h},
		{"batch too large", q, worker.Options{Queue: "q", Batch: memory.MaxBatch + 1}, h},
		{"lease too short", q, worker.Options{Queue: "q", Lease: time.Nanosecond}, h},
		{"lease too long", q, worker.Options{Queue: "q", Lease: driver.MaxLease + 1}, h},
		{"negative poll", q, worker.Options{Queue: "q", Poll: -1}, h},
		{"negative attempts", q, worker.Options{Queue: "q", MaxAttempts: -1}, h},
	} {
		p, err := worker.Start(c.cl, c.opt, c.h)
		if !errors.Is(err, memory.ErrInvalidArgument) {
			t.Errorf("%s: %v", c.name, err)
		}
		if p != nil {
			_ = p.Close()
			t.Errorf("%s: a pool was started", c.name)
		}
	}
}

func TestDefaultBackoff(t *testing.T) {
	for attempt := -1; attempt <= 40; attempt++ {
		full := 5 * time.Minute
		if attempt <= 1 {
			full = time.Second
		} else if attempt < 10 {
			full = min(time.Second<<(attempt-1), full)
		}
		for range 20 {
			if d := worker.DefaultBackoff(attempt); d < full/2 || d > full {
				t.Fatalf("DefaultBackoff(%d) = %s, want between %s and %s", attempt, d, full/2, full)
			}
		}
	}
}
