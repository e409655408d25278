package backendtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// raceCheck is the bookkeeping of checkClaimRace, shared by its workers.
type raceCheck struct {
	items    []driver.Work
	index    map[string]int // item id -> position in items; read only
	deadline time.Time      // set before the workers start
	abort    atomic.Bool    // stop early: failures enough

	completions []atomic.Int32 // successful Completes per item
	completed   atomic.Int64   // successful Completes of all items

	busy, maxBusy atomic.Int64 // workers inside their work now, and at most

	mu    sync.Mutex
	spans [][]claimSpan // every claim of each item

	claims, leased, died, slow, renewing, renewals, released, lapsed atomic.Int64

	calls, callNanos, slowestCall atomic.Int64 // the workers' driver calls
}

// timed records the duration of a driver call that started at start and
// returns the time it returned.
func (rc *raceCheck) timed(start time.Time) time.Time {
	end := time.Now()
	d := int64(end.Sub(start))
	rc.calls.Add(1)
	rc.callNanos.Add(d)
	for m := rc.slowestCall.Load(); d > m && !rc.slowestCall.CompareAndSwap(m, d); m = rc.slowestCall.Load() {
	}
	return end
}

// claimSpan is the time during which one claim of an item ran: from the
// driver's reading of its clock when it made the claim (the expiry less
// the lease) to its last expiry, or to its release.
type claimSpan struct {
	from, to time.Time // the claim's clock reading and its last expiry
	returned time.Time // when the Claim call returned
	released time.Time // when a successful Release was called; zero if none
	token    string
	worker   string
}

// follows reports whether claim b can have been made after claim a of the
// same item ended. A claim is made only when the item's lease has run out
// by the claiming driver's clock, so b's clock reading is at or after a's
// last expiry; or when a was released, and then b returned after a's
// Release was called.
func follows(a, b claimSpan) bool {
	return !b.from.Before(a.to) || (!a.released.IsZero() && !b.returned.Before(a.released))
}

// Shares of the claims that end otherwise than with a prompt Complete, in
// percent.
const (
	raceDiePercent     = 3 // the worker's context is cancelled mid-work
	raceSlowPercent    = 1 // the work outlives the lease, then completes
	raceRenewPercent   = 1 // the work outlives the lease, renewing it
	raceReleasePercent = 2 // the worker gives its items back
)

func newRaceCheck(n int) *raceCheck {
	rc := &raceCheck{
		items:       make([]driver.Work, n),
		index:       make(map[string]int, n),
		completions: make([]atomic.Int32, n),
		spans:       make([][]claimSpan, n),
	}
	for i := range n {
		id := fmt.Sprintf("race-%05d", i)
		// Creation order differs from id order.
		created := t0.Add(time.Duration((i*7919)%n) * time.Microsecond)
		rc.items[i] = driver.Work{
			Queue: "race", ID: id, Identity: memory.Identity{Tenant: "race", User: fmt.Sprintf("u%d", i%5)},
			Payload: fmt.Sprintf(`{"item":%d}`, i), Created: created,
		}
		rc.index[id] = i
	}
	return rc
}

// over reports whether the workers should stop short of completing
// everything.
func (rc *raceCheck) over() bool { return rc.abort.Load() || time.Now().After(rc.deadline) }

// fail reports a failure from a worker and stops the race.
func (rc *raceCheck) fail(c *collector, format string, args ...any) {
	c.Errorf(format, args...)
	rc.abort.Store(true)
}

