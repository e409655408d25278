package backendtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// The checks of driver.Claimer. All but ClaimRace run under the fake
// clock, so lease boundaries are checked to the nanosecond; ClaimRace runs
// on real time with short leases.

// claimer returns d as a driver.Claimer when Config.Claimer declares it,
// failing when the declaration and the driver disagree.
func claimer(r reporter, e *env, d driver.Driver) (driver.Claimer, bool) {
	r.Helper()
	return capability[driver.Claimer](r, d, e.cfg.Claimer, "Claimer", "driver.Claimer", "the work queue is not checked")
}

// openClaimer returns a new driver under the fake clock, as a Claimer too,
// or false when the driver has no work queue.
func (e *env) openClaimer(r reporter) (driver.Driver, driver.Claimer, *fakeClock, bool) {
	r.Helper()
	d, clk := e.open(r)
	cl, ok := claimer(r, e, d)
	return d, cl, clk, ok
}

// openWith returns a new driver whose clock is clock. The driver is closed
// when the test ends.
func (e *env) openWith(r reporter, clock memory.Clock) driver.Driver {
	r.Helper()
	d := e.cfg.NewDriver(e.t, clock)
	if d == nil {
		r.Fatalf("Config.NewDriver returned a nil driver")
	}
	e.t.Cleanup(func() { _ = d.Close() })
	return d
}

// newReplica returns another handle on d's storage from Config.Replica,
// closed when the test ends, or nil when the driver has no replicas.
func (e *env) newReplica(r reporter, d driver.Driver) (driver.Driver, driver.Claimer) {
	r.Helper()
	if e.cfg.Replica == nil {
		return nil, nil
	}
	rd := e.cfg.Replica(e.t, d)
	if rd == nil {
		r.Fatalf("Config.Replica returned a nil driver")
	}
	if rd == d {
		r.Fatalf("Config.Replica returned the driver itself rather than another handle on its storage; leave Replica nil for a driver without replicas")
	}
	e.t.Cleanup(func() { _ = rd.Close() })
	cl, ok := rd.(driver.Claimer)
	if !ok {
		r.Fatalf("the replica (%T) does not implement driver.Claimer, yet the driver does", rd)
	}
	return rd, cl
}

// replica returns a Claimer on d's storage through another handle, or d
// itself when the driver has no replicas.
func (e *env) replica(r reporter, d driver.Driver) driver.Claimer {
	r.Helper()
	if _, cl := e.newReplica(r, d); cl != nil {
		return cl
	}
	return d.(driver.Claimer)
}

// workItem returns a work item of queue with an identity and a payload
// derived from its id.
func workItem(queue, id string, created time.Time) driver.Work {
	return driver.Work{Queue: queue, ID: id, Identity: memory.Identity{Tenant: "work", User: "u-" + id}, Payload: "payload of " + id, Created: created}
}

// mustEnqueue enqueues items and stops the check unless it succeeds and
// reports want new items.
func mustEnqueue(r reporter, cl driver.Claimer, what string, items []driver.Work, want int) {
	r.Helper()
	n, err := cl.Enqueue(context.Background(), items)
	if err != nil {
		r.Fatalf("%s: Enqueue of %d items: %v", what, len(items), err)
	}
	if n != want {
		r.Errorf("%s: Enqueue of %d items reported %d new, want %d", what, len(items), n, want)
	}
}

// mustClaim claims and stops the check on error. It checks that the
// leases come oldest first and name no item twice.
func mustClaim(r reporter, cl driver.Claimer, what, queue string, n int, lease time.Duration) []driver.Lease {
	r.Helper()
	ls, err := cl.Claim(context.Background(), queue, n, lease)
	if err != nil {
		r.Fatalf("%s: Claim(%q, %d, %s): %v", what, queue, n, lease, err)
	}
	if len(ls) > n {
		r.Errorf("%s: Claim(%q, %d, %s) returned %d leases, more than asked for", what, queue, n, lease, len(ls))
	}
	seen := map[string]bool{}
	for i, l := range ls {
		if seen[l.ID] {
			r.Errorf("%s: Claim returned item %q twice", what, l.ID)
		}
		seen[l.ID] = true
		if l.Queue != queue {
			r.Errorf("%s: Claim of queue %q returned item %q of queue %q", what, queue, l.ID, l.Queue)
		}
		if i > 0 && workOrder(ls[i-1].Work, l.Work) >= 0 {
			r.Errorf("%s: Claim returned %q (created %s) before %q (created %s); want oldest first, then by id",
				what, ls[i-1].ID, ls[i-1].Created.Format(time.RFC3339Nano), l.ID, l.Created.Format(time.RFC3339Nano))
		}
	}
	return ls
}

// workOrder is the suite's own statement of claim order: Created
// ascending, then ID ascending (byte-wise).
func workOrder(a, b driver.Work) int {
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// leaseIDs returns the item ids of ls in order.
func leaseIDs(ls []driver.Lease) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.ID
	}
	return out
}

// workDiff describes how a claimed item differs from the enqueued one, as
// a cmp.Diff (-want +got); it is empty when they agree. Times compare with
// Equal; a long Payload is shown from its first difference.
func workDiff(got, want driver.Work) string {
	want.Payload, got.Payload = shownText(want.Payload, got.Payload)
	return cmp.Diff(want, got)
}

// checkLease checks a fresh claim or renewal: the item's fields, a token,
// the expiry now+lease exactly, and the attempt number.
func checkLease(r reporter, what string, l driver.Lease, want driver.Work, expires time.Time, attempt int) bool {
	r.Helper()
	ok := true
	if d := workDiff(l.Work, want); d != "" {
		r.Errorf("%s: item %q differs from the one enqueued (-want +got):\n%s", what, want.ID, d)
		ok = false
	}
	if l.Token == "" {
		r.Errorf("%s: item %q has an empty token", what, l.ID)
		ok = false
	}
	if !l.Expires.Equal(expires) {
		r.Errorf("%s: item %q expires at %s, want %s (the driver's clock plus the lease)", what, l.ID, l.Expires.Format(time.RFC3339Nano), expires.Format(time.RFC3339Nano))
		ok = false
	}
	if l.Attempt != attempt {
		r.Errorf("%s: item %q is at attempt %d, want %d", what, l.ID, l.Attempt, attempt)
		ok = false
	}
	return ok
}

