package backendtest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// forgetLargeCount is how many records the large forget erases in one
// call: more than one batch, so a driver that deletes a page at a time, or
// caps a delete at the batch limit, is caught.
const forgetLargeCount = memory.MaxBatch + 50

// verifyTenants compares the whole content of every generated tenant with
// the model.
func verifyTenants(r reporter, d driver.Driver, m *model, what string) {
	r.Helper()
	for _, tenant := range tenantPool {
		got, err := d.List(context.Background(), tenantQuery(tenant))
		if !noErr(r, what+": List tenant "+tenant, err) {
			continue
		}
		scope := func(w memory.Identity) bool { return w.Tenant == tenant }
		compareList(r, m, fmt.Sprintf("%s: content of tenant %q", what, tenant), got, m.list(scope, narrowing{}, t0))
	}
}

// checkForgetLevels erases at every level, through Store.Forget and
// through the driver's Delete with a derived filter in turn, and checks
// after each erasure that the count is exact and that the driver holds
// exactly what the reference model still holds.
func checkForgetLevels(r reporter, e *env) {
	rng := e.rand(r)
	d, _ := e.open(r)
	ds := e.agentDataset(d, genDataset(rng, "fgt", 150, 0))
	e.putAll(r, d, "forget data set", ds.recs)
	m := newModel(ds.recs)
	p := memory.Posture{AllowStore: true}
	st := newStore(d, p)
	ctx := context.Background()
	f := &failures{r: r, max: 20, seed: e.seed}

	// The store level erases a whole tenant, so it goes last.
	levels := slices.DeleteFunc(slices.Clone(memory.Levels), func(l memory.Level) bool { return l == memory.LevelStore })
	levels = append(levels, memory.LevelStore)
	for _, l := range levels {
		done := 0
		for _, i := range rng.Perm(len(ds.writers)) {
			c := ds.writers[i]
			if refRefusal(c, l, p) != nil {
				continue
			}
			scope := refScope(c, l)
			var want int64
			for _, rec := range m.recs {
				if scope(rec.Identity) {
					want++
				}
			}
			if want == 0 {
				continue
			}
			var (
				n   int64
				err error
			)
			how := "Store.Forget"
			if done%2 == 0 {
				n, err = st.Forget(ctx, c, l)
			} else {
				how = "Driver.Delete"
				n, err = d.Delete(ctx, driver.Query{Filter: mustFilter(r, p, c, l)})
			}
			what := fmt.Sprintf("%s(%+v, %s)", how, c, l)
			if !noErr(f, what, err) {
				continue
			}
			if got := m.remove(scope, narrowing{}); n != got {
				f.Errorf("%s removed %d records, want %d", what, n, got)
			}
			verifyTenants(f, d, m, "after "+what)
			if done++; done == 3 || l == memory.LevelStore {
				break
			}
		}
		if done == 0 {
			f.Errorf("data set too sparse: no writer has records at level %s", l)
		}
	}
	// An erasure that matches nothing removes nothing.
	nobody := memory.Identity{Tenant: "acme", User: "nobody"}
	n, err := st.Forget(ctx, nobody, memory.LevelUser)
	if noErr(f, "Forget of a scope with no records", err) && n != 0 {
		f.Errorf("Forget of a scope with no records reported %d", n)
	}
	verifyTenants(f, d, m, "after an empty forget")
	f.done()
}