// work sleeps for d, counted as a worker inside its work, and reports
// false when ctx is done first.
func (rc *raceCheck) work(ctx context.Context, d time.Duration) bool {
	n := rc.busy.Add(1)
	defer rc.busy.Add(-1)
	for m := rc.maxBusy.Load(); n > m && !rc.maxBusy.CompareAndSwap(m, n); m = rc.maxBusy.Load() {
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// worker claims and works until every item is completed.
func (rc *raceCheck) worker(c *collector, cl driver.Claimer, name, q string, rng *rand.Rand) {
	bg := context.Background()
	for rc.completed.Load() < int64(len(rc.items)) && !rc.over() {
		asked := time.Now()
		ls, err := cl.Claim(bg, q, 1+rng.IntN(claimRaceMaxClaim), claimRaceLease)
		returned := rc.timed(asked)
		if err != nil {
			rc.fail(c, "%s: Claim: %v", name, err)
			return
		}
		if len(ls) == 0 {
			time.Sleep(time.Millisecond)
			continue
		}
		rc.claims.Add(1)
		rc.leased.Add(int64(len(ls)))
		if !rc.claimed(c, name, ls, asked, returned) {
			return
		}
		switch k := rng.IntN(100); {
		case k < raceDiePercent:
			ctx, cancel := context.WithCancel(bg)
			time.AfterFunc(time.Duration(1+rng.IntN(4))*time.Millisecond, cancel)
			if rc.work(ctx, time.Second) {
				rc.fail(c, "%s: the cancelled work ran to its end", name)
			}
			// The dying worker's last call fails and completes nothing.
			if err := cl.Complete(ctx, ls[0]); !errors.Is(err, context.Canceled) {
				rc.fail(c, "%s: Complete with a cancelled context returned %v, want context.Canceled", name, err)
			}
			rc.died.Add(1)
		case k < raceDiePercent+raceSlowPercent:
			rc.work(bg, claimRaceLease+time.Duration(20+rng.IntN(60))*time.Millisecond)
			rc.complete(c, cl, name, ls)
			rc.slow.Add(1)
		case k < raceDiePercent+raceSlowPercent+raceRenewPercent:
			for range 4 {
				rc.work(bg, claimRaceLease/3)
				ls = rc.renew(c, cl, name, ls)
			}
			rc.complete(c, cl, name, ls)
			rc.renewing.Add(1)
		case k < raceDiePercent+raceSlowPercent+raceRenewPercent+raceReleasePercent:
			rc.work(bg, time.Duration(1+rng.IntN(3))*time.Millisecond)
			rc.release(c, cl, name, ls)
			rc.released.Add(1)
		default:
			rc.work(bg, time.Duration(4+rng.IntN(20))*time.Millisecond)
			rc.complete(c, cl, name, ls)
		}
	}
}

// claimed checks and records the leases of one Claim, asked for and
// returned at the given times.
func (rc *raceCheck) claimed(c *collector, name string, ls []driver.Lease, asked, returned time.Time) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, l := range ls {
		i, ok := rc.index[l.ID]
		if !ok || l.Queue != "race" {
			rc.fail(c, "%s: Claim returned item %q of queue %q, which was never enqueued", name, l.ID, l.Queue)
			return false
		}
		if d := workDiff(l.Work, rc.items[i]); d != "" {
			rc.fail(c, "%s: claimed item %q differs from the one enqueued (-want +got):\n%s", name, l.ID, d)
			return false
		}
		from := l.Expires.Add(-claimRaceLease)
		if from.Before(asked) || from.After(returned) || l.Token == "" || l.Attempt < 1 {
			rc.fail(c, "%s: claim of %q has token %q, attempt %d, expiry %s; want a token, an attempt, and an expiry the lease after a moment between %s and %s",
				name, l.ID, l.Token, l.Attempt, l.Expires.Format(time.RFC3339Nano), asked.Format(time.RFC3339Nano), returned.Format(time.RFC3339Nano))
			return false
		}
		rc.spans[i] = append(rc.spans[i], claimSpan{from: from, to: l.Expires, returned: returned, token: l.Token, worker: name})
	}
	return true
}

// span returns the recorded span of lease l. The caller holds rc.mu.
func (rc *raceCheck) span(l driver.Lease) *claimSpan {
	spans := rc.spans[rc.index[l.ID]]
	for i := range spans {
		if spans[i].token == l.Token {
			return &spans[i]
		}
	}
	return nil
}

// settled judges the outcome of a Renew, Complete or Release of l that
// returned at the given time: success, or memory.ErrConflict once l's
// lease had run out, when another worker may have claimed the item. It
// reports whether the call succeeded.
func (rc *raceCheck) settled(c *collector, name, call string, l driver.Lease, err error, returned time.Time) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, memory.ErrConflict) && !returned.Before(l.Expires):
		rc.lapsed.Add(1)
	case errors.Is(err, memory.ErrConflict):
		rc.fail(c, "%s: %s of %q failed with %v at %s, before its lease ran out at %s: nobody else could have claimed it",
			name, call, l.ID, err, returned.Format(time.RFC3339Nano), l.Expires.Format(time.RFC3339Nano))
	default:
		rc.fail(c, "%s: %s of %q: %v", name, call, l.ID, err)
	}
	return false
}

// complete completes ls and counts the successes.
func (rc *raceCheck) complete(c *collector, cl driver.Claimer, name string, ls []driver.Lease) {
	for _, l := range ls {
		called := time.Now()
		err := cl.Complete(context.Background(), l)
		if rc.settled(c, name, "Complete", l, err, rc.timed(called)) {
			rc.completions[rc.index[l.ID]].Add(1)
			rc.completed.Add(1)
		}
	}
}

