package configmap_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/configmap"
)

// countingClient counts the lost races its ConfigMap writes report, so a
// test can see that writers really conflicted, on the fake and on a real
// API server alike.
type countingClient struct {
	typedcorev1.ConfigMapsGetter
	races *atomic.Int64
}

// ConfigMaps returns the counting ConfigMap client of ns.
func (c countingClient) ConfigMaps(ns string) typedcorev1.ConfigMapInterface {
	return countingConfigMaps{c.ConfigMapsGetter.ConfigMaps(ns), c.races}
}

// countingConfigMaps counts Conflict and AlreadyExists errors.
type countingConfigMaps struct {
	typedcorev1.ConfigMapInterface
	races *atomic.Int64
}

func (c countingConfigMaps) count(err error) error {
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		c.races.Add(1)
	}
	return err
}

// Create counts a lost race.
func (c countingConfigMaps) Create(ctx context.Context, cm *corev1.ConfigMap, opts metav1.CreateOptions) (*corev1.ConfigMap, error) {
	out, err := c.ConfigMapInterface.Create(ctx, cm, opts)
	return out, c.count(err)
}

// Update counts a lost race.
func (c countingConfigMaps) Update(ctx context.Context, cm *corev1.ConfigMap, opts metav1.UpdateOptions) (*corev1.ConfigMap, error) {
	out, err := c.ConfigMapInterface.Update(ctx, cm, opts)
	return out, c.count(err)
}

// Delete counts a lost race.
func (c countingConfigMaps) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return c.count(c.ConfigMapInterface.Delete(ctx, name, opts))
}

// TestRacingWriters has two Drivers (two replicas of a controller) with
// several goroutines each append summaries of one agent at once, starting
// from no ConfigMap at all; every entry must be stored, and the writers
// must really have raced (retries counted). On the real API server each
// replica has a client of its own with client-go's default rate limit, as
// a controller's has, so writes also wait on the limiter between lost
// races: a write must keep retrying for as long as that takes.
func TestRacingWriters(t *testing.T) {
	onClusters(t, func(t *testing.T, c *cluster) {
		var races atomic.Int64
		var drivers []*configmap.Driver
		for range 2 {
			var client typedcorev1.ConfigMapsGetter = c.client
			if c.reactor == nil {
				cs, err := kubernetes.NewForConfig(realConfig(t))
				if err != nil {
					t.Fatal(err)
				}
				client = cs.CoreV1()
			}
			d, err := configmap.New(configmap.Options{Client: countingClient{client, &races}, Namespace: c.ns})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			drivers = append(drivers, d)
		}
		const workers, each = 3, 4
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, 2*workers*each)
		for di, d := range drivers {
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for i := range each {
						line := fmt.Sprintf("[nightly/scan] Task: scan %d.%d.%d | Result: ok", di, w, i)
						r := memory.NewSummary(c.monitor, "nightly/scan", line, t0.Add(time.Duration(i)*time.Millisecond))
						if err := d.Put(context.Background(), []memory.Record{r}); err != nil {
							errs <- err
						}
					}
				}()
			}
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("a racing Put: %v", err)
		}
		got := mustList(t, drivers[0], scoped(t, c.monitor, memory.LevelAgent))
		if len(got) != 2*workers*each {
			t.Errorf("stored %d entries, want %d: entries were lost", len(got), 2*workers*each)
		}
		if lines := c.lines(t, "agent-memory-monitor"); len(lines) != 2*workers*each {
			t.Errorf("the ConfigMap holds %d lines, want %d", len(lines), 2*workers*each)
		}
		t.Logf("%d lost races retried", races.Load())
		if races.Load() == 0 {
			t.Errorf("no writer lost a race: the test did not exercise the retries")
		}
		if c.reactor != nil && c.reactor.conflicts.Load() != races.Load() {
			t.Errorf("the reactor reported %d races, the clients saw %d", c.reactor.conflicts.Load(), races.Load())
		}
	})
}

// TestLongContention checks that a write that loses the race many times
// in a row — more than any fixed count would allow — still succeeds while
// its context and RetryTimeout allow, storing its entry once.
func TestLongContention(t *testing.T) {
	cs, _ := newFake()
	const losses = 12
	var lost atomic.Int64
	conflictFirst := func(action k8stesting.Action) (bool, runtime.Object, error) {
		if lost.Add(1) <= losses {
			return true, nil, apierrors.NewConflict(configMapsGVR.GroupResource(), "agent-memory-monitor", errAlwaysChanged)
		}
		return false, nil, nil // on to the resourceVersion reactor
	}
	cs.PrependReactor("update", "configmaps", conflictFirst)
	cs.PrependReactor("create", "configmaps", conflictFirst)
	d, err := configmap.New(configmap.Options{Client: cs.CoreV1(), Namespace: "ai-agents"})
	if err != nil {
		t.Fatal(err)
	}
	r := memory.NewSummary(monitor, "wf/s", "stored at last", t0)
	if err := d.Put(context.Background(), []memory.Record{r}); err != nil {
		t.Fatalf("Put after %d lost races: %v", losses, err)
	}
	if got := mustList(t, d, scoped(t, monitor, memory.LevelAgent)); !slices.Equal(idsOf(got), []string{r.ID}) {
		t.Errorf("stored %q, want %q", idsOf(got), r.ID)
	}
}

// TestConflictExhaustion checks the two bounds of a writer that keeps
// losing the race: RetryTimeout, after which it fails with
// memory.ErrConflict wrapping the API's error, and the context, whose
// error comes back unchanged when it ends first; both store nothing.
func TestConflictExhaustion(t *testing.T) {
	cs, _ := newFake()
	cs.PrependReactor("update", "configmaps", alwaysConflict)
	cs.PrependReactor("create", "configmaps", alwaysConflict)
	d, err := configmap.New(configmap.Options{Client: cs.CoreV1(), Namespace: "ai-agents"})
	if err != nil {
		t.Fatal(err)
	}
	const timeout = time.Second
	var races atomic.Int64
	d2, err := configmap.New(configmap.Options{Client: countingClient{cs.CoreV1(), &races}, Namespace: "ai-agents", RetryTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = d2.Put(context.Background(), []memory.Record{memory.NewSummary(monitor, "wf/s", "never stored", t0)})
	took := time.Since(start)
	wantErr(t, "Put against a ConfigMap that always changes", err, memory.ErrConflict)
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Errorf("the error %v does not wrap the API's StatusError", err)
	}
	// The last backoff step is at most 500ms, and the write gives up
	// rather than sleep past RetryTimeout.
	if took < timeout/2 || took > timeout+5*time.Second {
		t.Errorf("gave up after %s, want about RetryTimeout (%s)", took, timeout)
	}
	if races.Load() < 3 {
		t.Errorf("gave up after %d attempts in %s", races.Load(), took)
	}
	t.Logf("gave up after %d attempts in %s: %v", races.Load(), took.Round(time.Millisecond), err)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	d3, err := configmap.New(configmap.Options{Client: cs.CoreV1(), Namespace: "ai-agents"})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	err = d3.Put(ctx, []memory.Record{memory.NewSummary(monitor, "wf/s", "never stored", t0)})
	if err != context.DeadlineExceeded {
		t.Errorf("Put whose context ends while it retries: %v, want context.DeadlineExceeded unchanged", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Put returned %s after its context ended", took)
	}
	if got := mustList(t, d, scoped(t, monitor, memory.LevelAgent)); len(got) != 0 {
		t.Errorf("stored %q", idsOf(got))
	}
}
