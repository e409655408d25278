package configmap_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/configmap"
	"github.com/agentmem/memory/backend/driver"
)

// monitor is the agent most tests write as.
var monitor = memory.Identity{Tenant: "acme", User: "alice", Agent: "kaos://agent/ai-agents/monitor", Session: "run-1"}

// TestParseAgent checks the agent-id forms ParseAgent accepts and
// refuses.
func TestParseAgent(t *testing.T) {
	for agent, want := range map[string][2]string{
		"kaos://agent/ai-agents/monitor":              {"ai-agents", "monitor"},
		"kaos://agent/ns2/monitor":                    {"ns2", "monitor"},
		"kaos://agent/a/code.reviewer-2":              {"a", "code.reviewer-2"},
		"monitor":                                     {"", "monitor"},
		"code.reviewer-2":                             {"", "code.reviewer-2"},
		"kaos://agent/ns/" + strings.Repeat("x", 240): {"ns", strings.Repeat("x", 240)},
	} {
		ns, name, err := configmap.ParseAgent(agent)
		if err != nil || ns != want[0] || name != want[1] {
			t.Errorf("ParseAgent(%q) = %q, %q, %v; want %q, %q", agent, ns, name, err, want[0], want[1])
		}
	}
	_, _, err := configmap.ParseAgent("")
	wantErr(t, "ParseAgent of no agent", err, memory.ErrIncompleteScope)
	for _, bad := range []string{
		// Paths that used to collapse to their last segment.
		"../x", "a/../../b", "kaos://agent/ns/../x", "kaos://agent/../x", "ns/monitor", "/monitor", "monitor/",
		"kaos://agent/ns/a/b", "kaos://agent/monitor", "kaos://agent/ns/", "kaos://agent//monitor", "kaos://agent/",
		"kaos://agent/Ns/monitor", "kaos://agent/n_s/monitor", "kaos://agent/" + strings.Repeat("n", 64) + "/monitor",
		"KAOS://agent/ns/monitor", "kaos://agents/ns/monitor", "https://agent/ns/monitor", "urn:monitor",
		"Monitor", "名前", "a b", "under_score", "a..b", ".", "..", strings.Repeat("x", 241),
	} {
		_, _, err := configmap.ParseAgent(bad)
		wantErr(t, fmt.Sprintf("ParseAgent(%q)", bad), err, memory.ErrInvalidArgument)
	}
}

// TestObjectName checks the object names of a driver's agents: an agent
// of its namespace, by URI or by name alone, gets
// agent-memory-<agent-name>; an agent of another namespace is refused.
func TestObjectName(t *testing.T) {
	cs, _ := newFake()
	d, err := configmap.New(configmap.Options{Client: cs.CoreV1(), Namespace: "acme-ns"})
	if err != nil {
		t.Fatal(err)
	}
	for agent, want := range map[string]string{
		"kaos://agent/acme-ns/monitor": "agent-memory-monitor",
		"monitor":                      "agent-memory-monitor",
		"code.reviewer-2":              "agent-memory-code.reviewer-2",
	} {
		got, err := d.ObjectName(agent)
		if err != nil || got != want {
			t.Errorf("ObjectName(%q) = %q, %v; want %q", agent, got, err, want)
		}
	}
	_, err = d.ObjectName("kaos://agent/evil-ns/monitor")
	wantErr(t, "ObjectName of another namespace's agent", err, memory.ErrPermissionDenied)
	_, err = d.ObjectName("../monitor")
	wantErr(t, "ObjectName of a path", err, memory.ErrInvalidArgument)
}

// TestNew checks the options New refuses and its defaults.
func TestNew(t *testing.T) {
	cs, _ := newFake()
	for _, c := range []struct {
		what string
		opt  configmap.Options
	}{
		{"no client", configmap.Options{}},
		{"bad namespace", configmap.Options{Client: cs.CoreV1(), Namespace: "Ai_Agents"}},
		{"negative MaxEntries", configmap.Options{Client: cs.CoreV1(), MaxEntries: -1}},
		{"negative TTL", configmap.Options{Client: cs.CoreV1(), TTL: -time.Second}},
	} {
		_, err := configmap.New(c.opt)
		wantErr(t, "New with "+c.what, err, memory.ErrInvalidArgument)
	}
	d, err := configmap.New(configmap.Options{Client: cs.CoreV1()})
	if err != nil || d.Namespace() != configmap.DefaultNamespace {
		t.Fatalf("New with defaults: %v, namespace %q", err, d.Namespace())
	}
}