// renew renews ls and returns the leases still held.
func (rc *raceCheck) renew(c *collector, cl driver.Claimer, name string, ls []driver.Lease) []driver.Lease {
	var kept []driver.Lease
	for _, l := range ls {
		called := time.Now()
		nl, err := cl.Renew(context.Background(), l, claimRaceLease)
		if !rc.settled(c, name, "Renew", l, err, rc.timed(called)) {
			continue
		}
		if nl.ID != l.ID || nl.Token != l.Token || nl.Expires.Before(l.Expires) {
			rc.fail(c, "%s: Renew of %q (token %q, expiring %s) returned %q (token %q, expiring %s)",
				name, l.ID, l.Token, l.Expires.Format(time.RFC3339Nano), nl.ID, nl.Token, nl.Expires.Format(time.RFC3339Nano))
			continue
		}
		rc.mu.Lock()
		if s := rc.span(l); s != nil && nl.Expires.After(s.to) {
			s.to = nl.Expires
		}
		rc.mu.Unlock()
		rc.renewals.Add(1)
		kept = append(kept, nl)
	}
	return kept
}

// release releases ls.
func (rc *raceCheck) release(c *collector, cl driver.Claimer, name string, ls []driver.Lease) {
	for _, l := range ls {
		called := time.Now()
		err := cl.Release(context.Background(), l)
		if rc.settled(c, name, "Release", l, err, rc.timed(called)) {
			rc.mu.Lock()
			if s := rc.span(l); s != nil {
				s.released = called
			}
			rc.mu.Unlock()
		}
	}
}

// report checks the race's outcome once every worker is done.
func (rc *raceCheck) report(r reporter, e *env, elapsed time.Duration) {
	r.Helper()
	f := &failures{r: r, max: 10, seed: e.seed}
	defer f.done()
	if !rc.abort.Load() && rc.completed.Load() < int64(len(rc.items)) {
		f.Errorf("the race did not finish within %s: %d completions of %d items", claimRaceDeadline, rc.completed.Load(), len(rc.items))
	}
	for i := range rc.items {
		if n := rc.completions[i].Load(); n != 1 {
			f.Errorf("item %s was completed %d times, want exactly once; its claims: %s", rc.items[i].ID, n, spanList(rc.spans[i]))
		}
		spans := rc.spans[i]
		for j := range spans {
			for k := j + 1; k < len(spans); k++ {
				if a, b := spans[j], spans[k]; !follows(a, b) && !follows(b, a) {
					f.Errorf("item %s had two claims at once: %s", rc.items[i].ID, spanList([]claimSpan{a, b}))
				}
			}
		}
		if f.enough() {
			return
		}
	}
	if m := rc.maxBusy.Load(); m < claimRaceMinBusy {
		r.Errorf("at most %d of the %d workers were ever inside their work at once, want at least %d: a claim seems to hold a lock or transaction while its worker works",
			m, claimRaceReplicas*claimRaceWorkers, claimRaceMinBusy)
	}
	for _, s := range []struct {
		what string
		n    int64
	}{{"died", rc.died.Load()}, {"outlived its lease", rc.slow.Load()}, {"renewed its lease", rc.renewing.Load()}, {"released its items", rc.released.Load()}} {
		if s.n == 0 && !rc.abort.Load() {
			r.Errorf("no worker %s: that case was not tested", s.what)
		}
	}
	r.Logf("%d items in %s: %d claims of %d items; %d claims died, %d outlived their lease, %d renewed (%d renewals), %d released; %d calls found their lease lapsed and taken over; at most %d of %d workers working at once; %d driver calls took %s on average, %s at most",
		len(rc.items), elapsed.Round(time.Millisecond), rc.claims.Load(), rc.leased.Load(), rc.died.Load(), rc.slow.Load(),
		rc.renewing.Load(), rc.renewals.Load(), rc.released.Load(), rc.lapsed.Load(), rc.maxBusy.Load(), claimRaceReplicas*claimRaceWorkers,
		rc.calls.Load(), (time.Duration(rc.callNanos.Load()) / time.Duration(max(1, rc.calls.Load()))).Round(time.Microsecond),
		time.Duration(rc.slowestCall.Load()).Round(time.Microsecond))
}

// spanList describes an item's claims for a failure message.
func spanList(spans []claimSpan) string {
	var out []string
	for _, s := range spans {
		d := fmt.Sprintf("%s claimed at %s until %s, returned at %s", s.worker, s.from.Format("15:04:05.000000"), s.to.Format("15:04:05.000000"), s.returned.Format("15:04:05.000000"))
		if !s.released.IsZero() {
			d += ", released at " + s.released.Format("15:04:05.000000")
		}
		out = append(out, d)
	}
	return fmt.Sprintf("%q", out)
}