// checkClaim checks the queue's basic contract: Enqueue counts new items
// and leaves present ones alone, Claim hands out items oldest first (by
// Created, then by id byte-wise) with every field intact, fresh distinct
// tokens, the expiry now+lease and attempt 1, a claimed item is not
// handed out again while its lease runs, queues are independent, and an
// item completes exactly once, after which its id may be enqueued anew.
func checkClaim(r reporter, e *env) {
	_, cl, clk, ok := e.openClaimer(r)
	if !ok {
		return
	}
	ctx := context.Background()
	const q, other = "claim", "claim-other"
	if ls := mustClaim(r, cl, "Claim of a queue never used", q, 10, time.Minute); len(ls) != 0 {
		r.Errorf("Claim of a queue never used returned %q", leaseIDs(ls))
	}
	if n, err := cl.Enqueue(ctx, nil); err != nil || n != 0 {
		r.Errorf("Enqueue of no items: got %d new, error %v; want 0 and no error", n, err)
	}

	full := memory.Identity{Tenant: "t", User: "alice", Agent: "kaos://agent/ns/a", Instance: "i-1", Squad: "sq", Session: "s-1"}
	at := t0.Add(2 * time.Millisecond)
	items := []driver.Work{
		{Queue: q, ID: "b", Identity: full, Payload: `{"n":1}`, Created: at},
		{Queue: q, ID: "a", Identity: memory.Identity{Tenant: "t2"}, Payload: "", Created: at},
		{Queue: q, ID: "Z", Identity: memory.Identity{}, Payload: "upper case sorts first", Created: at},
		{Queue: q, ID: "é", Identity: full, Payload: "héllo ✓ 🎉", Created: at},
		{Queue: q, ID: "old", Identity: full, Payload: "oldest", Created: t0.Add(-time.Hour)},
		{Queue: q, ID: "new", Identity: full, Payload: "created in the future", Created: t0.Add(time.Hour)},
		{Queue: q, ID: "ns", Identity: full, Payload: "one nanosecond later", Created: at.Add(time.Nanosecond)},
	}
	want := map[string]driver.Work{}
	for _, w := range items {
		want[w.ID] = w
	}
	mustEnqueue(r, cl, "seven new items", items, 7)
	again := items[0]
	again.Payload = "replaced?"
	mustEnqueue(r, cl, "one present item, one new, the same id in another queue", []driver.Work{
		again,
		{Queue: q, ID: "later", Identity: full, Payload: "later", Created: t0.Add(2 * time.Hour)},
		{Queue: other, ID: "b", Identity: full, Payload: "other queue", Created: t0},
	}, 2)
	want["later"] = driver.Work{Queue: q, ID: "later", Identity: full, Payload: "later", Created: t0.Add(2 * time.Hour)}
	dups := []driver.Work{
		{Queue: q, ID: "dup", Identity: full, Payload: "first", Created: t0.Add(3 * time.Hour)},
		{Queue: q, ID: "dup", Identity: full, Payload: "second", Created: t0.Add(3 * time.Hour)},
	}
	mustEnqueue(r, cl, "one id twice in a batch", dups, 1)

	wantOrder := []string{"old", "Z", "a", "b", "é", "ns", "new", "later", "dup"}
	first := mustClaim(r, cl, "first claim", q, 3, time.Minute)
	if !slices.Equal(leaseIDs(first), wantOrder[:3]) {
		r.Errorf("first Claim of 3 returned %q, want %q: oldest first, then by id byte-wise", leaseIDs(first), wantOrder[:3])
	}
	mustEnqueue(r, cl, "an id that is claimed", []driver.Work{items[4]}, 0)
	rest := mustClaim(r, cl, "second claim", q, 100, 30*time.Second)
	if !slices.Equal(leaseIDs(rest), wantOrder[3:]) {
		r.Errorf("second Claim of up to 100 returned %q, want the other %d items %q", leaseIDs(rest), len(wantOrder)-3, wantOrder[3:])
	}
	tokens := map[string]string{}
	for i, l := range append(slices.Clone(first), rest...) {
		lease := time.Minute
		if i >= len(first) {
			lease = 30 * time.Second
		}
		w, known := want[l.ID]
		if l.ID == "dup" {
			known = true
			w = dups[0]
			if l.Payload == dups[1].Payload {
				w = dups[1]
			}
		}
		if !known {
			r.Errorf("Claim returned item %q, which was never enqueued", l.ID)
			continue
		}
		checkLease(r, "claim of "+l.ID, l, w, t0.Add(lease), 1)
		if prev, dup := tokens[l.Token]; dup {
			r.Errorf("items %q and %q were claimed with the same token %q; every claim gets its own", prev, l.ID, l.Token)
		}
		tokens[l.Token] = l.ID
	}
	if ls := mustClaim(r, cl, "claim of a fully claimed queue", q, 10, time.Minute); len(ls) != 0 {
		r.Errorf("Claim returned %q while every item's lease still runs", leaseIDs(ls))
	}
	o := mustClaim(r, cl, "claim of the other queue", other, 10, time.Minute)
	if len(o) != 1 || o[0].ID != "b" || o[0].Payload != "other queue" {
		r.Errorf("Claim of queue %q returned %+v, want its one item b with payload %q", other, o, "other queue")
	}

	for _, l := range append(append(slices.Clone(first), rest...), o...) {
		noErr(r, "Complete of "+l.ID, cl.Complete(ctx, l))
		wantErr(r, "second Complete of "+l.ID, cl.Complete(ctx, l), memory.ErrConflict)
	}
	clk.Advance(24 * time.Hour)
	for _, qq := range []string{q, other} {
		if ls := mustClaim(r, cl, "claim after completing everything", qq, 100, time.Minute); len(ls) != 0 {
			r.Errorf("queue %q hands out %q after every item was completed", qq, leaseIDs(ls))
		}
	}
	mustEnqueue(r, cl, "a completed id again", []driver.Work{items[0]}, 1)
	ls := mustClaim(r, cl, "claim of the re-enqueued item", q, 10, time.Minute)
	if len(ls) != 1 {
		r.Fatalf("claim of the one re-enqueued item returned %q", leaseIDs(ls))
	}
	checkLease(r, "claim of the re-enqueued item", ls[0], items[0], clk.Now().Add(time.Minute), 1)
}

