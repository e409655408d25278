package backendtest

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// checkTenantIDs checks that record ids are unique per tenant, not per
// store: a tenant writing, replacing, swapping, deleting or sweeping a
// record under an id another tenant already uses neither fails, nor learns
// that the id exists, nor touches the other tenant's record, whose fields
// and version stay as they were. The identities differ only in tenant, so
// a driver that keys records by id alone, or by id and the other fields,
// is caught.
func checkTenantIDs(r reporter, e *env) {
	d, clk := e.open(r)
	ctx := context.Background()
	acme := memory.Identity{Tenant: "acme", User: "u", Agent: "a", Session: "s"}
	evil := acme
	evil.Tenant = "evil"
	none := acme
	none.Tenant = "" // the empty tenant is a namespace of its own
	vectors := e.cfg.VectorSearch != NoVectorSearch
	rec := func(who memory.Identity, id, text string, created time.Time) memory.Record {
		r := memory.Record{ID: id, Kind: memory.KindFact, Identity: who, Content: text, Created: created, Tokens: 1}
		if vectors {
			r.Vector = []float32{1, float32(len(text)), 0.5, 0, 0, 0, 0, 0} // VectorDims values
		}
		return r
	}
	// stored returns what tenant holds under id, or false.
	stored := func(tenant, id string) (memory.Record, bool) {
		r.Helper()
		return getOne(r, d, tenant, id)
	}
	same := func(what, tenant string, want memory.Record) {
		r.Helper()
		got, found := stored(tenant, want.ID)
		if !found {
			r.Errorf("%s: tenant %q no longer holds %q", what, tenant, want.ID)
			return
		}
		if diff := recordDiff(got, want); diff != "" {
			r.Errorf("%s: tenant %q's %q changed (-want +got):\n%s", what, tenant, want.ID, diff)
		}
	}

	a1 := rec(acme, "shared", "acme's fact", t0)
	mustPut(r, d, "acme's record", []memory.Record{a1})
	a1.Version = 1

	// Another tenant uses the same id: a new record of its own, at
	// version 1, in a batch alone and beside records of fresh ids.
	e1 := rec(evil, "shared", "evil's fact", t0.Add(time.Second))
	if noErr(r, "another tenant's Put of an id acme uses", d.Put(ctx, []memory.Record{e1})) {
		e1.Version = 1
		same("after another tenant stored the same id", "evil", e1)
	}
	same("after another tenant stored the same id", "acme", a1)
	n1 := rec(none, "shared", "the empty tenant's fact", t0.Add(2*time.Second))
	batch := []memory.Record{rec(evil, "evil-only", "fresh", t0), n1, rec(none, "none-only", "fresh", t0)}
	if noErr(r, "a batch of two tenants reusing acme's id", d.Put(ctx, batch)) {
		n1.Version = 1
		same("after the empty tenant stored the same id", "", n1)
	}
	same("after a batch of other tenants reused the id", "acme", a1)

	// Replacing one tenant's record leaves the other's version alone.
	e2 := rec(evil, "shared", "evil's fact, replaced", t0.Add(3*time.Second))
	if noErr(r, "another tenant replacing its own record", d.Put(ctx, []memory.Record{e2})) {
		e2.Version = 2
		same("after another tenant replaced its record", "evil", e2)
	}
	same("after another tenant replaced its record", "acme", a1)

	// Within one tenant an id still belongs to one identity: a second
	// identity's write is refused as not permitted (not a race to retry),
	// whole batch, nothing stored.
	bob := acme
	bob.User = "bob"
	for _, b := range [][]memory.Record{
		{rec(bob, "shared", "bob's hijack", t0)},
		{rec(bob, "bob-fresh", "fresh", t0), rec(bob, "shared", "bob's hijack", t0)},
	} {
		wantErr(r, fmt.Sprintf("Put of %d records by another identity of the tenant, reusing its id", len(b)), d.Put(ctx, b), memory.ErrPermissionDenied)
	}
	if _, found := stored("acme", "bob-fresh"); found {
		r.Errorf("a refused batch stored one of its records")
	}
	same("after another identity of the tenant was refused", "acme", a1)

	// Lists of each tenant see its own record only.
	for _, c := range []struct {
		tenant string
		want   string
	}{{"acme", a1.Content}, {"evil", e2.Content}, {"", n1.Content}} {
		q := tenantQuery(c.tenant)
		q.IDs = []string{"shared"}
		got := mustList(r, d, "List by id", q)
		if len(got) != 1 || got[0].Content != c.want {
			r.Errorf("tenant %q listing id %q: got %d records %v, want its own only", c.tenant, "shared", len(got), contents(got))
		}
	}

	// Deleting by id in one tenant deletes that tenant's record only.
	q := tenantQuery("evil")
	q.IDs = []string{"shared"}
	n, err := d.Delete(ctx, q)
	if noErr(r, "another tenant deleting the id", err) && n != 1 {
		r.Errorf("another tenant deleting its record under a shared id removed %d records, want 1", n)
	}
	same("after another tenant deleted its record", "acme", a1)
	same("after another tenant deleted its record", "", n1)

	if sw, ok := d.(driver.Swapper); ok && e.cfg.Swapper {
		// A swap creating the id in another tenant expects version 0
		// there, whatever acme holds.
		s1 := rec(evil, "shared", "evil's swap", t0.Add(4*time.Second))
		v, err := sw.Swap(ctx, s1, 0)
		if noErr(r, "another tenant's Swap creating an id acme uses", err) && v != 1 {
			r.Errorf("another tenant's Swap creating the id stored version %d, want 1", v)
		}
		if _, err := sw.Swap(ctx, rec(evil, "shared", "stale", t0), 0); err == nil {
			r.Errorf("a second Swap expecting version 0 succeeded: the tenant's own record was not seen")
		}
		v, err = sw.Swap(ctx, rec(acme, "shared", "acme's swap", t0.Add(5*time.Second)), 1)
		if noErr(r, "acme swapping its record while another tenant holds the id", err) && v != 2 {
			r.Errorf("acme's Swap stored version %d, want 2", v)
		}
		a1 = rec(acme, "shared", "acme's swap", t0.Add(5*time.Second))
		a1.Version = 2
		same("after both tenants swapped the id", "acme", a1)
		_, err = sw.Swap(ctx, rec(bob, "shared", "bob's swap", t0), 2)
		wantErr(r, "Swap by another identity of the tenant", err, memory.ErrPermissionDenied)
		same("after another identity's Swap was refused", "acme", a1)
	}

	// Expiry and sweeping are per record: acme's expired record under an
	// id evil also uses takes nothing of evil's with it.
	exp := rec(acme, "fleeting", "acme's, expiring", t0)
	exp.Expires = t0.Add(time.Minute)
	keep := rec(evil, "fleeting", "evil's, lasting", t0)
	mustPut(r, d, "an expiring record and another tenant's lasting one", []memory.Record{exp})
	mustPut(r, d, "another tenant's lasting record", []memory.Record{keep})
	keep.Version = 1
	clk.Advance(2 * time.Minute)
	if _, found := stored("acme", "fleeting"); found {
		r.Errorf("an expired record is still listed")
	}
	same("after acme's record under the id expired", "evil", keep)
	if sw, ok := d.(driver.Sweeper); ok && e.cfg.Sweeper {
		_, err := sw.Sweep(ctx)
		noErr(r, "Sweep", err)
		same("after a sweep removed acme's expired record", "evil", keep)
	}

	if vs, ok := d.(driver.VectorSearcher); ok && vectors {
		// Each tenant's search finds its own record under the id, with
		// its own vector.
		for _, c := range []struct {
			tenant string
			want   memory.Record
		}{{"acme", a1}, {"evil", keep}} {
			q := tenantQuery(c.tenant)
			q.IDs = []string{c.want.ID}
			got, err := vs.Search(ctx, q, c.want.Vector, 5)
			if !noErr(r, "Search of one tenant by a shared id", err) {
				continue
			}
			if len(got) != 1 || got[0].Record.Content != c.want.Content || !sameVector(got[0].Record.Vector, c.want.Vector) {
				r.Errorf("tenant %q searching its record %q: got %d matches %v, want its own record", c.tenant, c.want.ID, len(got), matchContents(got))
			}
		}
	}
}

// contents lists the records' contents, for failure messages.
func contents(recs []memory.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Content
	}
	return out
}

// matchContents lists the matches' contents, for failure messages.
func matchContents(ms []driver.Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Record.Content
	}
	return out
}
