package backendtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// The checks of driver.WorkEraser: ClaimErase (erasure at each level
// removes exactly its scope's items of one queue, pending and claimed,
// with exact counts and no page cap, their claims go stale and their ids
// may be enqueued again), ClaimEraseModel (erasures at every level by
// random callers compared with the reference scope rules),
// ClaimEraseLifecycle (bad arguments, unscoped filters, done contexts,
// Close), all under the fake clock, and ClaimEraseRace (erasures racing
// workers on two replicas, on real time).

// workEraser returns cl as a driver.WorkEraser when Config.WorkEraser
// declares it, failing when the declaration and the driver disagree.
func workEraser(r reporter, e *env, cl driver.Claimer) (driver.WorkEraser, bool) {
	r.Helper()
	return capability[driver.WorkEraser](r, cl, e.cfg.WorkEraser, "WorkEraser", "driver.WorkEraser", "erasure of work is not checked")
}

// openEraser returns a new driver under the fake clock, as a Claimer and
// a WorkEraser too, or false when it has no work queue or cannot erase
// from it.
func (e *env) openEraser(r reporter) (driver.Driver, driver.Claimer, driver.WorkEraser, *fakeClock, bool) {
	r.Helper()
	if e.cfg.WorkEraser && !e.cfg.Claimer {
		r.Errorf("Config.WorkEraser is true but Config.Claimer is false: a WorkEraser is a work queue's capability")
	}
	d, cl, clk, ok := e.openClaimer(r)
	if !ok {
		return nil, nil, nil, nil, false
	}
	we, ok := workEraser(r, e, cl)
	return d, cl, we, clk, ok
}

// erasePerson is a writer of ClaimErase's items, named in its messages.
type erasePerson struct {
	name string
	id   memory.Identity
}

// erasePeople are the writers of ClaimErase's items: near neighbours in
// every field an erasure compares, so a driver that drops a condition,
// matches prefixes, folds case or mixes up tenants erases a neighbour.
var erasePeople = []erasePerson{
	{"alice", memory.Identity{Tenant: "acme", User: "alice", Agent: "planner", Session: "s1"}},
	{"alice-writer", memory.Identity{Tenant: "acme", User: "alice", Agent: "writer", Session: "s2"}},
	{"alice-s11", memory.Identity{Tenant: "acme", User: "alice", Agent: "planner", Session: "s11"}},
	{"alicia", memory.Identity{Tenant: "acme", User: "alicia", Agent: "planner", Session: "s1"}},
	{"Alice", memory.Identity{Tenant: "acme", User: "Alice", Agent: "planner", Session: "s1"}},
	{"anonymous", memory.Identity{Tenant: "acme", Agent: "planner", Session: "s1"}},
	{"alice-acme2", memory.Identity{Tenant: "acme2", User: "alice", Agent: "planner", Session: "s1"}},
	{"alice-no-tenant", memory.Identity{User: "alice", Agent: "planner", Session: "s1"}},
}

// erasePerPerson is how many items each of erasePeople has in a queue.
const erasePerPerson = 3

// eraseItems returns the items of erasePeople in queue, and the name of
// each item's writer by item id. Their creation times interleave the
// writers, so a claim of the oldest half holds items of every writer and
// leaves others of each pending.
func eraseItems(queue string) ([]driver.Work, map[string]string) {
	var items []driver.Work
	owner := map[string]string{}
	for k := range erasePerPerson {
		for j, p := range erasePeople {
			id := fmt.Sprintf("%s-%d", p.name, k)
			items = append(items, driver.Work{
				Queue: queue, ID: id, Identity: p.id,
				Payload: fmt.Sprintf(`{"facts":["%s said something personal (%d)"]}`, p.name, k),
				Created: t0.Add(time.Duration(k*len(erasePeople) + j)),
			})
			owner[id] = p.name
		}
	}
	return items, owner
}