// checkClaimLeases checks lease expiry to the nanosecond, reclaiming with
// a new token and the next attempt, and the token rules of Renew,
// Complete and Release: only the current claim's token works, lapsed or
// not, and a stale one fails with memory.ErrConflict and changes nothing.
func checkClaimLeases(r reporter, e *env) {
	_, cl, clk, ok := e.openClaimer(r)
	if !ok {
		return
	}
	ctx := context.Background()
	const q = "leases"
	items := []driver.Work{workItem(q, "a", t0), workItem(q, "b", t0.Add(1)), workItem(q, "c", t0.Add(2))}
	mustEnqueue(r, cl, "three items", items, 3)
	ls := mustClaim(r, cl, "claim of all three", q, 10, 10*time.Second)
	if len(ls) != 3 {
		r.Fatalf("claim of three pending items returned %q", leaseIDs(ls))
	}
	for i, l := range ls {
		checkLease(r, "first claim", l, items[i], t0.Add(10*time.Second), 1)
	}
	a1, b1, c1 := ls[0], ls[1], ls[2]

	clk.Set(a1.Expires.Add(-time.Nanosecond))
	if got := mustClaim(r, cl, "claim 1ns before the leases lapse", q, 10, time.Second); len(got) != 0 {
		r.Errorf("Claim 1ns before the leases lapse returned %q", leaseIDs(got))
	}
	a2, err := cl.Renew(ctx, a1, 20*time.Second)
	if noErr(r, "Renew of a running claim", err) {
		checkLease(r, "Renew of a running claim", a2, items[0], clk.Now().Add(20*time.Second), 1)
		if a2.Token != a1.Token {
			r.Errorf("Renew changed the token from %q to %q; it extends the same claim", a1.Token, a2.Token)
		}
	}

	clk.Set(a1.Expires)
	got := mustClaim(r, cl, "claim the moment the leases lapse", q, 10, 10*time.Second)
	if !slices.Equal(leaseIDs(got), []string{"b", "c"}) {
		r.Fatalf("Claim at the instant b's and c's leases lapse (a's was renewed) returned %q, want [b c]", leaseIDs(got))
	}
	b2, c2 := got[0], got[1]
	checkLease(r, "reclaim of b", b2, items[1], clk.Now().Add(10*time.Second), 2)
	checkLease(r, "reclaim of c", c2, items[2], clk.Now().Add(10*time.Second), 2)
	if b2.Token == b1.Token || c2.Token == c1.Token {
		r.Errorf("a reclaimed item kept its token (b %q then %q, c %q then %q); every claim gets a new one", b1.Token, b2.Token, c1.Token, c2.Token)
	}
	_, err = cl.Renew(ctx, b1, time.Minute)
	wantErr(r, "Renew with a token whose item was claimed again", err, memory.ErrConflict)
	wantErr(r, "Release with a token whose item was claimed again", cl.Release(ctx, b1), memory.ErrConflict)
	wantErr(r, "Complete with a token whose item was claimed again", cl.Complete(ctx, b1), memory.ErrConflict)
	noErr(r, "Complete with the current token", cl.Complete(ctx, b2))

	noErr(r, "Release of c", cl.Release(ctx, c2))
	got = mustClaim(r, cl, "claim right after a Release", q, 10, 10*time.Second)
	if len(got) != 1 || got[0].ID != "c" {
		r.Fatalf("Claim right after releasing c returned %q, want [c]: a released item is claimable at once", leaseIDs(got))
	}
	c3 := got[0]
	checkLease(r, "claim of released c", c3, items[2], clk.Now().Add(10*time.Second), 3)
	wantErr(r, "Complete with a released token", cl.Complete(ctx, c2), memory.ErrConflict)
	wantErr(r, "Release with a released token", cl.Release(ctx, c2), memory.ErrConflict)
	_, err = cl.Renew(ctx, c2, time.Minute)
	wantErr(r, "Renew with a released token", err, memory.ErrConflict)

	// Lapsed claims that nobody took over still renew and complete.
	clk.Advance(time.Hour)
	noErr(r, "Complete of a lapsed claim nobody took over", cl.Complete(ctx, c3))
	a3, err := cl.Renew(ctx, a2, 5*time.Second)
	if noErr(r, "Renew of a lapsed claim nobody took over", err) {
		checkLease(r, "Renew of a lapsed claim", a3, items[0], clk.Now().Add(5*time.Second), 1)
	}
	if got := mustClaim(r, cl, "claim after renewing a lapsed claim", q, 10, time.Second); len(got) != 0 {
		r.Errorf("Claim returned %q; a was renewed, b and c completed", leaseIDs(got))
	}
	clk.Advance(5 * time.Second)
	got = mustClaim(r, cl, "claim when the renewal lapses", q, 10, time.Second)
	if len(got) != 1 || got[0].ID != "a" {
		r.Fatalf("Claim when a's renewal lapsed returned %q, want [a]", leaseIDs(got))
	}
	checkLease(r, "reclaim of a", got[0], items[0], clk.Now().Add(time.Second), 2)
	wantErr(r, "Complete of a claim taken over after its renewal lapsed", cl.Complete(ctx, a3), memory.ErrConflict)

	// Tokens belong to one item of one queue.
	a4 := got[0]
	mustEnqueue(r, cl, "same id in another queue", []driver.Work{workItem(q+"-2", "a", t0), workItem(q, "d", t0)}, 2)
	wrongQueue := a4
	wrongQueue.Queue = q + "-2"
	wantErr(r, "Complete with the token of the same id in another queue", cl.Complete(ctx, wrongQueue), memory.ErrConflict)
	wrongID := a4
	wrongID.ID = "d"
	wantErr(r, "Complete of another item with this item's token", cl.Complete(ctx, wrongID), memory.ErrConflict)
	unknown := a4
	unknown.ID = "never-enqueued"
	wantErr(r, "Complete of an id never enqueued", cl.Complete(ctx, unknown), memory.ErrConflict)
	_, err = cl.Renew(ctx, unknown, time.Second)
	wantErr(r, "Renew of an id never enqueued", err, memory.ErrConflict)
	wantErr(r, "Release of an id never enqueued", cl.Release(ctx, unknown), memory.ErrConflict)
	mustEnqueue(r, cl, "an id that is claimed", []driver.Work{items[0]}, 0)
	noErr(r, "Complete of a after the refused calls", cl.Complete(ctx, a4))
	for _, qq := range []string{q, q + "-2"} {
		got := mustClaim(r, cl, "claim of what is left", qq, 10, time.Second)
		if len(got) != 1 || (got[0].ID != "a" && got[0].ID != "d") {
			r.Errorf("Claim of queue %q returned %q; want its one remaining item", qq, leaseIDs(got))
		}
	}
}

