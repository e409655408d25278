package configmap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/configmap"
	"github.com/agentmem/memory/backend/driver"
)

// population returns records of three agents of c's namespace (two of
// them, one named by URI and one by name alone, sharing the object
// agent-memory-planner), several users, tenants, sessions, kinds and
// keys, many tied on Created, some expiring; the batches group them by
// object.
func population(rng *rand.Rand, c *cluster, d *configmap.Driver) ([]memory.Identity, [][]memory.Record) {
	var ids []memory.Identity
	for _, agent := range []string{c.agent("planner"), "planner", c.agent("monitor")} {
		for _, tenant := range []string{"", "acme", "Acme"} {
			for _, user := range []string{"", "alice", "alicia"} {
				for _, session := range []string{"run-1", "run-11"} {
					ids = append(ids, memory.Identity{Tenant: tenant, User: user, Agent: agent, Session: session, Squad: "sq"})
				}
			}
		}
	}
	byObject := map[string][]memory.Record{}
	n := 0
	for _, id := range ids {
		for range 1 + rng.IntN(3) {
			n++
			r := memory.Record{
				ID:       fmt.Sprintf("%s-%04d", []string{"r", "R", "é"}[rng.IntN(3)], n),
				Kind:     memory.Kinds[rng.IntN(len(memory.Kinds))],
				Identity: id,
				Key:      []string{"", "k", "K", "wf/step"}[rng.IntN(4)],
				Created:  t0.Add(-time.Duration(rng.IntN(20)) * time.Second),
			}
			r.Content = "content " + id.User
			if r.Kind == memory.KindDocument { // a document holds JSON
				b, _ := json.Marshal(r.Content) // a string always encodes
				r.Content = string(b)
			}
			if rng.IntN(5) == 0 {
				r.Expires = t0.Add(time.Duration(1+rng.IntN(3)) * time.Hour)
			}
			name, _ := d.ObjectName(id.Agent)
			byObject[name] = append(byObject[name], r)
		}
	}
	var batches [][]memory.Record
	for _, recs := range byObject {
		batches = append(batches, recs)
	}
	return ids, batches
}

// expected is the brute-force answer to q over all at now.
func expected(all []memory.Record, q driver.Query, now time.Time) []memory.Record {
	var out []memory.Record
	for _, r := range all {
		if q.Matches(r) && !r.Expired(now) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b memory.Record) int {
		if driver.Newer(a, b) {
			return -1
		}
		return 1
	})
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out
}

// TestQueries compares List and Delete with a brute-force evaluation of
// the same queries: every level that applies, with and without an agent in
// the filter (one object or all of them), narrowed by kinds, key, ids and
// limit, before and after records expire.
func TestQueries(t *testing.T) {
	onClusters(t, func(t *testing.T, c *cluster) {
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		rng := rand.New(rand.NewPCG(seed, 7))
		clk := newClock(t0)
		d := c.driver(t, configmap.Options{Clock: clk.Now})
		callers, batches := population(rng, c, d)
		var all []memory.Record
		for _, b := range batches {
			mustPut(t, d, b...)
			all = append(all, b...)
		}
		levels := []memory.Level{memory.LevelSession, memory.LevelAgent, memory.LevelUser, memory.LevelStore, memory.LevelSquad, memory.LevelParentAgent, memory.LevelSquadRun}
		narrow := func(q driver.Query) driver.Query {
			switch rng.IntN(5) {
			case 0:
				q.Kinds = []memory.Kind{memory.KindSummary, memory.KindFact}
			case 1:
				q.Key = []string{"k", "K", "wf/step", "none"}[rng.IntN(4)]
			case 2:
				q.IDs = []string{all[rng.IntN(len(all))].ID, all[rng.IntN(len(all))].ID, "no-such-id"}
			case 3:
				q.Limit = 1 + rng.IntN(5)
			}
			return q
		}
		for _, at := range []time.Duration{0, 2 * time.Hour} {
			clk.Advance(at)
			for _, caller := range callers {
				for _, l := range levels {
					f, err := memory.Posture{AllowStore: true}.Filter(caller, l)
					if err != nil {
						continue // a level whose fields the caller lacks
					}
					q := narrow(driver.Query{Filter: f})
					got := mustList(t, d, q)
					want := expected(all, q, clk.Now())
					if !slices.Equal(idsOf(got), idsOf(want)) {
						t.Fatalf("List as %+v at %s (%+v):\n got %q\nwant %q", caller, l, q, idsOf(got), idsOf(want))
					}
				}
			}
		}
		// Erasure, one caller and level at a time, expired records included.
		for _, caller := range callers[:12] {
			for _, l := range []memory.Level{memory.LevelSession, memory.LevelUser, memory.LevelParentAgent} {
				f, err := memory.Posture{}.Filter(caller, l)
				if err != nil {
					continue // a level whose fields the caller lacks
				}
				q := driver.Query{Filter: f}
				var want int64
				var rest []memory.Record
				for _, r := range all {
					if q.Matches(r) {
						want++
					} else {
						rest = append(rest, r)
					}
				}
				n, err := d.Delete(context.Background(), q)
				if err != nil || n != want {
					t.Fatalf("Delete as %+v at %s: %d, %v; want %d", caller, l, n, err, want)
				}
				all = rest
			}
		}
		for _, tenant := range []string{"", "acme", "Acme"} {
			q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: tenant}}}
			if got, want := mustList(t, d, q), expected(all, q, clk.Now()); !slices.Equal(idsOf(got), idsOf(want)) {
				t.Fatalf("tenant %q after the erasures:\n got %q\nwant %q", tenant, idsOf(got), idsOf(want))
			}
		}
	})
}

// TestEmptyObjectsRemoved checks that an erasure leaving a ConfigMap empty
// deletes it, and that later writes create it again.
func TestEmptyObjectsRemoved(t *testing.T) {
	onClusters(t, func(t *testing.T, c *cluster) {
		d := c.driver(t, configmap.Options{})
		mustPut(t, d, memory.NewSummary(c.monitor, "wf/s", "one", t0), memory.NewSummary(c.monitor, "wf/s", "two", t0))
		n, err := d.Delete(context.Background(), scoped(t, c.monitor, memory.LevelParentAgent))
		if err != nil || n != 2 {
			t.Fatalf("Delete: %d, %v", n, err)
		}
		if _, err := c.client.ConfigMaps(c.ns).Get(context.Background(), "agent-memory-monitor", getOpts); err == nil {
			t.Errorf("the emptied ConfigMap still exists")
		}
		mustPut(t, d, memory.NewSummary(c.monitor, "wf/s", "three", t0))
		if got := c.lines(t, "agent-memory-monitor"); !slices.Equal(got, []string{"three"}) {
			t.Errorf("after a new write: %q", got)
		}
	})
}