// checkClaimErase checks EraseWork at the session, agent, user and store
// levels and with a filter on an empty field, each on a queue of its own
// that holds the same items, half of them claimed: the count is exact,
// exactly the matching items are gone, pending and claimed alike, the
// other items and their claims are untouched, the erased items' claims
// fail with memory.ErrConflict on Renew, Release and Complete, their ids
// can be enqueued again as new items, at attempt 1, and erasing those
// claimed anew removes them too. A queue holding the same ids that no
// erasure names keeps every item; an erasure of more than memory.MaxBatch
// items removes them all in one call.
func checkClaimErase(r reporter, e *env) {
	_, cl, we, clk, ok := e.openEraser(r)
	if !ok {
		return
	}
	ctx := context.Background()
	p := memory.Posture{AllowStore: true}
	who := func(name string) memory.Identity {
		i := slices.IndexFunc(erasePeople, func(x erasePerson) bool { return x.name == name })
		return erasePeople[i].id
	}

	// A queue with the same ids that no erasure names.
	const bystander = "erase-bystander"
	byItems, _ := eraseItems(bystander)
	mustEnqueue(r, cl, "the bystander queue", byItems, len(byItems))
	byHeld := mustClaim(r, cl, "claim of half the bystander queue", bystander, len(byItems)/2, time.Hour)

	cases := []struct {
		name   string
		filter memory.Filter
		want   []string // the writers whose items the erasure removes
	}{
		{"alice's session s1", mustFilter(r, p, who("alice"), memory.LevelSession), []string{"alice"}},
		{"session s1 of a caller without a user", mustFilter(r, p, memory.Identity{Tenant: "acme", Agent: "planner", Session: "s1"}, memory.LevelSession),
			[]string{"alice", "alicia", "Alice", "anonymous"}},
		{"alice's agent planner", mustFilter(r, p, who("alice"), memory.LevelAgent), []string{"alice", "alice-s11"}},
		{"user alice", mustFilter(r, p, who("alice"), memory.LevelUser), []string{"alice", "alice-writer", "alice-s11"}},
		{"user alicia", mustFilter(r, p, who("alicia"), memory.LevelUser), []string{"alicia"}},
		{"tenant acme", mustFilter(r, p, who("alice"), memory.LevelStore),
			[]string{"alice", "alice-writer", "alice-s11", "alicia", "Alice", "anonymous"}},
		{"the empty tenant", mustFilter(r, p, who("alice-no-tenant"), memory.LevelStore), []string{"alice-no-tenant"}},
		{"an empty user, matched as empty", memory.Filter{Match: memory.FieldTenant | memory.FieldUser, Identity: memory.Identity{Tenant: "acme"}},
			[]string{"anonymous"}},
		{"a user no item has", mustFilter(r, p, memory.Identity{Tenant: "acme", User: "al"}, memory.LevelUser), nil},
	}
	for i, c := range cases {
		q := fmt.Sprintf("erase-%d", i)
		what := fmt.Sprintf("EraseWork(%q) of %s (filter %s=%+v)", q, c.name, c.filter.Match, c.filter.Identity)
		items, owner := eraseItems(q)
		byID := map[string]driver.Work{}
		for _, w := range items {
			byID[w.ID] = w
		}
		erased := func(id string) bool { return slices.Contains(c.want, owner[id]) }
		mustEnqueue(r, cl, what+": items", items, len(items))
		held := mustClaim(r, cl, what+": claim of half the items", q, len(items)/2, time.Hour)

		n, err := we.EraseWork(ctx, q, c.filter)
		if !noErr(r, what, err) {
			continue
		}
		if want := int64(len(c.want) * erasePerPerson); n != want {
			r.Errorf("%s removed %d items, want %d (the %d items each of %q)", what, n, want, erasePerPerson, c.want)
		}
		// The erased items' claims are stale; the others' still hold.
		for _, l := range held {
			if !erased(l.ID) {
				got, err := cl.Renew(ctx, l, time.Hour)
				if noErr(r, what+": Renew of the claim on "+l.ID+", which the erasure does not match", err) && got.Token != l.Token {
					r.Errorf("%s: the claim on %s changed token from %q to %q", what, l.ID, l.Token, got.Token)
				}
				continue
			}
			_, err := cl.Renew(ctx, l, time.Hour)
			wantErr(r, what+": Renew of the claim on erased item "+l.ID, err, memory.ErrConflict)
			wantErr(r, what+": Release of the claim on erased item "+l.ID, cl.Release(ctx, l), memory.ErrConflict)
			wantErr(r, what+": Complete of the claim on erased item "+l.ID, cl.Complete(ctx, l), memory.ErrConflict)
		}

		// Once every claim has lapsed, exactly the other items are left,
		// intact, the claimed ones at their second attempt.
		clk.Advance(2 * time.Hour)
		var want []string
		for _, w := range items {
			if !erased(w.ID) {
				want = append(want, w.ID)
			}
		}
		left := mustClaim(r, cl, what+": claim of what is left", q, memory.MaxBatch, time.Minute)
		if !slices.Equal(leaseIDs(left), want) {
			r.Errorf("%s left %s, want %s", what, idList(leaseIDs(left)), idList(want))
		}
		for _, l := range left {
			if d := workDiff(l.Work, byID[l.ID]); d != "" {
				r.Errorf("%s: item %s, which it does not match, changed (-want +got):\n%s", what, l.ID, d)
			}
			attempt := 1
			if slices.ContainsFunc(held, func(h driver.Lease) bool { return h.ID == l.ID }) {
				attempt = 2
			}
			if l.Attempt != attempt {
				r.Errorf("%s: item %s, which it does not match, is at attempt %d, want %d", what, l.ID, l.Attempt, attempt)
			}
		}

		// The erased ids can be enqueued again, as new items.
		erasedIDs := slices.DeleteFunc(leaseIDs(leasesOf(items)), func(id string) bool { return !erased(id) })
		mustEnqueue(r, cl, what+": everything again", items, len(erasedIDs))
		again := mustClaim(r, cl, what+": claim of the items enqueued again", q, memory.MaxBatch, time.Minute)
		if !slices.Equal(leaseIDs(again), erasedIDs) {
			r.Errorf("%s: after enqueueing every item again, Claim returned %s, want the erased %s", what, idList(leaseIDs(again)), idList(erasedIDs))
		}
		for _, l := range again {
			if l.Attempt != 1 {
				r.Errorf("%s: erased item %s enqueued again is at attempt %d, want 1: it is a new item", what, l.ID, l.Attempt)
			}
		}
		for _, l := range held {
			if erased(l.ID) {
				wantErr(r, what+": Complete of the claim on "+l.ID+" from before the erasure, after its id was enqueued again and claimed",
					cl.Complete(ctx, l), memory.ErrConflict)
			}
		}
		// Erasing again removes the new items, all claimed now, and then
		// nothing.
		n, err = we.EraseWork(ctx, q, c.filter)
		if noErr(r, what+" again", err) && n != int64(len(erasedIDs)) {
			r.Errorf("%s again, over claimed items only, removed %d items, want %d", what, n, len(erasedIDs))
		}
		n, err = we.EraseWork(ctx, q, c.filter)
		if noErr(r, what+" a third time", err) && n != 0 {
			r.Errorf("%s a third time removed %d items, want 0", what, n)
		}
		for _, l := range left {
			noErr(r, what+": Complete of "+l.ID+", which it does not match", cl.Complete(ctx, l))
		}
		for _, l := range again {
			wantErr(r, what+": Complete of erased item "+l.ID+" claimed after it was enqueued again", cl.Complete(ctx, l), memory.ErrConflict)
		}
	}

	// A queue nobody enqueued to erases nothing.
	n, err := we.EraseWork(ctx, "erase-never-used", mustFilter(r, p, who("alice"), memory.LevelStore))
	if noErr(r, "EraseWork of a queue never used", err) && n != 0 {
		r.Errorf("EraseWork of a queue never used removed %d items", n)
	}

	// The bystander queue lost nothing, and its claims still hold.
	for _, l := range byHeld {
		noErr(r, "Complete of a claim in the queue no erasure named", cl.Complete(ctx, l))
	}
	clk.Advance(2 * time.Hour)
	rest := mustClaim(r, cl, "claim of the bystander queue", bystander, memory.MaxBatch, time.Minute)
	if want := leaseIDs(leasesOf(byItems))[len(byHeld):]; !slices.Equal(leaseIDs(rest), want) {
		r.Errorf("the queue no erasure named holds %s, want %s: an erasure reached beyond its queue", idList(leaseIDs(rest)), idList(want))
	}

	checkEraseLarge(r, cl, we, clk)
}