// checkClaimBadInput checks that invalid items, batches and arguments are
// refused with the right error before anything changes, that a batch with
// one bad item enqueues nothing, and that every limit is inclusive.
func checkClaimBadInput(r reporter, e *env) {
	_, cl, _, ok := e.openClaimer(r)
	if !ok {
		return
	}
	ctx := context.Background()
	const q = "bad"
	inv, big := memory.ErrInvalidArgument, memory.ErrTooLarge
	cases := []struct {
		name string
		mut  func(*driver.Work)
		want error
	}{
		{"empty queue", func(w *driver.Work) { w.Queue = "" }, inv},
		{"queue over MaxQueueBytes", func(w *driver.Work) { w.Queue = strings.Repeat("q", driver.MaxQueueBytes+1) }, big},
		{"queue not UTF-8", func(w *driver.Work) { w.Queue = "q\xff" }, inv},
		{"queue with a NUL byte", func(w *driver.Work) { w.Queue = "q\x00" }, inv},
		{"empty id", func(w *driver.Work) { w.ID = "" }, inv},
		{"id over MaxIDBytes", func(w *driver.Work) { w.ID = strings.Repeat("i", memory.MaxIDBytes+1) }, big},
		{"id not UTF-8", func(w *driver.Work) { w.ID = "\xc3\x28" }, inv},
		{"id with a NUL byte", func(w *driver.Work) { w.ID = "i\x00d" }, inv},
		{"payload over MaxPayloadBytes", func(w *driver.Work) { w.Payload = strings.Repeat("é", driver.MaxPayloadBytes/2) + "p" }, big},
		{"payload not UTF-8", func(w *driver.Work) { w.Payload = "\xfe" }, inv},
		{"payload with a NUL byte", func(w *driver.Work) { w.Payload = "{\x00}" }, inv},
		{"zero Created", func(w *driver.Work) { w.Created = time.Time{} }, inv},
		{"Created after 2262", func(w *driver.Work) { w.Created = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }, inv},
		{"Created before 1678", func(w *driver.Work) { w.Created = time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC) }, inv},
		{"identity with a newline", func(w *driver.Work) { w.Identity.User = "alice\n" }, inv},
		{"identity not UTF-8", func(w *driver.Work) { w.Identity.Tenant = "t\xff" }, inv},
	}
	for i, c := range cases {
		bad := workItem(q, fmt.Sprintf("bad-%d", i), t0)
		c.mut(&bad)
		n, err := cl.Enqueue(ctx, []driver.Work{bad})
		wantErr(r, "Enqueue of an item with "+c.name, err, c.want)
		if n != 0 {
			r.Errorf("Enqueue of an item with %s reported %d new items along with its error", c.name, n)
		}
		batch := []driver.Work{workItem(q, fmt.Sprintf("before-%d", i), t0), bad, workItem(q, fmt.Sprintf("after-%d", i), t0)}
		_, err = cl.Enqueue(ctx, batch)
		wantErr(r, "Enqueue of a batch with an item with "+c.name, err, c.want)
	}
	tooMany := make([]driver.Work, memory.MaxBatch+1)
	for i := range tooMany {
		tooMany[i] = workItem(q, fmt.Sprintf("many-%05d", i), t0)
	}
	_, err := cl.Enqueue(ctx, tooMany)
	wantErr(r, "Enqueue of MaxBatch+1 items", err, big)
	if got := mustClaim(r, cl, "claim after the refused batches", q, memory.MaxBatch, time.Minute); len(got) != 0 {
		r.Errorf("refused batches enqueued %s; a batch is all or nothing", idList(leaseIDs(got)))
	}

	// Every limit is inclusive.
	edge := driver.Work{
		Queue: strings.Repeat("q", driver.MaxQueueBytes), ID: strings.Repeat("i", memory.MaxIDBytes),
		Identity: memory.Identity{Tenant: "t"}, Payload: strings.Repeat("é", driver.MaxPayloadBytes/2),
		Created: time.Unix(0, 0).Add(-time.Nanosecond),
	}
	mustEnqueue(r, cl, "an item at every limit", []driver.Work{edge}, 1)
	got := mustClaim(r, cl, "claim of the item at every limit", edge.Queue, memory.MaxBatch, driver.MaxLease)
	if len(got) != 1 {
		r.Fatalf("claim of the item at every limit returned %d items", len(got))
	}
	if d := workDiff(got[0].Work, edge); d != "" {
		r.Errorf("the item at every limit came back different (-want +got):\n%s", d)
	}
	held := got[0]

	for _, c := range []struct {
		name  string
		queue string
		n     int
		lease time.Duration
		want  error
	}{
		{"an empty queue name", "", 1, time.Second, inv},
		{"a queue name over MaxQueueBytes", strings.Repeat("q", driver.MaxQueueBytes+1), 1, time.Second, big},
		{"a queue name not UTF-8", "\xff", 1, time.Second, inv},
		{"n = 0", q, 0, time.Second, inv},
		{"n = -1", q, -1, time.Second, inv},
		{"n = MaxBatch+1", q, memory.MaxBatch + 1, time.Second, inv},
		{"a zero lease", q, 1, 0, inv},
		{"a negative lease", q, 1, -time.Second, inv},
		{"a lease under MinLease", q, 1, driver.MinLease - 1, inv},
		{"a lease over MaxLease", q, 1, driver.MaxLease + 1, inv},
	} {
		ls, err := cl.Claim(ctx, c.queue, c.n, c.lease)
		wantErr(r, "Claim with "+c.name, err, c.want)
		if len(ls) != 0 {
			r.Errorf("Claim with %s returned %d leases along with its error", c.name, len(ls))
		}
	}
	mustEnqueue(r, cl, "an item for the shortest lease", []driver.Work{workItem(q, "short", t0)}, 1)
	if got := mustClaim(r, cl, "claim with MinLease", q, 1, driver.MinLease); len(got) != 1 {
		r.Errorf("Claim with the shortest lease returned %d items, want 1", len(got))
	}

	for _, c := range []struct {
		name string
		mut  func(*driver.Lease)
		want error
	}{
		{"no token", func(l *driver.Lease) { l.Token = "" }, inv},
		{"no id", func(l *driver.Lease) { l.ID = "" }, inv},
		{"no queue", func(l *driver.Lease) { l.Queue = "" }, inv},
		{"a queue name over MaxQueueBytes", func(l *driver.Lease) { l.Queue += "q" }, big},
	} {
		l := held
		c.mut(&l)
		_, err := cl.Renew(ctx, l, time.Second)
		wantErr(r, "Renew of a lease with "+c.name, err, c.want)
		wantErr(r, "Complete of a lease with "+c.name, cl.Complete(ctx, l), c.want)
		wantErr(r, "Release of a lease with "+c.name, cl.Release(ctx, l), c.want)
	}
	for _, lease := range []time.Duration{0, driver.MinLease - 1, driver.MaxLease + 1} {
		_, err := cl.Renew(ctx, held, lease)
		wantErr(r, fmt.Sprintf("Renew for %s", lease), err, inv)
	}
	noErr(r, "Complete of the item at every limit after the refused calls", cl.Complete(ctx, held))
}

