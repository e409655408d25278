package backendtest

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// expiring returns a record of id that was created ago before t0 and
// expires at exp (zero: never).
func expiring(rid string, id memory.Identity, ago int, exp time.Time) memory.Record {
	return memory.Record{ID: rid, Kind: memory.KindTurn, Identity: id, Content: rid, Created: t0.Add(-time.Duration(ago) * time.Second), Expires: exp}
}

// checkExpiry moves the fake clock and checks that a record is returned
// exactly while the clock is before its expiry (Expires <= now hides it),
// whatever the query: whole tenant, a level, ids naming it, a limit (which
// applies after expiry). Delete still erases expired records.
func checkExpiry(r reporter, e *env) {
	d, clk := e.open(r)
	ctx := context.Background()
	id := e.agentID(d, memory.Identity{Tenant: "exp", User: "u", Session: "s"})
	east := time.FixedZone("UTC+0530", 5*3600+1800)
	// The records that expire first are the newest, so a driver that
	// applies Limit before hiding expired records returns too few.
	recs := []memory.Record{
		expiring("e-past", id, 1, t0.Add(-time.Hour)),
		expiring("e-now", id, 2, t0),
		expiring("e-1ns", id, 3, t0.Add(time.Nanosecond)),
		expiring("e-1h", id, 4, t0.Add(time.Hour)),
		expiring("e-1h-zone", id, 5, t0.Add(time.Hour).In(east)),
		expiring("e-2h", id, 6, t0.Add(2*time.Hour)),
		expiring("e-never", id, 7, time.Time{}),
	}
	mustPut(r, d, "expiring records", recs)
	m := newModel(recs)
	scope := func(w memory.Identity) bool { return w.Tenant == "exp" }
	session := mustFilter(r, memory.Posture{}, id, memory.LevelSession)
	all := ids(recs)
	for _, at := range []time.Time{
		t0, t0.Add(time.Nanosecond), t0.Add(time.Hour - time.Nanosecond), t0.Add(time.Hour),
		t0.Add(2*time.Hour - 1), t0.Add(2 * time.Hour), t0.AddDate(100, 0, 0),
	} {
		clk.Set(at)
		when := "at " + at.Format(time.RFC3339Nano)
		want := m.list(scope, narrowing{}, at)
		compareList(r, m, when+": List tenant", mustList(r, d, when, tenantQuery("exp")), want)
		compareList(r, m, when+": List session level", mustList(r, d, when, driver.Query{Filter: session}), want)
		compareList(r, m, when+": List naming every id", mustList(r, d, when, driver.Query{Filter: session, IDs: all}), want)
		compareList(r, m, when+": List with Limit 2", mustList(r, d, when, driver.Query{Filter: session, Limit: 2}), m.list(scope, narrowing{limit: 2}, at))
	}
	n, err := d.Delete(ctx, tenantQuery("exp"))
	if noErr(r, "Delete after every record but one expired", err) && n != int64(len(recs)) {
		r.Errorf("Delete removed %d records, want %d: Delete erases expired records too", n, len(recs))
	}
}

// checkSweep checks the Sweeper declaration against the driver and, for a
// sweeper, that Sweep erases exactly the records expired at the driver's
// clock, in every tenant, and reports the count.
func checkSweep(r reporter, e *env) {
	d, clk := e.open(r)
	sw, ok := capability[driver.Sweeper](r, d, e.cfg.Sweeper, "Sweeper", "driver.Sweeper", "sweeping is not checked")
	if !ok {
		return
	}
	ctx := context.Background()
	a := memory.Identity{Tenant: "sw", Agent: "a"}
	b := memory.Identity{Tenant: "sw2", Agent: "a"}
	c := memory.Identity{Tenant: "", Agent: "a"}
	recs := []memory.Record{
		expiring("s-past", a, 1, t0.Add(-time.Hour)),
		expiring("s-now", a, 2, t0),
		expiring("s-1ns", a, 3, t0.Add(time.Nanosecond)),
		expiring("s-1h", a, 4, t0.Add(time.Hour)),
		expiring("s-2h", a, 5, t0.Add(2*time.Hour)),
		expiring("s-never", a, 6, time.Time{}),
		expiring("o-1ns", b, 1, t0.Add(time.Nanosecond)),
		expiring("o-never", b, 2, time.Time{}),
		expiring("p-past", c, 1, t0.Add(-time.Second)),
	}
	mustPut(r, d, "expiring records", recs)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := sw.Sweep(cancelled); err != nil {
		wantErr(r, "Sweep with a cancelled context", err, context.Canceled)
	} else {
		r.Errorf("Sweep with a cancelled context: got no error, want context.Canceled")
	}
	sweep := func(want int64, what string) {
		r.Helper()
		n, err := sw.Sweep(ctx)
		if noErr(r, what, err) && n != want {
			r.Errorf("%s at %s removed %d records, want %d", what, clk.Now().Format(time.RFC3339Nano), n, want)
		}
	}
	sweep(3, "Sweep")        // s-past, s-now, p-past
	sweep(0, "second Sweep") // nothing new has expired
	clk.Advance(time.Hour)
	sweep(3, "Sweep an hour later") // s-1ns, s-1h, o-1ns
	sweep(0, "second Sweep an hour later")
	// What is left is exactly the unexpired records: List shows them and
	// Delete, which counts expired records too, finds nothing else.
	m := newModel(recs)
	for tenant, want := range map[string][]string{"sw": {"s-2h", "s-never"}, "sw2": {"o-never"}, "": nil} {
		what := fmt.Sprintf("tenant %q after the sweeps", tenant)
		got := mustList(r, d, what, tenantQuery(tenant))
		scope := func(w memory.Identity) bool { return w.Tenant == tenant }
		compareList(r, m, what, got, m.list(scope, narrowing{}, clk.Now()))
		n, err := d.Delete(ctx, tenantQuery(tenant))
		if noErr(r, what+": Delete", err) && n != int64(len(want)) {
			r.Errorf("%s: Delete removed %d records, want %d: the sweep left expired records behind", what, n, len(want))
		}
	}
}
