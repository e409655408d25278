package backendtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// isolationWriters and isolationProbes size the model-based isolation
// check: distinct writing identities, and callers that wrote nothing.
const (
	isolationWriters = 220
	isolationProbes  = 30
	// narrowPercent is the share of caller/level pairs whose query is also
	// checked with a random narrowing.
	narrowPercent = 40
)

// postures are the deployments the isolation check derives filters under.
var postures = []memory.Posture{
	{AllowStore: true},
	{AllowStore: true, RequirePrincipal: true},
	{AllowStore: true, RequireAgentIdentity: true},
	{RequirePrincipal: true, RequireAgentIdentity: true},
	{},
}

// checkIsolation is the model-based isolation check. Hundreds of random
// identities write several records each; then, for every caller, every
// level and every posture, the filter Posture.Filter derives is handed to
// List and the result is compared, in order, with the reference model.
// Any record the model does not expect is a leak, any it expects and List
// does not return is a miss. A random narrowing (kinds, key, ids, limit)
// of many of the queries is checked the same way.
func checkIsolation(r reporter, e *env) {
	rng := e.rand(r)
	d, _ := e.open(r)
	ds := e.agentDataset(d, genDataset(rng, "iso", isolationWriters, isolationProbes))
	// Write in random small batches, as a Store would.
	for recs := ds.recs; len(recs) > 0; {
		n := min(len(recs), 1+rng.IntN(40))
		e.put(r, d, "isolation data set", recs[:n])
		recs = recs[n:]
	}
	m := newModel(ds.recs)
	r.Logf("%d writers, %d probe callers, %d records", len(ds.writers), len(ds.probes), len(ds.recs))

	f := &failures{r: r, max: 20, seed: e.seed}
	ctx := context.Background()
	cache := make(map[memory.Filter][]memory.Record)
	list := func(q driver.Query) ([]memory.Record, error) {
		if q.Kinds == nil && q.Key == "" && q.IDs == nil && q.Limit == 0 {
			if got, ok := cache[q.Filter]; ok {
				return got, nil
			}
		}
		got, err := d.List(ctx, q)
		if err == nil && q.Kinds == nil && q.Key == "" && q.IDs == nil && q.Limit == 0 {
			cache[q.Filter] = got
		}
		return got, err
	}
	callers := append(append([]memory.Identity(nil), ds.writers...), ds.probes...)
	var pairs, refused, compared, nonEmpty, mixed int
	for _, c := range callers {
		if f.enough() {
			r.Logf("stopping after %d failures", f.count)
			break
		}
		for _, l := range memory.Levels {
			scope := refScope(c, l)
			var (
				want     []memory.Record // computed once a posture accepts the pair
				computed bool
			)
			seen := make(map[memory.Filter]bool)
			for pi, p := range postures {
				what := fmt.Sprintf("caller %+v, level %s, posture %+v", c, l, p)
				refErr := refRefusal(c, l, p)
				filter, err := p.Filter(c, l)
				if refErr != nil {
					// Skip the pair only when Filter refuses it, and only
					// with the error the documents call for.
					if err == nil {
						f.Errorf("%s: Filter derived %+v, want an error matching %v", what, filter, refErr)
					} else {
						wantErr(f, what+": Filter", err, refErr)
					}
					refused++
					continue
				}
				if err != nil {
					f.Errorf("%s: Filter refused a valid scope: %v", what, err)
					continue
				}
				pairs++
				if !computed {
					computed = true
					want = m.list(scope, narrowing{}, t0)
					if len(want) > 0 {
						nonEmpty++
						if len(distinctWriters(want)) > 1 {
							mixed++
						}
					}
				}
				// Postures that derive the same filter need one comparison.
				if !seen[filter] {
					seen[filter] = true
					compared++
					got, err := list(driver.Query{Filter: filter})
					if err != nil {
						f.Errorf("%s: List(%+v): %v", what, filter, err)
						continue
					}
					compareList(f, m, what, got, want)
				}
				if pi != 0 || rng.IntN(100) >= narrowPercent {
					continue
				}
				// A random narrowing of the query, under the first posture.
				n := randomNarrowing(rng, want, ds.recs)
				nwant := m.list(scope, n, t0)
				got, err := list(driver.Query{Filter: filter, Kinds: n.kinds, Key: n.key, IDs: n.ids, Limit: n.limit})
				if err != nil {
					f.Errorf("%s, %s: List: %v", what, n, err)
					continue
				}
				compareList(f, m, what+", "+n.String(), got, nwant)
			}
		}
	}
	f.done()
	r.Logf("%d caller/level/posture triples accepted and %d refused as the documents require; %d distinct filters listed; of the caller/level pairs, %d see records and %d see records of several writers",
		pairs, refused, compared, nonEmpty, mixed)
	// The data set must exercise the rules, not pass vacuously.
	if mixed < nonEmpty/4 {
		r.Errorf("data set too sparse: only %d of %d caller/level pairs see records of more than one writer", mixed, nonEmpty)
	}
}

// distinctWriters returns the identities that wrote recs.
func distinctWriters(recs []memory.Record) map[memory.Identity]bool {
	out := make(map[memory.Identity]bool)
	for _, r := range recs {
		out[r.Identity] = true
	}
	return out
}

// compareList compares a List result with the model's, in order, and
// checks that every returned record carries the identity it was written
// with.
func compareList(r reporter, m *model, what string, got, want []memory.Record) {
	r.Helper()
	if !checkOrder(r, what, got) {
		return
	}
	if !sameIDs(r, what, got, want) {
		shown := 0
		for _, g := range got {
			if w, ok := m.recs[g.ID]; ok && !containsID(want, g.ID) && shown < 3 {
				r.Logf("%s: leaked %q was written by %+v", what, g.ID, w.Identity)
				shown++
			}
		}
		return
	}
	for i := range got {
		if got[i].Identity != want[i].Identity { // cmp.Diff only on failure: this loop is hot
			r.Errorf("%s: record %q has another identity than it was written with (-want +got):\n%s", what, got[i].ID, cmp.Diff(want[i].Identity, got[i].Identity))
		}
	}
}