// checkClaimLifecycle checks that every Claimer call with a done context
// fails with the context's error, unchanged, and has no effect, and that
// every call after Close fails with memory.ErrClosed.
func checkClaimLifecycle(r reporter, e *env) {
	d, cl, clk, ok := e.openClaimer(r)
	if !ok {
		return
	}
	bg := context.Background()
	const q = "lifecycle"
	x1, x2 := workItem(q, "x1", t0), workItem(q, "x2", t0.Add(1))
	mustEnqueue(r, cl, "two items", []driver.Work{x1, x2}, 2)
	held := mustClaim(r, cl, "claim of x1", q, 1, time.Minute)
	if len(held) != 1 {
		r.Fatalf("claim of one item returned %q", leaseIDs(held))
	}

	cancelled, cancel := context.WithCancel(bg)
	cancel()
	expired, cancel2 := context.WithDeadline(bg, time.Unix(0, 0))
	defer cancel2()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		what := " with " + c.want.Error()
		n, err := cl.Enqueue(c.ctx, []driver.Work{workItem(q, "x3", t0)})
		wantErr(r, "Enqueue"+what, err, c.want)
		if n != 0 {
			r.Errorf("Enqueue%s reported %d new items", what, n)
		}
		ls, err := cl.Claim(c.ctx, q, 5, time.Minute)
		wantErr(r, "Claim"+what, err, c.want)
		if len(ls) != 0 {
			r.Errorf("Claim%s returned %q", what, leaseIDs(ls))
		}
		_, err = cl.Renew(c.ctx, held[0], time.Hour)
		wantErr(r, "Renew"+what, err, c.want)
		wantErr(r, "Complete"+what, cl.Complete(c.ctx, held[0]), c.want)
		wantErr(r, "Release"+what, cl.Release(c.ctx, held[0]), c.want)
	}
	// x3 was not enqueued, and the refused Claims took nothing.
	got := mustClaim(r, cl, "claim after the calls with done contexts", q, 10, time.Minute)
	if len(got) != 1 || !checkLease(r, "claim after the calls with done contexts", got[0], x2, t0.Add(time.Minute), 1) {
		r.Errorf("after the calls with done contexts Claim returned %q, want x2 at attempt 1 alone", leaseIDs(got))
	}
	// The refused Renew, Release and Complete left x1's claim as it was.
	clk.Set(held[0].Expires.Add(-time.Nanosecond))
	if got := mustClaim(r, cl, "claim before x1's lease lapses", q, 10, time.Minute); len(got) != 0 {
		r.Errorf("Claim returned %q before x1's lease lapsed", leaseIDs(got))
	}
	clk.Set(held[0].Expires)
	got = mustClaim(r, cl, "claim when x1's lease lapses", q, 10, time.Minute)
	if len(got) != 2 || got[0].ID != "x1" || got[0].Attempt != 2 {
		r.Errorf("Claim when the leases lapse returned %q, want x1 at attempt 2 and x2: a refused Renew must not have extended x1's lease", leaseIDs(got))
	}

	noErr(r, "Close", d.Close())
	noErr(r, "second Close", d.Close())
	_, err := cl.Enqueue(bg, []driver.Work{workItem(q, "x4", t0)})
	wantErr(r, "Enqueue after Close", err, memory.ErrClosed)
	_, err = cl.Claim(bg, q, 1, time.Minute)
	wantErr(r, "Claim after Close", err, memory.ErrClosed)
	if len(got) > 0 {
		_, err = cl.Renew(bg, got[0], time.Minute)
		wantErr(r, "Renew after Close", err, memory.ErrClosed)
		wantErr(r, "Complete after Close", cl.Complete(bg, got[0]), memory.ErrClosed)
		wantErr(r, "Release after Close", cl.Release(bg, got[0]), memory.ErrClosed)
	}
}