// TestLayout checks the object the document describes: the ConfigMap
// agent-memory-<agent-name> in the namespace, the driver's label, one
// sortable data key per entry whose value is the readable line, and the
// record as JSON beside it.
func TestLayout(t *testing.T) {
	onClusters(t, func(t *testing.T, c *cluster) {
		d := c.driver(t, configmap.Options{})
		first := memory.NewSummary(c.monitor, "nightly/scan", "[nightly/scan] Task: Scan payments | Result: p99 spike at 03:12", t0)
		second := memory.NewSummary(c.monitor, "nightly/scan", "[nightly/scan] Task: Scan payments | Result: no anomaly", t0.Add(time.Hour))
		early := memory.NewSummary(c.monitor, "nightly/scan", "[nightly/scan] Task: Scan payments | Result: baseline", time.Date(1969, 7, 20, 20, 17, 40, 0, time.UTC))
		mustPut(t, d, second, first)
		mustPut(t, d, early)

		cm, err := c.client.ConfigMaps(c.ns).Get(context.Background(), "agent-memory-monitor", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the ConfigMap agent-memory-monitor: %v", err)
		}
		if cm.Labels[configmap.Label] != configmap.LabelValue {
			t.Errorf("labels %v, want %s=%s", cm.Labels, configmap.Label, configmap.LabelValue)
		}
		want := []string{early.Content, first.Content, second.Content}
		if got := c.lines(t, "agent-memory-monitor"); !slices.Equal(got, want) {
			t.Errorf("data in key order:\n got %q\nwant %q", got, want)
		}
		if len(cm.Data) != 3 || len(cm.BinaryData) != 3 {
			t.Fatalf("got %d data and %d binaryData keys, want 3 and 3", len(cm.Data), len(cm.BinaryData))
		}
		for k := range cm.Data {
			if errs := validation.IsConfigMapKey(k); len(errs) > 0 || !strings.HasSuffix(k, ".txt") {
				t.Errorf("data key %q: %v", k, errs)
			}
			stem := strings.TrimSuffix(k, ".txt")
			var rec struct {
				ID       string `json:"id"`
				Identity struct {
					Agent string `json:"agent"`
				} `json:"identity"`
				Version int64 `json:"version"`
			}
			if err := json.Unmarshal(cm.BinaryData[stem+".json"], &rec); err != nil {
				t.Errorf("binaryData %s.json: %v", stem, err)
			}
			if rec.ID == "" || rec.Identity.Agent != c.monitor.Agent || rec.Version != 1 {
				t.Errorf("record beside %s: %+v", k, rec)
			}
		}
	})
}

// TestForeignKeys checks that keys the driver does not manage survive its
// writes and erasures.
func TestForeignKeys(t *testing.T) {
	onClusters(t, func(t *testing.T, c *cluster) {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "agent-memory-monitor", Namespace: c.ns},
			Data:       map[string]string{"notes": "kept by hand"},
		}
		if _, err := c.client.ConfigMaps(c.ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		d := c.driver(t, configmap.Options{})
		r := memory.NewSummary(c.monitor, "wf/step", "line", t0)
		mustPut(t, d, r)
		if got := mustList(t, d, scoped(t, c.monitor, memory.LevelAgent)); !slices.Equal(idsOf(got), []string{r.ID}) {
			t.Errorf("List: %q", idsOf(got))
		}
		n, err := d.Delete(context.Background(), scoped(t, c.monitor, memory.LevelAgent))
		if err != nil || n != 1 {
			t.Fatalf("Delete: %d, %v", n, err)
		}
		if got := c.lines(t, "agent-memory-monitor"); !slices.Equal(got, []string{"kept by hand"}) {
			t.Errorf("data after the erasure: %q", got)
		}
	})
}

