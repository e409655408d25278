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

// big returns a summary of n bytes written by id, created at t.
func big(id memory.Identity, n int, t time.Time) memory.Record {
	return memory.NewSummary(id, "wf/step", strings.Repeat("x", n), t)
}

// TestObjectLimit checks the 1 MiB limit: without retention a write that
// does not fit fails with memory.ErrTooLarge and stores nothing; with
// MaxEntries or TTL the oldest entries they allow go first, never the
// batch's own; a batch that cannot fit on its own is refused.
func TestObjectLimit(t *testing.T) {
	const half = 600 << 10
	agentQ := func(t *testing.T, c *cluster) func(d *configmap.Driver) []string {
		q := scoped(t, c.monitor, memory.LevelParentAgent)
		return func(d *configmap.Driver) []string { return idsOf(mustList(t, d, q)) }
	}
	t.Run("no retention", func(t *testing.T) {
		onClusters(t, func(t *testing.T, c *cluster) {
			d := c.driver(t, configmap.Options{})
			list := agentQ(t, c)
			a := big(c.monitor, half, t0)
			mustPut(t, d, a)
			err := d.Put(context.Background(), []memory.Record{big(c.monitor, half, t0.Add(time.Second))})
			wantErr(t, "a second 600 KiB entry", err, memory.ErrTooLarge)
			if got := list(d); !slices.Equal(got, []string{a.ID}) {
				t.Errorf("after the refused write: %q", got)
			}
			err = d.Put(context.Background(), []memory.Record{big(c.monitor, memory.MaxContentBytes, t0.Add(time.Second))})
			wantErr(t, "a 1 MiB entry", err, memory.ErrTooLarge)
		})
	})
	t.Run("MaxEntries", func(t *testing.T) {
		onClusters(t, func(t *testing.T, c *cluster) {
			d := c.driver(t, configmap.Options{MaxEntries: 2})
			list := agentQ(t, c)
			small := memory.NewSummary(c.monitor, "wf/step", "small", t0.Add(-time.Hour))
			a, b := big(c.monitor, 400<<10, t0), big(c.monitor, 400<<10, t0.Add(time.Second))
			mustPut(t, d, small, a)
			mustPut(t, d, b) // 800 KiB: fits, nothing dropped
			if got := list(d); len(got) != 3 {
				t.Fatalf("before the limit: %q", got)
			}
			n := big(c.monitor, 400<<10, t0.Add(2*time.Second))
			mustPut(t, d, n) // over 1 MiB: the oldest beyond the newest two go
			if got, want := list(d), []string{n.ID, b.ID}; !slices.Equal(got, want) {
				t.Errorf("MaxEntries 2 at the limit: got %q, want %q", got, want)
			}
			both := []memory.Record{big(c.monitor, 400<<10, t0.Add(3*time.Second)), big(c.monitor, 400<<10, t0.Add(4*time.Second)), big(c.monitor, 400<<10, t0.Add(5*time.Second))}
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
			list := agentQ(t, c)
			old := big(c.monitor, half, t0)
			mustPut(t, d, old)
			clk.Advance(time.Hour)
			young := big(c.monitor, half, clk.Now())
			wantErr(t, "over the limit with nothing past the TTL", d.Put(context.Background(), []memory.Record{young}), memory.ErrTooLarge)
			clk.Advance(24 * time.Hour)
			young = big(c.monitor, half, clk.Now())
			mustPut(t, d, young)
			if got := list(d); !slices.Equal(got, []string{young.ID}) {
				t.Errorf("TTL at the limit: got %q, want only %q", got, young.ID)
			}
		})
	})
}

// TestEvictionScopes checks that the entries a write drops to fit the
// object limit are its own scope's (tenant, user and agent): tenants and
// users sharing an agent's ConfigMap never drop each other's entries,
// under MaxEntries or TTL, and a writer that finds the object taken by
// other scopes' entries gets memory.ErrTooLarge, storing nothing and
// leaving theirs intact.
func TestEvictionScopes(t *testing.T) {
	const part = 400 << 10
	scopes := func(c *cluster) (acme, evil, bob memory.Identity) {
		acme = c.monitor
		evil, bob = acme, acme
		evil.Tenant, bob.User = "evil", "bob"
		return acme, evil, bob
	}
	t.Run("MaxEntries", func(t *testing.T) {
		onClusters(t, func(t *testing.T, c *cluster) {
			d := c.driver(t, configmap.Options{MaxEntries: 1})
			acme, evil, bob := scopes(c)
			a := big(acme, part, t0)
			e1, e2 := big(evil, part, t0.Add(time.Second)), big(evil, part, t0.Add(2*time.Second))
			mustPut(t, d, a)
			mustPut(t, d, e1)
			// Over 1 MiB: evil may drop its own entries beyond its newest
			// one (e1), not acme's older one.
			mustPut(t, d, e2)
			if got := idsOf(mustList(t, d, scoped(t, acme, memory.LevelAgent))); !slices.Equal(got, []string{a.ID}) {
				t.Errorf("acme's entries after evil's writes: %q, want %q", got, a.ID)
			}
			if got := idsOf(mustList(t, d, scoped(t, evil, memory.LevelAgent))); !slices.Equal(got, []string{e2.ID}) {
				t.Errorf("evil's entries after its writes: %q, want %q", got, e2.ID)
			}
			// bob has nothing of his own to drop: the object is full of
			// the others' entries.
			err := d.Put(context.Background(), []memory.Record{big(bob, part, t0.Add(3*time.Second))})
			wantErr(t, "a write of a scope with nothing to drop", err, memory.ErrTooLarge)
			for _, w := range []struct {
				id   memory.Identity
				want string
			}{{acme, a.ID}, {evil, e2.ID}} {
				if got := idsOf(mustList(t, d, scoped(t, w.id, memory.LevelAgent))); !slices.Equal(got, []string{w.want}) {
					t.Errorf("%s/%s's entries after the refused write: %q, want %q", w.id.Tenant, w.id.User, got, w.want)
				}
			}
			if got := mustList(t, d, scoped(t, bob, memory.LevelAgent)); len(got) != 0 {
				t.Errorf("the refused write stored %q", idsOf(got))
			}
		})
	})
	t.Run("TTL", func(t *testing.T) {
		onClusters(t, func(t *testing.T, c *cluster) {
			clk := newClock(t0)
			d := c.driver(t, configmap.Options{TTL: time.Hour, Clock: clk.Now})
			acme, evil, _ := scopes(c)
			old := big(acme, 600<<10, t0)
			mustPut(t, d, old)
			clk.Advance(2 * time.Hour)
			// acme's entry is past the TTL, but it is not evil's to drop.
			err := d.Put(context.Background(), []memory.Record{big(evil, 600<<10, clk.Now())})
			wantErr(t, "another tenant's write over the limit", err, memory.ErrTooLarge)
			if got := idsOf(mustList(t, d, scoped(t, acme, memory.LevelAgent))); !slices.Equal(got, []string{old.ID}) {
				t.Errorf("acme's entries after evil's refused write: %q, want %q", got, old.ID)
			}
			// acme's own write may drop it.
			young := big(acme, 600<<10, clk.Now())
			mustPut(t, d, young)
			if got := idsOf(mustList(t, d, scoped(t, acme, memory.LevelAgent))); !slices.Equal(got, []string{young.ID}) {
				t.Errorf("acme's entries after its own write: %q, want %q", got, young.ID)
			}
		})
	})
}