// checkClaimDeadWorkers checks that the claims of a worker that dies are
// not handed out again before their lease lapses, and are at the instant
// it does, to another replica, to be completed exactly once: a worker
// whose context is cancelled in the middle of its work, and a replica
// closed (its connections dropped) while it holds claims.
func checkClaimDeadWorkers(r reporter, e *env) {
	d, cl, clk, ok := e.openClaimer(r)
	if !ok {
		return
	}
	bg := context.Background()
	other := e.replica(r, d)
	const q = "dead"
	var items []driver.Work
	for i := range 6 {
		items = append(items, workItem(q, fmt.Sprintf("d%d", i), t0.Add(time.Duration(i))))
	}
	mustEnqueue(r, cl, "six items", items, 6)

	// A worker claims three items, starts working and is cancelled.
	claimed := make(chan []driver.Lease, 1)
	finished := make(chan error, 1)
	ctx, cancel := context.WithCancel(bg)
	go func() {
		ls, err := cl.Claim(ctx, q, 3, 30*time.Second)
		claimed <- ls
		if err != nil {
			finished <- fmt.Errorf("the worker's Claim failed: %w", err)
			return
		}
		<-ctx.Done() // the work, which honours its context
		for _, l := range ls {
			if err := cl.Complete(ctx, l); !errors.Is(err, context.Canceled) {
				finished <- fmt.Errorf("Complete of %s with the worker's cancelled context returned %v, want context.Canceled", l.ID, err)
				return
			}
		}
		finished <- nil
	}()
	dead := <-claimed
	cancel()
	if err := <-finished; err != nil {
		r.Errorf("cancelled worker: %v", err)
	}
	if !slices.Equal(leaseIDs(dead), []string{"d0", "d1", "d2"}) {
		r.Fatalf("the worker claimed %q, want the three oldest [d0 d1 d2]", leaseIDs(dead))
	}
	live := mustClaim(r, other, "claim on the other replica while the dead worker's leases run", q, 10, 30*time.Second)
	if !slices.Equal(leaseIDs(live), []string{"d3", "d4", "d5"}) {
		r.Errorf("the other replica claimed %q while the cancelled worker's leases run, want only [d3 d4 d5]", leaseIDs(live))
	}
	for _, l := range live {
		noErr(r, "Complete on the other replica", other.Complete(bg, l))
	}
	reclaimAfter(r, clk, other, q, dead, 30*time.Second, "a worker cancelled mid-work")

	// A replica holding claims is closed: its connections are gone.
	rd, rcl := e.newReplica(r, d)
	if rd == nil {
		r.Logf("Config.Replica is nil: the driver has no replicas, so a replica closed while it holds claims does not apply")
		return
	}
	q2 := q + "-closed"
	var more []driver.Work
	for i := range 4 {
		more = append(more, workItem(q2, fmt.Sprintf("c%d", i), t0.Add(time.Duration(i))))
	}
	mustEnqueue(r, cl, "four items", more, 4)
	held := mustClaim(r, rcl, "claim on the replica to be closed", q2, 2, time.Minute)
	if len(held) != 2 {
		r.Fatalf("the replica claimed %q, want two items", leaseIDs(held))
	}
	noErr(r, "Close of the replica holding claims", rd.Close())
	wantErr(r, "Complete on the closed replica", rcl.Complete(bg, held[0]), memory.ErrClosed)
	live = mustClaim(r, cl, "claim while the closed replica's leases run", q2, 10, time.Minute)
	if len(live) != 2 || slices.ContainsFunc(live, func(l driver.Lease) bool { return l.ID == held[0].ID || l.ID == held[1].ID }) {
		r.Errorf("claim while the closed replica's leases run returned %q; %q are still leased", leaseIDs(live), leaseIDs(held))
	}
	for _, l := range live {
		noErr(r, "Complete of an item the closed replica never held", cl.Complete(bg, l))
	}
	reclaimAfter(r, clk, cl, q2, held, time.Minute, "a replica closed while holding claims")
}

