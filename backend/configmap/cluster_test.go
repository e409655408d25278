package configmap_test

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/configmap"
	"github.com/agentmem/memory/backend/driver"
)

// cluster is where one test's ConfigMaps live: the fake clientset with the
// resourceVersion reactor, or a real API server.
type cluster struct {
	client typedcorev1.ConfigMapsGetter
	ns     string
	// reactor is the fake's reactor; nil on a real API server.
	reactor *rvReactor
	// monitor is the identity most tests write as: the package's monitor,
	// as an agent of ns.
	monitor memory.Identity
}

// newCluster returns the cluster of client and namespace ns.
func newCluster(client typedcorev1.ConfigMapsGetter, ns string, r *rvReactor) *cluster {
	c := &cluster{client: client, ns: ns, reactor: r, monitor: monitor}
	c.monitor.Agent = c.agent("monitor")
	return c
}

// agent returns the id of the agent name of c's namespace.
func (c *cluster) agent(name string) string { return configmap.AgentScheme + c.ns + "/" + name }

// onClusters runs fn against the fake clientset and, as the subtest
// "apiserver", against a real API server when one was requested (see
// realServer).
func onClusters(t *testing.T, fn func(t *testing.T, c *cluster)) {
	t.Helper()
	t.Run("fake", func(t *testing.T) {
		cs, r := newFake()
		fn(t, newCluster(cs.CoreV1(), "ai-agents", r))
	})
	t.Run("apiserver", func(t *testing.T) {
		cs := realServer(t)
		fn(t, newCluster(cs.CoreV1(), testNamespace(t, cs), nil))
	})
}

// driver opens a Driver on c with the given options (Client and Namespace
// filled in); it is closed when the test ends.
func (c *cluster) driver(t *testing.T, opt configmap.Options) *configmap.Driver {
	t.Helper()
	opt.Client, opt.Namespace = c.client, c.ns
	d, err := configmap.New(opt)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// lines returns the Data values of a ConfigMap in key order, as a
// controller loading AGENT_MEMORY sees them; nil when it does not exist.
func (c *cluster) lines(t *testing.T, name string) []string {
	t.Helper()
	cm, err := c.client.ConfigMaps(c.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get ConfigMap %s: %v", name, err)
	}
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = cm.Data[k]
	}
	return out
}

// clock is a hand-moved clock, safe for concurrent use.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

// newClock returns a clock reading t.
func newClock(t time.Time) *clock { return &clock{now: t} }

// Now returns the reading.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward.
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// getOpts are the options of the tests' own Get calls.
var getOpts = metav1.GetOptions{}

// t0 is the tests' starting time.
var t0 = time.Date(2026, 11, 30, 9, 0, 0, 123456789, time.UTC)

// scoped returns a query for caller id at level l.
func scoped(t *testing.T, id memory.Identity, l memory.Level) driver.Query {
	t.Helper()
	f, err := memory.Posture{AllowStore: true}.Filter(id, l)
	if err != nil {
		t.Fatalf("Filter(%+v, %s): %v", id, l, err)
	}
	return driver.Query{Filter: f}
}

// wantErr fails unless err matches want.
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got error %v, want %v", what, err, want)
	}
}

// mustList lists q or stops the test.
func mustList(t *testing.T, d driver.Driver, q driver.Query) []memory.Record {
	t.Helper()
	recs, err := d.List(context.Background(), q)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return recs
}

// mustPut stores recs or stops the test.
func mustPut(t *testing.T, d driver.Driver, recs ...memory.Record) {
	t.Helper()
	if err := d.Put(context.Background(), recs); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

// idsOf returns the ids of recs in order.
func idsOf(recs []memory.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}
