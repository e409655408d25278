package configmap_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/configmap"
	"github.com/agentmem/memory/backend/driver"
)

// TestForeignAgents checks that a driver refuses the agents of another
// namespace, and ids that are not a plain namespace/name pair, before it
// makes any API call: a Put, and a List or Delete naming such an agent.
// Each of these once went to the object agent-memory-<last segment> of the
// driver's own namespace.
func TestForeignAgents(t *testing.T) {
	cs, _ := newFake()
	d, err := configmap.New(configmap.Options{Client: cs.CoreV1(), Namespace: "acme-ns", MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for agent, want := range map[string]error{
		"kaos://agent/evil-ns/monitor": memory.ErrPermissionDenied,
		"../monitor":                   memory.ErrInvalidArgument,
		"a/../../monitor":              memory.ErrInvalidArgument,
		"kaos://agent/acme-ns/../x":    memory.ErrInvalidArgument,
		"evil-ns/monitor":              memory.ErrInvalidArgument,
	} {
		cs.ClearActions()
		id := memory.Identity{Tenant: "evil", Agent: agent, Session: "run-1"}
		err := d.Put(ctx, []memory.Record{memory.NewSummary(id, "wf/s", "planted", t0)})
		wantErr(t, "Put as "+agent, err, want)
		if want == memory.ErrPermissionDenied {
			q := scoped(t, id, memory.LevelAgent)
			_, err = d.List(ctx, q)
			wantErr(t, "List naming "+agent, err, want)
			_, err = d.Delete(ctx, q)
			wantErr(t, "Delete naming "+agent, err, want)
		}
		if acts := cs.Actions(); len(acts) != 0 {
			t.Errorf("the calls as %s made %d API calls, first %s %s; want none", agent, len(acts), acts[0].GetVerb(), acts[0].GetResource().Resource)
		}
	}
}

// TestForeignAgentReadsDoNotLeak checks that a record of another
// namespace's agent, written into the driver's namespace before the driver
// refused such agents, does not come back to a query naming that agent.
func TestForeignAgentReadsDoNotLeak(t *testing.T) {
	cs, _ := newFake()
	evil := memory.Identity{Tenant: "acme", Agent: "kaos://agent/evil-ns/monitor"}
	planted := memory.NewSummary(evil, "wf/s", "evil's line", t0)
	// The layout of one entry, as an older driver wrote it.
	rec := `{"id":"` + planted.ID + `","kind":"summary","identity":{"tenant":"acme","agent":"` + evil.Agent + `"},"created":1,"version":1}`
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "agent-memory-monitor", Labels: map[string]string{configmap.Label: configmap.LabelValue}},
		Data:       map[string]string{"00000000000000000001-x.txt": planted.Content},
		BinaryData: map[string][]byte{"00000000000000000001-x.json": []byte(rec)},
	}
	if _, err := cs.CoreV1().ConfigMaps("acme-ns").Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err := configmap.New(configmap.Options{Client: cs.CoreV1(), Namespace: "acme-ns"})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []memory.Level{memory.LevelAgent, memory.LevelParentAgent} {
		got, err := d.List(context.Background(), scoped(t, evil, l))
		wantErr(t, "List as the other namespace's agent at "+string(l), err, memory.ErrPermissionDenied)
		if len(got) != 0 {
			t.Errorf("List as the other namespace's agent at %s returned %q", l, idsOf(got))
		}
	}
	// The record is still there for its tenant's store-level reads: the
	// refusal is about the agent named, not a lost record.
	store := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: "acme"}}}
	if got := mustList(t, d, store); !slices.Equal(idsOf(got), []string{planted.ID}) {
		t.Errorf("the tenant's store-level List: %q, want %q", idsOf(got), planted.ID)
	}
}

// TestAgentsOfTwoNamespaces is the case: kaos://agent/acme-ns/monitor
// and kaos://agent/evil-ns/monitor keep their summaries in
// agent-memory-monitor of their own namespaces, each through the driver of
// that namespace; evil filling its object under MaxEntries neither evicts
// acme's summaries nor makes acme's writes fail, and neither driver takes
// the other's agent.
func TestAgentsOfTwoNamespaces(t *testing.T) {
	twoNamespaces(t, func(t *testing.T, acme, evil *cluster) {
		da := acme.driver(t, configmap.Options{MaxEntries: 2})
		de := evil.driver(t, configmap.Options{MaxEntries: 2})
		who := func(c *cluster) memory.Identity { return memory.Identity{Agent: c.agent("monitor"), Session: "run-1"} }
		first := memory.NewSummary(who(acme), "wf/s", "acme's first", t0)
		mustPut(t, da, first)
		for i := range 4 {
			r := big(who(evil), 400<<10, t0.Add(time.Duration(i+1)*time.Second))
			mustPut(t, de, r)
		}
		second := memory.NewSummary(who(acme), "wf/s", "acme's second", t0.Add(time.Minute))
		mustPut(t, da, second)
		if got := acme.lines(t, "agent-memory-monitor"); !slices.Equal(got, []string{"acme's first", "acme's second"}) {
			t.Errorf("acme-ns/agent-memory-monitor: %q", got)
		}
		if got := len(evil.lines(t, "agent-memory-monitor")); got != 2 {
			t.Errorf("evil's ConfigMap holds %d lines, want its newest 2", got)
		}
		wantErr(t, "acme's driver writing as evil's agent", da.Put(context.Background(), []memory.Record{memory.NewSummary(who(evil), "wf/s", "x", t0)}), memory.ErrPermissionDenied)
		wantErr(t, "evil's driver writing as acme's agent", de.Put(context.Background(), []memory.Record{memory.NewSummary(who(acme), "wf/s", "x", t0)}), memory.ErrPermissionDenied)
		_, err := de.List(context.Background(), scoped(t, who(acme), memory.LevelParentAgent))
		wantErr(t, "evil's driver reading acme's agent", err, memory.ErrPermissionDenied)
	})
}

// twoNamespaces runs fn with two namespaces of one cluster, as
// onClusters does with one.
func twoNamespaces(t *testing.T, fn func(t *testing.T, a, b *cluster)) {
	t.Helper()
	t.Run("fake", func(t *testing.T) {
		cs, r := newFake()
		fn(t, newCluster(cs.CoreV1(), "acme-ns", r), newCluster(cs.CoreV1(), "evil-ns", r))
	})
	t.Run("apiserver", func(t *testing.T) {
		cs := realServer(t)
		fn(t, newCluster(cs.CoreV1(), testNamespace(t, cs), nil), newCluster(cs.CoreV1(), testNamespace(t, cs), nil))
	})
}