// reclaimAfter checks that the items of dead's leases, all taken for
// lease, are not claimable 1ns before the leases lapse and are at the
// instant they do, at the next attempt, and that they then complete
// exactly once while the dead claims' tokens fail with
// memory.ErrConflict.
func reclaimAfter(r reporter, clk *fakeClock, cl driver.Claimer, q string, dead []driver.Lease, lease time.Duration, who string) {
	r.Helper()
	bg := context.Background()
	clk.Set(dead[0].Expires.Add(-time.Nanosecond))
	if got := mustClaim(r, cl, "claim 1ns before the leases of "+who+" lapse", q, 10, lease); len(got) != 0 {
		r.Errorf("Claim 1ns before the leases of %s lapse returned %q", who, leaseIDs(got))
	}
	clk.Set(dead[0].Expires)
	got := mustClaim(r, cl, "claim when the leases of "+who+" lapse", q, 10, lease)
	if !slices.Equal(leaseIDs(got), leaseIDs(dead)) {
		r.Errorf("Claim when the leases of %s lapse returned %q, want %q", who, leaseIDs(got), leaseIDs(dead))
	}
	for i, l := range got {
		if l.Attempt != dead[min(i, len(dead)-1)].Attempt+1 {
			r.Errorf("item %q reclaimed after %s is at attempt %d, want %d", l.ID, who, l.Attempt, dead[min(i, len(dead)-1)].Attempt+1)
		}
	}
	for _, l := range dead {
		wantErr(r, "Complete with the token of "+who, cl.Complete(bg, l), memory.ErrConflict)
	}
	for _, l := range got {
		noErr(r, "Complete of an item reclaimed after "+who, cl.Complete(bg, l))
		wantErr(r, "second Complete of an item reclaimed after "+who, cl.Complete(bg, l), memory.ErrConflict)
	}
	clk.Advance(2 * lease)
	if got := mustClaim(r, cl, "claim after completing the reclaimed items", q, 10, lease); len(got) != 0 {
		r.Errorf("Claim after completing everything returned %q", leaseIDs(got))
	}
}

// modelItem is the reference model's state of one item.
type modelItem struct {
	work     driver.Work
	token    string // "" while pending
	expires  time.Time
	attempts int
}

// checkClaimModel runs a long random sequence of Enqueue, Claim, Renew,
// Complete and Release calls, with current and stale leases, two queues
// and a clock that moves in steps landing on lease boundaries, and
// compares every result with a reference model of the queue.
func checkClaimModel(r reporter, e *env) {
	_, cl, clk, ok := e.openClaimer(r)
	if !ok {
		return
	}
	rng := e.rand(r)
	f := &failures{r: r, max: 10, seed: e.seed}
	defer f.done()
	ctx := context.Background()
	queues := []string{"model-a", "model-b"}
	model := map[string]map[string]*modelItem{}
	for _, q := range queues {
		model[q] = map[string]*modelItem{}
	}
	var history []driver.Lease // every lease handed out, current or stale
	tokens := map[string]bool{}
	leases := []time.Duration{driver.MinLease, time.Second, 10 * time.Second, time.Minute}
	counts := map[string]int{} // what the sequence exercised
	const ops = 1500
	for op := 0; op < ops && !f.enough(); op++ {
		now := clk.Now()
		q := queues[rng.IntN(len(queues))]
		m := model[q]
		switch k := rng.IntN(100); {
		case k < 20: // enqueue a few ids, some already present
			var batch []driver.Work
			seen := map[string]bool{}
			wantNew := 0
			for range 1 + rng.IntN(5) {
				id := fmt.Sprintf("w%02d", rng.IntN(30))
				if seen[id] {
					continue
				}
				seen[id] = true
				w := workItem(q, id, t0.Add(time.Duration(rng.IntN(4))*time.Millisecond))
				w.Payload = fmt.Sprintf("op %d", op)
				batch = append(batch, w)
				if m[id] == nil {
					m[id] = &modelItem{work: w}
					wantNew++
				}
			}
			n, err := cl.Enqueue(ctx, batch)
			if err != nil {
				f.Fatalf("op %d: Enqueue: %v", op, err)
			}
			if n != wantNew {
				f.Errorf("op %d: Enqueue of %d items reported %d new, want %d", op, len(batch), n, wantNew)
			}
		case k < 45: // claim
			n := 1 + rng.IntN(6)
			lease := leases[rng.IntN(len(leases))]
			var want []*modelItem
			for _, it := range m {
				if it.token == "" || !it.expires.After(now) {
					want = append(want, it)
				}
			}
			slices.SortFunc(want, func(a, b *modelItem) int { return workOrder(a.work, b.work) })
			want = want[:min(n, len(want))]
			got, err := cl.Claim(ctx, q, n, lease)
			if err != nil {
				f.Fatalf("op %d: Claim: %v", op, err)
			}
			var wantIDs []string
			for _, it := range want {
				wantIDs = append(wantIDs, it.work.ID)
			}
			if !slices.Equal(leaseIDs(got), wantIDs) {
				f.Errorf("op %d: Claim(%q, %d) at %s returned %q, want %q", op, q, n, now.Format(time.RFC3339Nano), leaseIDs(got), wantIDs)
				continue
			}
			for i, l := range got {
				it := want[i]
				if !checkLease(f, fmt.Sprintf("op %d: claim", op), l, it.work, now.Add(lease), it.attempts+1) {
					continue
				}
				if tokens[l.Token] {
					f.Errorf("op %d: the claim of %q reuses token %q", op, l.ID, l.Token)
				}
				tokens[l.Token] = true
				if it.token != "" {
					counts["lapsed claims taken over"]++
				}
				it.token, it.expires = l.Token, l.Expires
				it.attempts++
				counts["items claimed"]++
				history = append(history, l)
			}
		case k < 85 && len(history) > 0: // renew, complete or release a lease, current or stale
			l := history[rng.IntN(len(history))]
			if rng.IntN(2) == 0 {
				l = history[len(history)-1-rng.IntN(min(len(history), 8))]
			}
			it := model[l.Queue][l.ID]
			current := it != nil && it.token == l.Token
			what := fmt.Sprintf("op %d: %%s of %s/%s (%s claim)", op, l.Queue, l.ID, map[bool]string{true: "current", false: "stale"}[current])
			var err error
			switch k % 3 {
			case 0:
				lease := leases[rng.IntN(len(leases))]
				var got driver.Lease
				got, err = cl.Renew(ctx, l, lease)
				what = fmt.Sprintf(what, "Renew")
				if current && err == nil {
					checkLease(f, what, got, it.work, now.Add(lease), it.attempts)
					if got.Token != l.Token {
						f.Errorf("%s: the token changed from %q to %q", what, l.Token, got.Token)
					}
					it.expires = got.Expires
				}
			case 1:
				err = cl.Complete(ctx, l)
				what = fmt.Sprintf(what, "Complete")
				if current && err == nil {
					delete(model[l.Queue], l.ID)
				}
			default:
				err = cl.Release(ctx, l)
				what = fmt.Sprintf(what, "Release")
				if current && err == nil {
					it.token = ""
				}
			}
			if current {
				noErr(f, what, err)
				counts["calls with a current lease"]++
			} else {
				wantErr(f, what, err, memory.ErrConflict)
				counts["calls with a stale lease"]++
			}
		default: // move the clock, often onto a lease's boundary
			switch {
			case len(history) > 0 && rng.IntN(2) == 0:
				b := history[len(history)-1-rng.IntN(min(len(history), 8))].Expires
				if rng.IntN(2) == 0 {
					b = b.Add(-time.Nanosecond)
				}
				if b.After(now) {
					clk.Set(b)
				}
			default:
				clk.Advance(leases[rng.IntN(len(leases))] / time.Duration(1+rng.IntN(3)))
			}
		}
	}
	// Everything left comes out once every lease has lapsed, and completes.
	clk.Advance(2 * time.Hour)
	for _, q := range queues {
		var want []string
		for id := range model[q] {
			want = append(want, id)
		}
		slices.SortFunc(want, func(a, b string) int { return workOrder(model[q][a].work, model[q][b].work) })
		got := mustClaim(f, cl, "final claim", q, memory.MaxBatch, time.Minute)
		if !slices.Equal(leaseIDs(got), want) {
			f.Errorf("final claim of %q returned %q, want %q", q, leaseIDs(got), want)
		}
		for _, l := range got {
			noErr(f, "final Complete", cl.Complete(ctx, l))
		}
	}
	r.Logf("%d operations: %v", ops, counts)
}

