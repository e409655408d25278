package backendtest

import (
	"context"
	"fmt"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// checkRoundTrip checks that every Record field comes back as written:
// non-ASCII and awkward text, metadata, nanosecond times in any zone,
// expiry, token counts; and that records a caller holds do not alias the
// stored ones.
func checkRoundTrip(r reporter, e *env) {
	d, _ := e.open(r)
	zone := time.FixedZone("UTC+0545", 5*3600+45*60)
	// A document holds JSON: awkward text inside a string, white space after it.
	full := memory.Record{
		ID:   "rt-ü-1",
		Kind: memory.KindDocument,
		Identity: memory.Identity{
			Tenant: "tenant-ü", User: "用户", Agent: "kaos://agent/ns/名前",
			Instance: "inst-🦊", Squad: "squad é", Session: "run-Ω",
		},
		Label:   "working",
		Key:     "live_chat_vendors/ключ",
		Content: "{\"vendors\":[\"Intercom\",\"Tidio\"],\"note\":\"naïve café — 日本語 🦊\\n\\ttab 'single' \\\"double\\\" \\\\ back %_* \"}\n\t \r\n  ",
		Metadata: map[string]string{
			"source": "wf/step-1", "ключ": "значение", "empty": "", "quote": "'\"%_*\\", "emoji": "🦊",
		},
		Created: time.Date(2025, 1, 2, 3, 4, 5, 123456789, zone),
		Expires: time.Date(2031, 6, 7, 8, 9, 10, 987654321, time.UTC),
		Tokens:  42,
	}
	recs := []memory.Record{
		full,
		// Minimal: empty content, no metadata, no expiry, no tokens, empty tenant.
		{ID: "rt-2", Kind: memory.KindTurn, Identity: memory.Identity{Session: "s"}, Label: "user", Created: t0},
		// Before 1970, with a single nanosecond.
		{ID: "rt-3", Kind: memory.KindSummary, Identity: memory.Identity{Tenant: "tenant-ü", User: "u"}, Key: "wf/step", Content: "old", Created: time.Date(1969, 7, 20, 20, 17, 40, 1, time.UTC)},
		// White space that must not be trimmed, and an empty metadata map.
		{ID: "rt-4", Kind: memory.KindFact, Identity: memory.Identity{Tenant: "tenant-ü", User: "u"}, Label: "  spaced ", Content: "  \n", Metadata: map[string]string{}, Created: t0.In(zone), Tokens: 7},
	}
	// Under Config.PerAgent: agents renamed, one Put per agent.
	recs = e.agentRecords(d, recs)
	full = recs[0]
	e.put(r, d, "round-trip records", recs)
	for _, want := range recs {
		q := tenantQuery(want.Identity.Tenant)
		q.IDs = []string{want.ID}
		sameRecords(r, "round trip of "+want.ID, mustList(r, d, "List", q), []memory.Record{want})
	}
	// Through a level filter too.
	q := driver.Query{Filter: mustFilter(r, memory.Posture{}, full.Identity, memory.LevelSquadAgentRun)}
	sameRecords(r, "round trip through a level", mustList(r, d, "List", q), []memory.Record{full})

	// Neither the caller's input nor a returned record aliases the store.
	in := full
	in.ID = "rt-alias"
	in.Metadata = map[string]string{"a": "1"}
	mustPut(r, d, "aliasing record", []memory.Record{in})
	in.Metadata["a"] = "changed by the caller after Put"
	in.Metadata["b"] = "added by the caller after Put"
	q = tenantQuery(full.Identity.Tenant)
	q.IDs = []string{"rt-alias"}
	got := mustList(r, d, "List", q)
	if len(got) == 1 && got[0].Metadata != nil {
		got[0].Metadata["a"] = "changed by a reader"
		got[0].Metadata["c"] = "added by a reader"
	}
	want := in
	want.Metadata = map[string]string{"a": "1"}
	sameRecords(r, "record after its writer and a reader changed their copies", mustList(r, d, "List", q), []memory.Record{want})
}

// checkUpsert checks replacement and refusals: the same id and identity
// replaces the record (one record, new fields); the same id with another
// identity of the same tenant is ErrPermissionDenied (no race to retry),
// stores nothing of the batch and leaves the original intact. Ids are
// unique per tenant: another tenant's use of the id is checked by
// TenantIDs.
func checkUpsert(r reporter, e *env) {
	d, _ := e.open(r)
	ctx := context.Background()
	id := e.agentID(d, memory.Identity{Tenant: "up", User: "u", Session: "s"})
	orig := memory.Record{ID: "doc-1", Kind: memory.KindDocument, Identity: id, Key: "k", Label: "working", Content: jsonString("v1"), Metadata: map[string]string{"a": "1"}, Created: t0, Tokens: 1}
	mustPut(r, d, "original", []memory.Record{orig})
	upd := memory.Record{ID: "doc-1", Kind: memory.KindDocument, Identity: id, Key: "k", Label: "domain", Content: jsonString("v2"), Metadata: map[string]string{"b": "2"},
		Created: t0.Add(time.Second), Expires: t0.Add(time.Hour), Tokens: 2}
	mustPut(r, d, "replacement", []memory.Record{upd})
	sameRecords(r, "after a replacement", mustList(r, d, "List", tenantQuery("up")), []memory.Record{upd})

	others := []memory.Identity{
		{Tenant: "up", User: "u2", Session: "s"},
		{Tenant: "up", User: "U", Session: "s"},
		{Tenant: "up", User: "u", Session: "s", Agent: "a"},
		{Tenant: "up", User: "u"},
	}
	for i, o := range others {
		o = e.agentID(d, o)
		clash := upd
		clash.Identity = o
		clash.Content = jsonString("hijacked")
		fresh := memory.Record{ID: fmt.Sprintf("fresh-%d", i), Kind: memory.KindFact, Identity: o, Content: "new", Created: t0}
		for _, batch := range [][]memory.Record{{clash}, {fresh, clash}, {clash, fresh}} {
			what := fmt.Sprintf("Put of %d records reusing id %q with identity %+v", len(batch), clash.ID, o)
			wantErr(r, what, d.Put(ctx, batch), memory.ErrPermissionDenied)
		}
		sameRecords(r, fmt.Sprintf("original after refusals of %+v", o), mustList(r, d, "List", tenantQuery("up")), []memory.Record{upd})
	}
	// A record may replace itself any number of times.
	for i := range 3 {
		upd.Content = jsonString(fmt.Sprintf("v%d", 3+i))
		mustPut(r, d, "replacement", []memory.Record{upd})
	}
	sameRecords(r, "after more replacements", mustList(r, d, "List", tenantQuery("up")), []memory.Record{upd})
}

// checkDeterministicIDs checks that facts and documents made by the
// memory constructors are stored once however often they are written,
// directly or through a Store, while turns are not merged.
func checkDeterministicIDs(r reporter, e *env) {
	d, _ := e.open(r)
	ctx := context.Background()
	id := memory.Identity{Tenant: "det", User: "u", Agent: "a", Session: "s"}
	f1 := memory.NewFact(id, "likes green tea", t0)
	f2 := memory.NewFact(id, "likes green tea", t0.Add(time.Second))
	if f1.ID != f2.ID {
		r.Errorf("NewFact gave ids %q and %q for the same fact in the same scope", f1.ID, f2.ID)
	}
	mustPut(r, d, "fact", []memory.Record{f1})
	mustPut(r, d, "same fact again", []memory.Record{f2})
	factOnly := driver.Query{Filter: tenantQuery("det").Filter, Kinds: []memory.Kind{memory.KindFact}}
	sameRecords(r, "a fact written twice", mustList(r, d, "List", factOnly), []memory.Record{f2})

	st := newStore(d, memory.Posture{})
	f3 := memory.NewFact(id, "likes green tea", t0.Add(2*time.Second))
	f3.Tokens = 1
	for range 2 {
		noErr(r, "Store.Add of the same fact", st.Add(ctx, id, f3))
	}
	sameRecords(r, "a fact added twice through a Store", mustList(r, d, "List", factOnly), []memory.Record{f3})

	// The same content in another scope is another fact.
	other := memory.Identity{Tenant: "det", User: "u2", Agent: "a", Session: "s"}
	g := memory.NewFact(other, "likes green tea", t0)
	if g.ID == f1.ID {
		r.Errorf("NewFact gave the same id to the same fact in two scopes")
	}
	mustPut(r, d, "fact in another scope", []memory.Record{g})
	if got := mustList(r, d, "List", factOnly); len(got) != 2 {
		r.Errorf("two scopes' facts: got %q, want two records", ids(got))
	}

	// A document keyed in a scope replaces the previous version.
	keyed := id.Only(memory.LevelParentAgent.Keyed())
	d1 := memory.NewDocument(keyed, "live_chat_vendors", "domain", `{"v":1}`, t0)
	d2 := memory.NewDocument(keyed, "live_chat_vendors", "domain", `{"v":2}`, t0.Add(time.Second))
	mustPut(r, d, "document", []memory.Record{d1})
	mustPut(r, d, "document update", []memory.Record{d2})
	docs := driver.Query{Filter: mustFilter(r, memory.Posture{}, id, memory.LevelParentAgent), Kinds: []memory.Kind{memory.KindDocument}}
	sameRecords(r, "a document written twice", mustList(r, d, "List", docs), []memory.Record{d2})

	// Turns get fresh ids: saying the same thing twice is two turns.
	t1 := memory.NewTurn(id, memory.RoleUser, "hello", t0)
	t2 := memory.NewTurn(id, memory.RoleUser, "hello", t0)
	mustPut(r, d, "turns", []memory.Record{t1, t2})
	turns := driver.Query{Filter: tenantQuery("det").Filter, Kinds: []memory.Kind{memory.KindTurn}}
	if got := mustList(r, d, "List", turns); len(got) != 2 {
		r.Errorf("two identical turns: got %q, want two records", ids(got))
	}
}
