package configmap_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/configmap"
)

// big returns a summary of n bytes created at t.
func big(n int, t time.Time) memory.Record {
	return memory.NewSummary(monitor, "wf/step", strings.Repeat("x", n), t)
}

// TestObjectLimit checks the 1 MiB limit: without retention a write that
// does not fit fails with memory.ErrTooLarge and stores nothing; with
// MaxEntries or TTL the oldest entries they allow go first, never the
// batch's own; a batch that cannot fit on its own is refused.
func TestObjectLimit(t *testing.T) {
	const half = 600 << 10
	agentQ := func(t *testing.T) func(d *configmap.Driver) []string {
		q := scoped(t, monitor, memory.LevelParentAgent)
		return func(d *configmap.Driver) []string { return idsOf(mustList(t, d, q)) }
	}
	t.Run("no retention", func(t *testing.T) {
		onClusters(t, func(t *testing.T, c *cluster) {
			d := c.driver(t, configmap.Options{})
			list := agentQ(t)
			a := big(half, t0)
			mustPut(t, d, a)
			err := d.Put(context.Background(), []memory.Record{big(half, t0.Add(time.Second))})
			wantErr(t, "a second 600 KiB entry", err, memory.ErrTooLarge)
			if got := list(d); !slices.Equal(got, []string{a.ID}) {
				t.Errorf("after the refused write: %q", got)
			}
			err = d.Put(context.Background(), []memory.Record{big(memory.MaxContentBytes, t0.Add(time.Second))})
			wantErr(t, "a 1 MiB entry", err, memory.ErrTooLarge)
		})
	})
	t.Run("MaxEntries", func(t *testing.T) {
		onClusters(t, func(t *testing.T, c *cluster) {
			d := c.driver(t, configmap.Options{MaxEntries: 2})
			list := agentQ(t)
			small := memory.NewSummary(monitor, "wf/step", "small", t0.Add(-time.Hour))
			a, b := big(400<<10, t0), big(400<<10, t0.Add(time.Second))
			mustPut(t, d, small, a)
			mustPut(t, d, b) // 800 KiB: fits, nothing dropped
			if got := list(d); len(got) != 3 {
				t.Fatalf("before the limit: %q", got)
			}
			n := big(400<<10, t0.Add(2*time.Second))
			mustPut(t, d, n) // over 1 MiB: the oldest beyond the newest two go
			if got, want := list(d), []string{n.ID, b.ID}; !slices.Equal(got, want) {
				t.Errorf("MaxEntries 2 at the limit: got %q, want %q", got, want)
			}
			both := []memory.Record{big(400<<10, t0.Add(3*time.Second)), big(400<<10, t0.Add(4*time.Second)), big(400<<10, t0.Add(5*time.Second))}
			wantErr(t, "a batch over the limit on its own", d.Put(context.Background(), both), memory.ErrTooLarge)
			if got, want := list(d), []string{n.ID, b.ID}; !slices.Equal(got, want) {
				t.Errorf("after the refused batch: got %q, want %q", got, want)
			}
		})
	})
	t.Run("TTL", func(t *testing.T) {
		onClusters(t, func(t *testing.T, c *cluster) {
			clk := newClock(t0)
			d := c.driver(t, configmap.Options{TTL: 24 * time.Hour, Clock: clk.Now})
			list := agentQ(t)
			old := big(half, t0)
			mustPut(t, d, old)
			clk.Advance(time.Hour)
			young := big(half, clk.Now())
			wantErr(t, "over the limit with nothing past the TTL", d.Put(context.Background(), []memory.Record{young}), memory.ErrTooLarge)
			clk.Advance(24 * time.Hour)
			young = big(half, clk.Now())
			mustPut(t, d, young)
			if got := list(d); !slices.Equal(got, []string{young.ID}) {
				t.Errorf("TTL at the limit: got %q, want only %q", got, young.ID)
			}
		})
	})
}