// leasesOf returns items as unclaimed leases, for leaseIDs.
func leasesOf(items []driver.Work) []driver.Lease {
	out := make([]driver.Lease, len(items))
	for i, w := range items {
		out[i] = driver.Lease{Work: w}
	}
	return out
}

// checkEraseLarge erases more than memory.MaxBatch items of one user in
// one call, some of them claimed, beside a neighbour's, which survive.
func checkEraseLarge(r reporter, cl driver.Claimer, we driver.WorkEraser, clk *fakeClock) {
	r.Helper()
	ctx := context.Background()
	const q = "erase-large"
	big := memory.Identity{Tenant: "big", User: "u", Session: "s"}
	near := memory.Identity{Tenant: "big", User: "u2", Session: "s"}
	total := memory.MaxBatch + 50
	var batch []driver.Work
	for i := range total + 10 {
		w := driver.Work{Queue: q, ID: fmt.Sprintf("big-%05d", i), Identity: big, Payload: "p", Created: t0.Add(time.Duration(i))}
		if i >= total {
			w.Identity = near
		}
		batch = append(batch, w)
		if len(batch) == memory.MaxBatch || i == total+9 {
			mustEnqueue(r, cl, "a large queue", batch, len(batch))
			batch = batch[:0]
		}
	}
	mustClaim(r, cl, "claim of some of the large queue", q, 100, time.Minute)
	n, err := we.EraseWork(ctx, q, memory.Filter{Match: memory.FieldTenant | memory.FieldUser, Identity: big})
	if noErr(r, "EraseWork of more than MaxBatch items", err) && n != int64(total) {
		r.Errorf("EraseWork of %d items in one call removed %d", total, n)
	}
	clk.Advance(2 * time.Hour)
	left := mustClaim(r, cl, "claim after the large erasure", q, memory.MaxBatch, time.Minute)
	if len(left) != 10 || left[0].ID != fmt.Sprintf("big-%05d", total) {
		r.Errorf("after erasing %d items of user u, %s are left, want the neighbour's 10 items from big-%05d", total, idList(leaseIDs(left)), total)
	}
}