// TestVersions checks memory.Record.Version: 1 for a new id, one more per
// write, and 1 again after a delete.
func TestVersions(t *testing.T) {
	onClusters(t, func(t *testing.T, c *cluster) {
		d := c.driver(t, configmap.Options{})
		r := memory.NewFact(c.monitor, "payments p99 is 40ms", t0)
		q := scoped(t, c.monitor, memory.LevelAgent)
		for want := int64(1); want <= 3; want++ {
			mustPut(t, d, r)
			if got := mustList(t, d, q); len(got) != 1 || got[0].Version != want {
				t.Fatalf("after write %d: %+v", want, got)
			}
		}
		if n, err := d.Delete(context.Background(), q); err != nil || n != 1 {
			t.Fatalf("Delete: %d, %v", n, err)
		}
		mustPut(t, d, r)
		if got := mustList(t, d, q); len(got) != 1 || got[0].Version != 1 {
			t.Fatalf("after a delete and a write: %+v", got)
		}
	})
}

// TestRoundTrip checks that every field comes back as written.
func TestRoundTrip(t *testing.T) {
	onClusters(t, func(t *testing.T, c *cluster) {
		d := c.driver(t, configmap.Options{})
		zone := time.FixedZone("UTC+0545", 5*3600+45*60)
		in := memory.Record{
			ID: "rt-ü-1", Kind: memory.KindDocument,
			Identity: memory.Identity{Tenant: "tenant-ü", User: "用户", Agent: c.agent("monitor"), Instance: "inst-🦊", Squad: "squad é", Session: "run-Ω"},
			Label:    "working", Key: "live_chat_vendors/ключ",
			Content:  "{\"note\":\"naïve café 🦊\\n\\ttab 'single' \\\"double\\\" \\\\ %_*\"}\r\n\t  ",
			Metadata: map[string]string{"source": "wf/step-1", "ключ": "значение", "empty": ""},
			Created:  time.Date(2025, 1, 2, 3, 4, 5, 123456789, zone),
			Expires:  time.Date(2031, 6, 7, 8, 9, 10, 987654321, time.UTC),
			Tokens:   42,
			Vector:   []float32{0.1, -2.5, 3e-7},
		}
		mustPut(t, d, in)
		got := mustList(t, d, scoped(t, in.Identity, memory.LevelSquadAgentRun))
		if len(got) != 1 {
			t.Fatalf("got %d records", len(got))
		}
		g := got[0]
		if g.ID != in.ID || g.Kind != in.Kind || g.Identity != in.Identity || g.Label != in.Label || g.Key != in.Key ||
			g.Content != in.Content || !g.Created.Equal(in.Created) || !g.Expires.Equal(in.Expires) || g.Tokens != in.Tokens ||
			g.Version != 1 || !slices.Equal(g.Vector, in.Vector) || len(g.Metadata) != len(in.Metadata) {
			t.Errorf("round trip:\n got %+v\nwant %+v", g, in)
		}
		for k, v := range in.Metadata {
			if g.Metadata[k] != v {
				t.Errorf("metadata %q: got %q, want %q", k, g.Metadata[k], v)
			}
		}
	})
}