// checkForgetLarge erases more than memory.MaxBatch records in one call,
// some of them expired, and checks the exact count and that every
// neighbouring record survives.
func checkForgetLarge(r reporter, e *env) {
	d, _ := e.open(r)
	ctx := context.Background()
	target := memory.Identity{Tenant: "big", User: "u", Agent: "a", Instance: "i", Squad: "q", Session: "s"}
	var recs []memory.Record
	expired := 0
	for i := range forgetLargeCount {
		rec := memory.Record{
			ID:       fmt.Sprintf("big-%05d", i),
			Kind:     memory.Kinds[i%len(memory.Kinds)],
			Identity: target,
			Key:      fmt.Sprintf("k%d", i%7),
			Content:  contentFor(memory.Kinds[i%len(memory.Kinds)], "x"),
			Created:  t0.Add(-time.Duration(i) * time.Microsecond),
		}
		if i%101 == 0 {
			rec.Expires = t0.Add(-time.Second) // expired, and still erased
			expired++
		}
		recs = append(recs, rec)
	}
	// Neighbours differ from the target in one field, or by a prefix.
	neighbours := []memory.Identity{
		{Tenant: "big", User: "u", Agent: "a", Instance: "i", Squad: "q", Session: "s2"},
		{Tenant: "big", User: "u", Agent: "a", Instance: "i", Squad: "q", Session: "S"},
		{Tenant: "big", User: "u2", Agent: "a", Instance: "i", Squad: "q", Session: "s"},
		{Tenant: "big", Agent: "a", Instance: "i", Squad: "q", Session: "s"},
		{Tenant: "", User: "u", Agent: "a", Instance: "i", Squad: "q", Session: "s"},
		{Tenant: "big2", User: "u", Agent: "a", Instance: "i", Squad: "q", Session: "s"},
		{Tenant: "Big", User: "u", Agent: "a", Instance: "i", Squad: "q", Session: "s"},
	}
	var kept []memory.Record
	for i, n := range neighbours {
		for j := range 3 {
			kept = append(kept, memory.Record{
				ID: fmt.Sprintf("nb-%d-%d", i, j), Kind: memory.KindTurn, Identity: n, Content: "keep",
				Created: t0.Add(-time.Duration(j) * time.Second),
			})
		}
	}
	if !e.fitsOneAgent(recs[:memory.MaxBatch]) && e.perAgentSkip(r, "the check erases %d records of one agent, stored in a Put of %d, more than one agent's object holds (PerAgent.Fits)", forgetLargeCount, memory.MaxBatch) {
		return
	}
	// The first batch is exactly memory.MaxBatch records: the limit is
	// inclusive.
	mustPut(r, d, "a batch of exactly MaxBatch records", recs[:memory.MaxBatch])
	mustPut(r, d, "the rest", append(slices.Clone(recs[memory.MaxBatch:]), kept...))

	filter := mustFilter(r, memory.Posture{}, target, memory.LevelSession)
	got := mustList(r, d, "List before the forget", driver.Query{Filter: filter})
	if want := forgetLargeCount - expired; len(got) != want {
		r.Errorf("List of %d unexpired records returned %d: List has no page cap", want, len(got))
	}
	n, err := newStore(d, memory.Posture{}).Forget(ctx, target, memory.LevelSession)
	mustNoErr(r, "Forget", err)
	if n != forgetLargeCount {
		r.Errorf("Forget of %d records (%d of them expired) reported %d", forgetLargeCount, expired, n)
	}
	if got := mustList(r, d, "List after the forget", driver.Query{Filter: filter}); len(got) != 0 {
		r.Errorf("%d records left after the forget, want none", len(got))
	}
	m := newModel(kept)
	for _, tenant := range []string{"big", "", "big2", "Big"} {
		scope := func(w memory.Identity) bool { return w.Tenant == tenant }
		got := mustList(r, d, "List neighbours", tenantQuery(tenant))
		compareList(r, m, fmt.Sprintf("neighbours in tenant %q after the forget", tenant), got, m.list(scope, narrowing{}, t0))
	}
	n, err = d.Delete(ctx, driver.Query{Filter: filter})
	if noErr(r, "second Delete", err) && n != 0 {
		r.Errorf("a second Delete of the same scope reported %d, want 0", n)
	}
}

// checkDeleteNarrowing checks that Kinds, Key and IDs narrow a Delete
// within its scope, that ids outside the scope are never erased, and that
// Delete ignores Limit.
func checkDeleteNarrowing(r reporter, e *env) {
	d, _ := e.open(r)
	ctx := context.Background()
	me := memory.Identity{Tenant: "dn", User: "alice", Agent: "ag", Session: "s1"}
	other := memory.Identity{Tenant: "dn", User: "alicia", Agent: "ag", Session: "s1"}
	at := func(i int) time.Time { return t0.Add(-time.Duration(i) * time.Second) }
	var recs []memory.Record
	for i, k := range []memory.Kind{memory.KindTurn, memory.KindSummary, memory.KindFact, memory.KindDocument} {
		for j, key := range []string{"", "k", "K", "k2"} {
			recs = append(recs,
				memory.Record{ID: fmt.Sprintf("me-%d-%d", i, j), Kind: k, Identity: me, Key: key, Content: contentFor(k, "mine"), Created: at(i*4 + j)},
				memory.Record{ID: fmt.Sprintf("ot-%d-%d", i, j), Kind: k, Identity: other, Key: key, Content: contentFor(k, "theirs"), Created: at(i*4 + j)},
			)
		}
	}
	recs = append(recs, memory.Record{ID: "me-expired", Kind: memory.KindTurn, Identity: me, Content: "old", Created: at(99), Expires: t0.Add(-time.Nanosecond)})
	mustPut(r, d, "delete narrowing data", recs)
	m := newModel(recs)
	p := memory.Posture{}
	filter := mustFilter(r, p, me, memory.LevelSession)
	scope := refScope(me, memory.LevelSession)
	all := func(memory.Identity) bool { return true }
	steps := []narrowing{
		{ids: []string{"me-0-0", "ot-0-0", "ot-1-1", "missing"}}, // ot-* is outside the scope
		{ids: []string{"me-expired"}},                            // expired records are erased too
		{kinds: []memory.Kind{memory.KindSummary}},
		{key: "k"},
		{kinds: []memory.Kind{memory.KindDocument, memory.KindFact}, key: "K"},
		{ids: []string{"me-0-3", "me-3-3"}, kinds: []memory.Kind{memory.KindTurn}},
		{key: "absent"},
		{limit: 1}, // Delete ignores Limit: everything left in scope goes
		{},
	}
	for _, n := range steps {
		what := "Delete " + n.String()
		got, err := d.Delete(ctx, driver.Query{Filter: filter, Kinds: n.kinds, Key: n.key, IDs: n.ids, Limit: n.limit})
		if !noErr(r, what, err) {
			continue
		}
		if want := m.remove(scope, n); got != want {
			r.Errorf("%s removed %d records, want %d", what, got, want)
		}
		left := mustList(r, d, "List after "+what, tenantQuery("dn"))
		compareList(r, m, "content after "+what, left, m.list(all, narrowing{}, t0))
	}
	if len(m.recs) != 16 {
		r.Errorf("suite bug: the model holds %d records after the last step, want the 16 of the other user", len(m.recs))
	}
}