// checkClaimEraseModel erases at every level, as random callers, from a
// queue of random writers' items, some claimed, enqueueing and claiming
// more between erasures, and compares every count with the reference
// scope rules (refScope, which shares no code with memory.Filter.Matches).
// At the end, every claim on a surviving item completes and every claim
// on an erased one fails with memory.ErrConflict, the queue holds exactly
// the model's items, and a second queue with the same items, never
// erased, holds all of them.
func checkClaimEraseModel(r reporter, e *env) {
	_, cl, we, clk, ok := e.openEraser(r)
	if !ok {
		return
	}
	rng := e.rand(r)
	f := &failures{r: r, max: 10, seed: e.seed}
	defer f.done()
	ctx := context.Background()
	const q, other = "erase-model", "erase-model-other"
	writers := identities(rng, 80, nil, nil)
	avoid := map[memory.Identity]bool{}
	for _, w := range writers {
		avoid[w] = true
	}
	callers := append(slices.Clone(writers), identities(rng, 20, writers, avoid)...)

	type item struct {
		work  driver.Work
		token string // "" while pending
	}
	model := map[string]*item{}
	var all []driver.Work // every item ever enqueued, erased ones too
	for i, w := range writers {
		for k := range 1 + rng.IntN(4) {
			all = append(all, driver.Work{
				Queue: q, ID: fmt.Sprintf("%s%03d-%d", pick(rng, idPrefixes), i, k), Identity: w,
				Payload: "facts of " + w.User, Created: t0.Add(time.Duration(rng.IntN(5))),
			})
		}
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for start := 0; start < len(all); start += 100 {
		batch := all[start:min(start+100, len(all))]
		mustEnqueue(f, cl, "the model's items", batch, len(batch))
		mustEnqueue(f, cl, "the other queue's items", retarget(batch, other), len(batch))
	}
	for _, w := range all {
		model[w.ID] = &item{work: w}
	}
	var held []driver.Lease // every claim handed out
	claim := func(n int) {
		var want []driver.Work
		for _, it := range model {
			if it.token == "" {
				want = append(want, it.work)
			}
		}
		slices.SortFunc(want, workOrder)
		want = want[:min(n, len(want))]
		got := mustClaim(f, cl, "claim between erasures", q, n, time.Hour)
		if !slices.Equal(leaseIDs(got), leaseIDs(leasesOf(want))) {
			f.Errorf("claim of %d between erasures returned %s, want %s", n, idList(leaseIDs(got)), idList(leaseIDs(leasesOf(want))))
		}
		for _, l := range got {
			if it := model[l.ID]; it != nil {
				it.token = l.Token
			}
			held = append(held, l)
		}
	}
	claim(len(all) / 3)

	p := memory.Posture{AllowStore: true}
	// The store level erases a whole tenant, so it goes last.
	levels := slices.DeleteFunc(slices.Clone(memory.Levels), func(l memory.Level) bool { return l == memory.LevelStore })
	levels = append(levels, memory.LevelStore)
	var gone []driver.Work // erased items, some enqueued again later
	erasures, matched := 0, int64(0)
	for _, l := range levels {
		done := 0
		for _, i := range rng.Perm(len(callers)) {
			if f.enough() || done == 3 {
				break
			}
			c := callers[i]
			if refRefusal(c, l, p) != nil {
				continue
			}
			scope := refScope(c, l)
			var want int64
			for id, it := range model {
				if scope(it.work.Identity) {
					want++
					gone = append(gone, it.work)
					delete(model, id)
				}
			}
			n, err := we.EraseWork(ctx, q, mustFilter(f, p, c, l))
			what := fmt.Sprintf("EraseWork at level %s as %+v", l, c)
			if noErr(f, what, err) && n != want {
				f.Errorf("%s removed %d items, want %d", what, n, want)
			}
			erasures++
			matched += want
			done++
			switch rng.IntN(3) {
			case 0:
				claim(1 + rng.IntN(10))
			case 1:
				// Some erased items come back, as new items.
				if len(gone) > 0 {
					back := gone[:min(len(gone), 1+rng.IntN(5))]
					mustEnqueue(f, cl, "erased items enqueued again", back, len(back))
					for _, w := range back {
						model[w.ID] = &item{work: w}
					}
					gone = slices.Clone(gone[len(back):])
				}
			}
		}
	}
	if matched == 0 {
		f.Errorf("data set too sparse: %d erasures matched no item", erasures)
	}

	// Claims on surviving items still hold; the others are stale.
	for i := len(held) - 1; i >= 0; i-- {
		l := held[i]
		if it := model[l.ID]; it != nil && it.token == l.Token {
			noErr(f, "Complete of the claim on "+l.ID+", which no erasure matched", cl.Complete(ctx, l))
			delete(model, l.ID)
			continue
		}
		wantErr(f, "Complete of the claim on erased item "+l.ID, cl.Complete(ctx, l), memory.ErrConflict)
	}
	clk.Advance(2 * time.Hour)
	var want []driver.Work
	for _, it := range model {
		want = append(want, it.work)
	}
	slices.SortFunc(want, workOrder)
	got := mustClaim(f, cl, "final claim", q, memory.MaxBatch, time.Minute)
	if !slices.Equal(leaseIDs(got), leaseIDs(leasesOf(want))) {
		f.Errorf("after the erasures the queue holds %s, want %s", idList(leaseIDs(got)), idList(leaseIDs(leasesOf(want))))
	}
	slices.SortFunc(all, workOrder)
	rest := mustClaim(f, cl, "claim of the other queue", other, memory.MaxBatch, time.Minute)
	if !slices.Equal(leaseIDs(rest), leaseIDs(leasesOf(all))) {
		f.Errorf("the queue no erasure named holds %d items, want all %d: an erasure reached beyond its queue", len(rest), len(all))
	}
	r.Logf("%d erasures removed %d items", erasures, matched)
}

// retarget returns copies of items in queue q.
func retarget(items []driver.Work, q string) []driver.Work {
	out := slices.Clone(items)
	for i := range out {
		out[i].Queue = q
	}
	return out
}

// checkClaimEraseLifecycle checks that EraseWork refuses a bad queue name
// as Claim does, and a filter that does not match on tenant (Match == 0
// among them) with memory.ErrIncompleteScope, as CheckQuery refuses such a
// record query; that a done context fails it with the context's error,
// unchanged; that none of these removes anything; and that it fails with
// memory.ErrClosed after Close.
func checkClaimEraseLifecycle(r reporter, e *env) {
	d, cl, we, _, ok := e.openEraser(r)
	if !ok {
		return
	}
	bg := context.Background()
	const q = "erase-lifecycle"
	id := memory.Identity{Tenant: "t", User: "u"}
	items := []driver.Work{
		{Queue: q, ID: "x1", Identity: id, Payload: "p", Created: t0},
		{Queue: q, ID: "x2", Identity: id, Payload: "p", Created: t0.Add(1)},
	}
	mustEnqueue(r, cl, "two items", items, 2)
	mustClaim(r, cl, "claim of x1", q, 1, time.Minute)
	user := memory.Filter{Match: memory.FieldTenant | memory.FieldUser, Identity: id}
	inv, big, scope := memory.ErrInvalidArgument, memory.ErrTooLarge, memory.ErrIncompleteScope
	for _, c := range []struct {
		name  string
		queue string
		f     memory.Filter
		want  error
	}{
		{"an empty queue name", "", user, inv},
		{"a queue name over MaxQueueBytes", strings.Repeat("q", driver.MaxQueueBytes+1), user, big},
		{"a queue name not UTF-8", "q\xff", user, inv},
		{"a queue name with a NUL byte", q + "\x00", user, inv},
		{"an empty filter (Match == 0)", q, memory.Filter{}, scope},
		{"Match == 0 and identity fields set", q, memory.Filter{Identity: id}, scope},
		{"a filter without tenant", q, memory.Filter{Match: memory.FieldUser, Identity: id}, scope},
		{"a filter of every field but tenant", q, memory.Filter{Match: memory.AllFields &^ memory.FieldTenant, Identity: id}, scope},
	} {
		n, err := we.EraseWork(bg, c.queue, c.f)
		wantErr(r, "EraseWork with "+c.name, err, c.want)
		if n != 0 {
			r.Errorf("EraseWork with %s reported %d items removed along with its error", c.name, n)
		}
	}
	// Every limit is inclusive.
	n, err := we.EraseWork(bg, strings.Repeat("q", driver.MaxQueueBytes), user)
	if noErr(r, "EraseWork of a queue name of MaxQueueBytes", err) && n != 0 {
		r.Errorf("EraseWork of an empty queue removed %d items", n)
	}

	cancelled, cancel := context.WithCancel(bg)
	cancel()
	expired, cancel2 := context.WithDeadline(bg, time.Unix(0, 0))
	defer cancel2()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		n, err := we.EraseWork(c.ctx, q, user)
		wantErr(r, "EraseWork with "+c.want.Error(), err, c.want)
		if n != 0 {
			r.Errorf("EraseWork with %v reported %d items removed", c.want, n)
		}
	}
	// The refused calls removed nothing.
	n, err = we.EraseWork(bg, q, user)
	if noErr(r, "EraseWork after the refused calls", err) && n != 2 {
		r.Errorf("EraseWork after the refused calls removed %d items, want both: a refused call removed some", n)
	}

	noErr(r, "Close", d.Close())
	_, err = we.EraseWork(bg, q, user)
	wantErr(r, "EraseWork after Close", err, memory.ErrClosed)
}