// TestConflicts checks that an id its tenant holds with one identity is
// refused to any other identity of the tenant, in the same ConfigMap or
// another one, storing nothing, while another tenant's record under the id
// is a record of its own (ids are unique per tenant).
func TestConflicts(t *testing.T) {
	onClusters(t, func(t *testing.T, c *cluster) {
		d := c.driver(t, configmap.Options{})
		orig := memory.Record{ID: "doc-1", Kind: memory.KindDocument, Identity: c.monitor, Key: "k", Content: `"v1"`, Created: t0}
		mustPut(t, d, orig)
		for _, o := range []memory.Identity{
			{Tenant: "acme", User: "bob", Agent: c.monitor.Agent, Session: "run-1"},
			{Tenant: "acme", User: "alice", Agent: "monitor", Session: "run-1"},
			{Tenant: "acme", User: "alice", Agent: c.agent("reviewer"), Session: "run-1"},
		} {
			clash := orig
			clash.Identity, clash.Content = o, `"hijacked"`
			fresh := memory.Record{ID: "fresh", Kind: memory.KindFact, Identity: o, Content: "new", Created: t0}
			wantErr(t, fmt.Sprintf("Put of %q as %+v", clash.ID, o), d.Put(context.Background(), []memory.Record{fresh, clash}), memory.ErrPermissionDenied)
		}
		store := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "acme"}}}
		got := mustList(t, d, store)
		if len(got) != 1 || got[0].Content != `"v1"` {
			t.Errorf("after the refusals: %+v", got)
		}
		other := orig
		other.Identity = memory.Identity{Tenant: "other", User: "alice", Agent: c.monitor.Agent, Session: "run-1"}
		other.Content = `"other's own"`
		mustPut(t, d, other)
		if got := mustList(t, d, store); len(got) != 1 || got[0].Content != `"v1"` {
			t.Errorf("acme's record after another tenant used its id: %+v", got)
		}
		if got := mustList(t, d, driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "other"}}}); len(got) != 1 || got[0].Content != `"other's own"` {
			t.Errorf("another tenant's record under the id: %+v", got)
		}
	})
}

// TestBadInput checks the classified errors of input the driver refuses,
// and that nothing is stored.
func TestBadInput(t *testing.T) {
	onClusters(t, func(t *testing.T, c *cluster) {
		d := c.driver(t, configmap.Options{})
		ctx := context.Background()
		rec := func(id memory.Identity, content string) memory.Record {
			return memory.Record{ID: memory.NewID(t0), Kind: memory.KindSummary, Identity: id, Content: content, Created: t0}
		}
		noAgent := memory.Identity{Tenant: "acme", User: "alice", Session: "run-1"}
		reviewer := c.monitor
		reviewer.Agent = c.agent("reviewer")
		for _, c := range []struct {
			what string
			recs []memory.Record
			want error
		}{
			{"a record without an agent", []memory.Record{rec(noAgent, "x")}, memory.ErrIncompleteScope},
			{"an agent Kubernetes cannot name", []memory.Record{rec(memory.Identity{Agent: c.agent("Monitor_1")}, "x")}, memory.ErrInvalidArgument},
			{"an agent of another namespace", []memory.Record{rec(memory.Identity{Agent: "kaos://agent/other-ns/monitor"}, "x")}, memory.ErrPermissionDenied},
			{"a batch with an agent of another namespace", []memory.Record{rec(c.monitor, "x"), rec(memory.Identity{Agent: "kaos://agent/other-ns/monitor"}, "y")}, memory.ErrPermissionDenied},
			{"a batch over two agents", []memory.Record{rec(c.monitor, "x"), rec(reviewer, "y")}, memory.ErrInvalidArgument},
			{"invalid UTF-8", []memory.Record{rec(c.monitor, "bad \xff")}, memory.ErrInvalidArgument},
			{"oversized content", []memory.Record{rec(c.monitor, strings.Repeat("x", memory.MaxContentBytes+1))}, memory.ErrTooLarge},
			{"an oversized batch", make([]memory.Record, memory.MaxBatch+1), memory.ErrTooLarge},
		} {
			wantErr(t, "Put of "+c.what, d.Put(ctx, c.recs), c.want)
		}
		v2 := rec(c.monitor, "two dims")
		v2.Vector = []float32{1, 0}
		mustPut(t, d, v2)
		v3 := rec(reviewer, "three dims")
		v3.Vector = []float32{1, 0, 0}
		wantErr(t, "Put of a vector of another dimension", d.Put(ctx, []memory.Record{v3}), memory.ErrInvalidArgument)
		if got := mustList(t, d, scoped(t, c.monitor, memory.LevelUser)); !slices.Equal(idsOf(got), []string{v2.ID}) {
			t.Errorf("stored after the refusals: %q", idsOf(got))
		}
		_, err := d.List(ctx, driver.Query{})
		wantErr(t, "an unscoped List", err, memory.ErrIncompleteScope)
		_, err = d.Delete(ctx, driver.Query{Filter: scoped(t, c.monitor, memory.LevelAgent).Filter, Limit: -1})
		wantErr(t, "a negative limit", err, memory.ErrInvalidArgument)
	})
}

