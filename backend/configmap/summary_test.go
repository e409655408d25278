package configmap_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/configmap"
	"github.com/agentmem/memory/tiers"
)

// TestSummaryFlow runs the document's `summary` memory type over this
// driver: at the end of each step a one-line summary is saved to the
// ConfigMap agent-memory-<agent-name>; at the start of the next step it
// comes back as the [Previous execution context] block; maxEntries and ttl
// hold; and the ConfigMap's data reads as the document's lines.
func TestSummaryFlow(t *testing.T) {
	onClusters(t, func(t *testing.T, c *cluster) {
		ctx := context.Background()
		clk := newClock(t0)
		d := c.driver(t, configmap.Options{Clock: clk.Now})
		store := backend.NewStore(d, backend.StoreOptions{Clock: clk.Now})
		ttl, err := tiers.ParseTTL("7d")
		if err != nil {
			t.Fatal(err)
		}
		mem, err := tiers.NewSummary(store, tiers.SummaryOptions{MaxEntries: 3, TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		who := memory.Identity{Tenant: "acme", Agent: c.agent("monitor")}
		var lines []string
		for i := 1; i <= 4; i++ {
			who.Session = fmt.Sprintf("run-%d", i)
			step := tiers.Step{Workflow: "nightly", Name: "scan", Input: fmt.Sprintf("Scan the payments service, night %d", i), Output: fmt.Sprintf("p99 latency %dms", 40+i)}
			if err := mem.Save(ctx, who, step); err != nil {
				t.Fatalf("Save of step %d: %v", i, err)
			}
			lines = append(lines, fmt.Sprintf("[nightly/scan] Task: Scan the payments service, night %d | Result: p99 latency %dms", i, 40+i))
			clk.Advance(time.Hour)
		}
		who.Session = "run-5"
		got, err := mem.Recall(ctx, who, "")
		if err != nil {
			t.Fatalf("Recall: %v", err)
		}
		want := "[Previous execution context]\n" + lines[1] + "\n" + lines[2] + "\n" + lines[3] + "\n\n[Current task follows]\n"
		if got.Text != want {
			t.Errorf("Recall at the next step's start:\n got %q\nwant %q", got.Text, want)
		}
		if data := c.lines(t, "agent-memory-monitor"); !slices.Equal(data, lines[1:]) {
			t.Errorf("the ConfigMap's data (maxEntries 3):\n got %q\nwant %q", data, lines[1:])
		}

		clk.Advance(ttl)
		if got, err := mem.Recall(ctx, who, ""); err != nil || got.Text != "" {
			t.Errorf("Recall after the ttl: %q, %v; want nothing", got.Text, err)
		}
		step := tiers.Step{Workflow: "nightly", Name: "scan", Input: "Scan again", Output: "quiet"}
		if err := mem.Save(ctx, who, step); err != nil {
			t.Fatalf("Save after the ttl: %v", err)
		}
		if data := c.lines(t, "agent-memory-monitor"); !slices.Equal(data, []string{"[nightly/scan] Task: Scan again | Result: quiet"}) {
			t.Errorf("the ConfigMap's data after the ttl: %q", data)
		}
	})
}