// eraseRaceUsers and the other constants shape checkClaimEraseRace.
const (
	eraseRaceUsers    = 40
	eraseRacePerUser  = 50
	eraseRaceWorkers  = 4 // per replica
	eraseRaceMaxClaim = 8
	eraseRaceLease    = time.Minute // never lapses: every conflict is an erasure's doing
	eraseRaceDeadline = 60 * time.Second
)

// checkClaimEraseRace erases, on real time, the items of 40 users one
// user at a time, alternating replicas, while workers on both replicas
// claim and complete the same queue's items. It checks that every item
// is removed exactly once, by a Complete or by an erasure (per user, the
// successful Completes and the erasure's count add up to the user's
// items), that no Claim that starts after a user's erasure returned hands
// out an item of that user, that a Complete fails only with
// memory.ErrConflict and only once its item's user is being erased, and
// that the queue ends empty. The first user is erased before the workers
// start, so some erasure always removes items.
func checkClaimEraseRace(r reporter, e *env) {
	d := e.openWith(r, time.Now)
	cl, ok := claimer(r, e, d)
	if !ok {
		return
	}
	we, ok := workEraser(r, e, cl)
	if !ok {
		return
	}
	rng := e.rand(r)
	replicas := []driver.Claimer{cl, e.replica(r, d)}
	rwe, ok := replicas[1].(driver.WorkEraser)
	if !ok {
		r.Fatalf("the replica (%T) does not implement driver.WorkEraser, yet the driver does", replicas[1])
	}
	erasers := []driver.WorkEraser{we, rwe}
	ctx := context.Background()
	const q = "erase-race"
	users := make([]memory.Identity, eraseRaceUsers)
	for u := range users {
		users[u] = memory.Identity{Tenant: "race", User: fmt.Sprintf("u%02d", u), Session: "s"}
	}
	items := make([]driver.Work, eraseRaceUsers*eraseRacePerUser)
	index := make(map[string]int, len(items))
	for i := range items {
		// Users interleave in claim order, so every claim mixes them.
		items[i] = driver.Work{Queue: q, ID: fmt.Sprintf("i%05d", i), Identity: users[i%eraseRaceUsers], Payload: "p", Created: t0.Add(time.Duration(i))}
		index[items[i].ID] = i
	}
	mustEnqueue(r, cl, "the race's items", items, len(items))

	var (
		erasing   = make([]atomic.Bool, eraseRaceUsers)  // set before the user's erasure is called
		erasedAt  = make([]atomic.Int64, eraseRaceUsers) // when it returned, as since(); 0 before
		erased    = make([]int64, eraseRaceUsers)        // its count; read after the race
		completed = make([]atomic.Int32, len(items))     // successful Completes per item
		finished  atomic.Bool                            // every user erased
		c         = &collector{}
		deadline  = time.Now().Add(eraseRaceDeadline)
		base      = time.Now()
		since     = func() int64 { return int64(time.Since(base)) + 1 } // monotonic, never 0
	)
	erase := func(k, u int) {
		erasing[u].Store(true)
		n, err := erasers[k%2].EraseWork(ctx, q, memory.Filter{Match: memory.FieldTenant | memory.FieldUser, Identity: users[u]})
		if err != nil {
			c.Errorf("EraseWork of user %s on replica %d: %v", users[u].User, k%2, err)
		}
		erased[u] = n
		erasedAt[u].Store(since())
	}
	order := rng.Perm(eraseRaceUsers)
	erase(0, order[0])

	var wg sync.WaitGroup
	eraserSeed := rng.Uint64()
	wg.Go(func() {
		defer finished.Store(true)
		erng := rand.New(rand.NewPCG(eraserSeed, 1))
		for k := 1; k < len(order); k++ {
			time.Sleep(time.Duration(erng.IntN(4)) * time.Millisecond)
			erase(k, order[k])
		}
	})
	for rep, rcl := range replicas {
		for w := range eraseRaceWorkers {
			who := fmt.Sprintf("replica %d worker %d", rep, w)
			wrng := rand.New(rand.NewPCG(rng.Uint64(), uint64(w)))
			wg.Go(func() {
				for {
					if time.Now().After(deadline) {
						c.Errorf("%s: the race did not end within %s", who, eraseRaceDeadline)
						return
					}
					last := finished.Load()
					start := since()
					ls, err := rcl.Claim(ctx, q, 1+wrng.IntN(eraseRaceMaxClaim), eraseRaceLease)
					if err != nil {
						c.Errorf("%s: Claim: %v", who, err)
						return
					}
					if len(ls) == 0 {
						if last {
							return // every user was erased before this empty claim
						}
						time.Sleep(time.Millisecond)
						continue
					}
					for _, l := range ls {
						u := index[l.ID] % eraseRaceUsers
						if at := erasedAt[u].Load(); at != 0 && at < start {
							c.Errorf("%s: a Claim that started after the erasure of user %s returned handed out its item %s", who, users[u].User, l.ID)
						}
					}
					time.Sleep(time.Duration(wrng.IntN(3)) * time.Millisecond) // the work
					for _, l := range ls {
						i := index[l.ID]
						u := i % eraseRaceUsers
						switch err := rcl.Complete(ctx, l); {
						case err == nil:
							completed[i].Add(1)
						case errors.Is(err, memory.ErrConflict) && erasing[u].Load():
							// Erased while the worker worked on it.
						default:
							c.Errorf("%s: Complete of %s (user %s, erasure started: %v): %v", who, l.ID, users[u].User, erasing[u].Load(), err)
						}
					}
				}
			})
		}
	}
	wg.Wait()
	c.flush(r, 20)

	var totalCompleted, totalErased int64
	for u := range users {
		var done int64
		for i := u; i < len(items); i += eraseRaceUsers {
			switch n := completed[i].Load(); {
			case n > 1:
				r.Errorf("item %s of user %s was completed %d times", items[i].ID, users[u].User, n)
			case n == 1:
				done++
			}
		}
		if done+erased[u] != eraseRacePerUser {
			r.Errorf("user %s: %d items completed and %d erased, want %d in all: each item is removed exactly once", users[u].User, done, erased[u], eraseRacePerUser)
		}
		totalCompleted += done
		totalErased += erased[u]
	}
	if ls := mustClaim(r, cl, "claim after the race", q, memory.MaxBatch, time.Second); len(ls) != 0 {
		r.Errorf("after every user was erased Claim returned %s", idList(leaseIDs(ls)))
	}
	n, err := cl.Enqueue(ctx, items)
	if noErr(r, "Enqueue of every id after the race", err) && n != len(items) {
		r.Errorf("after the race %d of the %d ids were still in the queue (pending or claimed)", len(items)-n, len(items))
	}
	r.Logf("%d items completed, %d erased", totalCompleted, totalErased)
}