// TestLifecycle checks Close and done contexts.
func TestLifecycle(t *testing.T) {
	onClusters(t, func(t *testing.T, c *cluster) {
		d := c.driver(t, configmap.Options{})
		kept := memory.NewSummary(c.monitor, "wf/s", "kept", t0)
		mustPut(t, d, kept)
		q := scoped(t, c.monitor, memory.LevelAgent)
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		wantErr(t, "Put with a cancelled context", d.Put(cancelled, []memory.Record{memory.NewSummary(c.monitor, "wf/s", "lost", t0)}), context.Canceled)
		_, err := d.List(cancelled, q)
		wantErr(t, "List with a cancelled context", err, context.Canceled)
		_, err = d.Delete(cancelled, q)
		wantErr(t, "Delete with a cancelled context", err, context.Canceled)
		if got := mustList(t, d, q); !slices.Equal(idsOf(got), []string{kept.ID}) {
			t.Errorf("after the cancelled calls: %q", idsOf(got))
		}
		for range 2 {
			if err := d.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		}
		wantErr(t, "Put after Close", d.Put(context.Background(), []memory.Record{kept}), memory.ErrClosed)
		_, err = d.List(context.Background(), q)
		wantErr(t, "List after Close", err, memory.ErrClosed)
		_, err = d.Delete(context.Background(), q)
		wantErr(t, "Delete after Close", err, memory.ErrClosed)
	})
}

// TestSweep checks driver.Sweeper: exactly the records expired at the
// driver's clock go, in every ConfigMap, and an emptied one is deleted.
func TestSweep(t *testing.T) {
	onClusters(t, func(t *testing.T, c *cluster) {
		clk := newClock(t0)
		d := c.driver(t, configmap.Options{Clock: clk.Now})
		reviewer := memory.Identity{Tenant: "acme", Agent: "reviewer"}
		exp := func(id memory.Identity, content string, in time.Duration) memory.Record {
			r := memory.NewSummary(id, "wf/s", content, t0)
			if in != 0 {
				r.Expires = t0.Add(in)
			}
			return r
		}
		keep := exp(c.monitor, "kept", 0)
		later := exp(c.monitor, "later", 2*time.Hour)
		mustPut(t, d, keep, later, exp(c.monitor, "soon", time.Hour))
		mustPut(t, d, exp(reviewer, "soon too", time.Hour))
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := d.Sweep(cancelled); !errors.Is(err, context.Canceled) {
			t.Errorf("Sweep with a cancelled context: %v", err)
		}
		if n, err := d.Sweep(context.Background()); err != nil || n != 0 {
			t.Errorf("Sweep before anything expired: %d, %v", n, err)
		}
		clk.Advance(time.Hour)
		if n, err := d.Sweep(context.Background()); err != nil || n != 2 {
			t.Errorf("Sweep an hour later: %d, %v; want 2", n, err)
		}
		if got := c.lines(t, "agent-memory-monitor"); !slices.Equal(got, []string{"kept", "later"}) && !slices.Equal(got, []string{"later", "kept"}) {
			t.Errorf("monitor's data after the sweep: %q", got)
		}
		if _, err := c.client.ConfigMaps(c.ns).Get(context.Background(), "agent-memory-reviewer", getOpts); err == nil {
			t.Errorf("the swept-empty ConfigMap agent-memory-reviewer still exists")
		}
		n, err := d.Delete(context.Background(), scoped(t, c.monitor, memory.LevelParentAgent))
		if err != nil || n != 2 {
			t.Errorf("Delete after the sweep: %d, %v; want the 2 records left", n, err)
		}
		_ = d.Close()
		if _, err := d.Sweep(context.Background()); !errors.Is(err, memory.ErrClosed) {
			t.Errorf("Sweep after Close: %v", err)
		}
	})
}