// claimRaceItems, claimRaceLease and the other constants shape
// checkClaimRace.
const (
	claimRaceItems    = 10240
	claimRaceReplicas = 2
	claimRaceWorkers  = 8 // per replica
	claimRaceLease    = 500 * time.Millisecond
	claimRaceMaxClaim = 16
	claimRaceDeadline = 90 * time.Second
	// claimRaceMinBusy is how many workers must at some moment be inside
	// their work at once.
	claimRaceMinBusy = claimRaceReplicas * claimRaceWorkers / 2
)

// checkClaimRace is the proof of exactly-once claiming under load, on real
// time: two replicas (independent connection pools, or the one driver
// twice when it has none) with eight workers each race over 10,240 items,
// half enqueued up front and half by a producer during the race. Each
// worker claims 1 to 16 items at a time and works on them (a sleep) with
// no lock held; a few percent of the claims die (the worker's context is
// cancelled mid-work and it never completes), outlive their lease before
// completing, renew their lease through long work, or release their
// items. It checks that every item is completed exactly once, that no
// item is ever handed out while a claim on it runs, that no call fails
// except for memory.ErrConflict on a claim that had lapsed, that workers
// are inside their work simultaneously (no claim holds a lock while its
// worker works), and that the queue ends empty.
func checkClaimRace(r reporter, e *env) {
	d := e.openWith(r, time.Now)
	cl, ok := claimer(r, e, d)
	if !ok {
		return
	}
	rng := e.rand(r)
	replicas := []driver.Claimer{cl, e.replica(r, d)}
	rc := newRaceCheck(claimRaceItems)
	const q = "race"

	// Half the items up front, by both replicas.
	half := claimRaceItems / 2
	for i := 0; i < half; i += memory.MaxBatch / 2 {
		batch := rc.items[i:min(half, i+memory.MaxBatch/2)]
		mustEnqueue(r, replicas[(i/(memory.MaxBatch/2))%2], "enqueue before the race", batch, len(batch))
	}
	mustEnqueue(r, replicas[1], "enqueue of present items", rc.items[:100], 0)

	c := &collector{}
	start := time.Now()
	rc.deadline = start.Add(claimRaceDeadline)
	var wg sync.WaitGroup
	producerSeed := rng.Uint64()
	wg.Go(func() {
		prng := rand.New(rand.NewPCG(producerSeed, 1))
		for i := half; i < claimRaceItems && !rc.over(); {
			batch := rc.items[i:min(claimRaceItems, i+1+prng.IntN(400))]
			n, err := replicas[prng.IntN(2)].Enqueue(context.Background(), batch)
			if err != nil || n != len(batch) {
				c.Errorf("producer: Enqueue of %d new items reported %d new, error %v", len(batch), n, err)
				rc.abort.Store(true)
				return
			}
			i += len(batch)
			time.Sleep(time.Duration(prng.IntN(3)) * time.Millisecond)
		}
	})
	for rep := range claimRaceReplicas {
		for w := range claimRaceWorkers {
			seed := rng.Uint64()
			wg.Go(func() {
				rc.worker(c, replicas[rep], fmt.Sprintf("replica %d worker %d", rep, w), q, rand.New(rand.NewPCG(seed, uint64(w))))
			})
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	c.flush(r, 20)
	rc.report(r, e, elapsed)

	// The queue is empty: nothing is claimable, and every id is new again.
	if ls := mustClaim(r, cl, "claim after the race", q, memory.MaxBatch, time.Second); len(ls) != 0 {
		r.Errorf("after every item was completed Claim returned %s", idList(leaseIDs(ls)))
	}
	added := 0
	for i := 0; i < claimRaceItems; i += memory.MaxBatch {
		n, err := cl.Enqueue(context.Background(), rc.items[i:min(claimRaceItems, i+memory.MaxBatch)])
		mustNoErr(r, "enqueue of every id after the race", err)
		added += n
	}
	if added != claimRaceItems {
		r.Errorf("after the race %d of the %d ids were still in the queue (pending or claimed)", claimRaceItems-added, claimRaceItems)
	}
}