func containsID(recs []memory.Record, id string) bool {
	for _, r := range recs {
		if r.ID == id {
			return true
		}
	}
	return false
}

// checkListNarrowing checks Kinds, Key, IDs and Limit on a small hand-made
// data set: each narrows within the scope and never widens it.
func checkListNarrowing(r reporter, e *env) {
	d, _ := e.open(r)
	me := e.agentID(d, memory.Identity{Tenant: "nar", User: "alice", Session: "s1"})
	other := e.agentID(d, memory.Identity{Tenant: "nar", User: "alicia", Session: "s1"})
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Millisecond) }
	recs := []memory.Record{
		{ID: "a1", Kind: memory.KindTurn, Identity: me, Label: "user", Content: "one", Created: at(1)},
		{ID: "a2", Kind: memory.KindSummary, Identity: me, Key: "wf/1", Content: "two", Created: at(2)},
		{ID: "a3", Kind: memory.KindFact, Identity: me, Content: "three", Created: at(3)},
		{ID: "a4", Kind: memory.KindDocument, Identity: me, Key: "k", Label: "working", Content: "{}", Created: at(4)},
		{ID: "a5", Kind: memory.KindDocument, Identity: me, Key: "K", Label: "working", Content: "{}", Created: at(5)},
		{ID: "a6", Kind: memory.KindTurn, Identity: me, Label: "assistant", Content: "six", Created: at(6)},
		{ID: "b1", Kind: memory.KindTurn, Identity: other, Content: "leak", Created: at(7)},
		{ID: "b2", Kind: memory.KindDocument, Identity: other, Key: "k", Content: "{}", Created: at(8)},
	}
	mustPut(r, d, "narrowing data", recs)
	m := newModel(recs)
	filter := mustFilter(r, memory.Posture{}, me, memory.LevelSession)
	scope := refScope(me, memory.LevelSession)
	cases := []narrowing{
		{},
		{kinds: []memory.Kind{memory.KindTurn}},
		{kinds: []memory.Kind{memory.KindDocument, memory.KindFact}},
		{kinds: []memory.Kind{memory.KindTurn, memory.KindTurn}},
		{key: "k"},
		{key: "K"},
		{key: "wf/1"},
		{key: "absent"},
		{ids: []string{"a1", "a3"}},
		{ids: []string{"a1", "b1", "b2", "missing"}}, // b1, b2 are outside the scope
		{ids: []string{"b1"}},
		{ids: []string{"a2", "a2"}},
		{limit: 1},
		{limit: 3},
		{limit: 6},
		{limit: 100},
		{kinds: []memory.Kind{memory.KindDocument}, key: "k"},
		{kinds: []memory.Kind{memory.KindTurn}, limit: 1},
		{ids: []string{"a1", "a4", "a5", "b2"}, key: "k"},
		{ids: []string{"a1", "a4", "a5", "a6"}, kinds: []memory.Kind{memory.KindTurn, memory.KindDocument}, limit: 2},
	}
	for _, n := range cases {
		what := "List " + n.String()
		got, err := d.List(context.Background(), driver.Query{Filter: filter, Kinds: n.kinds, Key: n.key, IDs: n.ids, Limit: n.limit})
		if !noErr(r, what, err) {
			continue
		}
		compareList(r, m, what, got, m.list(scope, n, t0))
	}
}

// checkOrdering checks List order on ties: Created descending, then ID
// descending byte-wise; the same instant in two time zones is a tie, and
// one nanosecond apart is not.
func checkOrdering(r reporter, e *env) {
	d, _ := e.open(r)
	id := e.agentID(d, memory.Identity{Tenant: "ord", Squad: "sq"})
	east := time.FixedZone("UTC+0530", 5*3600+1800)
	west := time.FixedZone("UTC-0800", -8*3600)
	base := t0
	var recs []memory.Record
	add := func(rid string, created time.Time) {
		recs = append(recs, memory.Record{ID: rid, Kind: memory.KindTurn, Identity: id, Content: rid, Created: created})
	}
	// A tie of ids that sort differently as bytes, by case, by length and
	// under a linguistic collation.
	for _, rid := range []string{"a", "B", "b", "ab", "a-b", "é", "e", "z", "Z", "用", "10", "9", "~"} {
		add("tie-"+rid, base)
	}
	// The same instant in other zones ties with base.
	add("tie-zone-east", base.In(east))
	add("tie-zone-west", base.In(west))
	// One nanosecond either side, and in another zone.
	add("ns-plus", base.Add(time.Nanosecond).In(west))
	add("ns-minus", base.Add(-time.Nanosecond).In(east))
	add("sec-plus", base.Add(time.Second))
	add("old", base.Add(-72*time.Hour))
	add("older-1970", time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC))
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	mustPut(r, d, "ordering data", recs)
	want := append([]memory.Record(nil), recs...)
	sortNewest(want)
	got := mustList(r, d, "List", tenantQuery("ord"))
	sameIDs(r, "List order", got, want)
	for _, limit := range []int{1, 2, 5, len(want) - 1} {
		got := mustList(r, d, "List", driver.Query{Filter: tenantQuery("ord").Filter, Limit: limit})
		sameIDs(r, fmt.Sprintf("List with Limit %d", limit), got, want[:limit])
	}
}
