package agentspec_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/configmap"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/fs"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/tiers"
	"github.com/agentmem/memory/tiers/agentspec"
)

// lifecycleClock is a clock the lifecycle test moves by hand.
type lifecycleClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *lifecycleClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *lifecycleClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestLifecycleOverEveryDriver runs the document's load/save lifecycle of
// the summary type — load at step start, save at step end, maxEntries and
// ttl — over the in-memory, SQLite, fs and ConfigMap drivers, and requires
// every driver to give exactly what the in-memory one gives at every step.
func TestLifecycleOverEveryDriver(t *testing.T) {
	drivers := []struct {
		name string
		open func(t *testing.T, clock memory.Clock) driver.Driver
	}{
		{"inmem", func(t *testing.T, clock memory.Clock) driver.Driver { return inmem.New(inmem.Options{Clock: clock}) }},
		{"sqlite", func(t *testing.T, clock memory.Clock) driver.Driver {
			d, err := sqlite.Open(filepath.Join(t.TempDir(), "memory.db"), sqlite.Options{Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			return d
		}},
		{"fs", func(t *testing.T, clock memory.Clock) driver.Driver {
			d, err := fs.Open(t.TempDir(), fs.Options{Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			return d
		}},
		{"configmap", func(t *testing.T, clock memory.Clock) driver.Driver {
			d, err := configmap.New(configmap.Options{Namespace: "ai-agents", Client: fake.NewClientset().CoreV1(), Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			return d
		}},
	}
	var reference []string
	for _, drv := range drivers {
		t.Run(drv.name, func(t *testing.T) {
			got := runLifecycle(t, drv.open)
			if reference == nil {
				reference = got
				return
			}
			if len(got) != len(reference) {
				t.Fatalf("%d recalls, the in-memory driver gave %d", len(got), len(reference))
			}
			for i := range got {
				if got[i] != reference[i] {
					t.Errorf("recall %d differs from the in-memory driver's:\n%s\nwant:\n%s", i, got[i], reference[i])
				}
			}
		})
	}
}

// runLifecycle drives one agent through seven steps over two runs and a
// week's pause, and returns what every step start recalled.
func runLifecycle(t *testing.T, open func(*testing.T, memory.Clock) driver.Driver) []string {
	ctx := context.Background()
	clock := &lifecycleClock{now: time.Date(2026, 11, 30, 3, 12, 0, 0, time.UTC)}
	d := open(t, clock.Now)
	store := backend.NewStore(d, backend.StoreOptions{Clock: clock.Now})
	defer store.Close()
	spec, err := agentspec.Parse([]byte("type: summary\nmaxEntries: 3\nttl: 7d\n"))
	if err != nil {
		t.Fatal(err)
	}
	mem, err := agentspec.NewMemory(ctx, store, spec, agentspec.Environment{})
	if err != nil {
		t.Fatal(err)
	}
	who := memory.Identity{Tenant: "acme", Agent: "kaos://agent/ai-agents/monitor", Session: "run-1"}
	var recalls []string
	step := func(i int) {
		t.Helper()
		rec, err := mem.Recall(ctx, who, "")
		if err != nil {
			t.Fatalf("step %d: Recall: %v", i, err)
		}
		recalls = append(recalls, rec.Text)
		err = mem.Save(ctx, who, tiers.Step{Workflow: "nightly-checks", Name: fmt.Sprintf("scan-%d", i),
			Input: fmt.Sprintf("Check the payments service, pass %d", i), Output: fmt.Sprintf("p99 latency normal in pass %d", i)})
		if err != nil {
			t.Fatalf("step %d: Save: %v", i, err)
		}
		clock.advance(time.Minute)
	}
	for i := range 5 {
		step(i)
	}
	who.Session = "run-2" // a new invocation remembers the last three
	step(5)
	clock.advance(8 * 24 * time.Hour) // past the ttl: only what is newer survives
	step(6)
	last, err := mem.Recall(ctx, who, "")
	if err != nil {
		t.Fatal(err)
	}
	recalls = append(recalls, last.Text)
	if recalls[0] != "" {
		t.Errorf("the first step recalled %q from nowhere", recalls[0])
	}
	if recalls[6] != "" {
		t.Errorf("after the ttl passed, step 6 recalled:\n%s", recalls[6])
	}
	// The new run starts with the last three summaries, in the block.
	want5 := tiers.ContextHeader + "\n" +
		"[nightly-checks/scan-2] Task: Check the payments service, pass 2 | Result: p99 latency normal in pass 2\n" +
		"[nightly-checks/scan-3] Task: Check the payments service, pass 3 | Result: p99 latency normal in pass 3\n" +
		"[nightly-checks/scan-4] Task: Check the payments service, pass 4 | Result: p99 latency normal in pass 4\n\n" +
		tiers.ContextFooter + "\n"
	if recalls[5] != want5 {
		t.Errorf("the new run recalled:\n%q\nwant:\n%q", recalls[5], want5)
	}
	if !strings.Contains(recalls[7], "[nightly-checks/scan-6]") || strings.Contains(recalls[7], "scan-5") {
		t.Errorf("after the pause the last recall is:\n%s\nwant step 6 only", recalls[7])
	}
	return recalls
}
