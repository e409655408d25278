package tiers_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/internal/tokens"
	"github.com/agentmem/memory/tiers"
)

// fakeClock is a settable clock; with a tick it advances on every reading,
// so each reading is distinct.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	tick time.Duration
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.tick)
	return t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// recordingDriver remembers every record ever put, so tests can tell which
// summaries were the newest even after pruning deleted the others. With
// jitter it sleeps a random while before each call, to interleave
// concurrent callers the way a slower driver would.
type recordingDriver struct {
	driver.Driver
	jitter time.Duration
	mu     sync.Mutex
	all    []memory.Record
}

func (d *recordingDriver) pause() {
	if d.jitter > 0 {
		time.Sleep(rand.N(d.jitter))
	}
}

func (d *recordingDriver) List(ctx context.Context, q driver.Query) ([]memory.Record, error) {
	d.pause()
	return d.Driver.List(ctx, q)
}

func (d *recordingDriver) Put(ctx context.Context, recs []memory.Record) error {
	d.pause()
	err := d.Driver.Put(ctx, recs)
	if err == nil {
		d.mu.Lock()
		d.all = append(d.all, recs...)
		d.mu.Unlock()
	}
	return err
}

// countingCounter counts cl100k tokens and how often it was asked.
type countingCounter struct{ calls atomic.Int64 }

func (c *countingCounter) CountTokens(ctx context.Context, s string) (int, error) {
	c.calls.Add(1)
	return tokens.Counter{}.CountTokens(ctx, s)
}

// newStore returns a Store over a fresh in-memory driver on clock.
func newStore(t *testing.T, clock *fakeClock) *backend.Store {
	t.Helper()
	return postureStore(t, clock, memory.Posture{})
}

// plainStore returns a Store over a fresh in-memory driver with the
// default options, for code without a *testing.T; closing it is not
// needed.
func plainStore() *backend.Store {
	return backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{})
}

// postureStore returns a Store enforcing posture over a fresh in-memory
// driver on clock.
func postureStore(t *testing.T, clock *fakeClock, posture memory.Posture) *backend.Store {
	t.Helper()
	d := inmem.New(inmem.Options{Clock: clock.Now})
	s := backend.NewStore(d, backend.StoreOptions{Clock: clock.Now, Posture: posture})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newSummary returns a Summary over a fresh store.
func newSummary(t *testing.T, clock *fakeClock, opt tiers.SummaryOptions) (*tiers.Summary, *backend.Store) {
	t.Helper()
	st := newStore(t, clock)
	s, err := tiers.NewSummary(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

// stored lists every summary record visible to id at the agent level,
// newest first, bypassing the Summary under test.
func stored(t *testing.T, st *backend.Store, id memory.Identity) []memory.Record {
	t.Helper()
	recs, err := st.List(context.Background(), id, memory.Query{Level: memory.LevelAgent, Kinds: []memory.Kind{memory.KindSummary}})
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

var (
	alice = memory.Identity{User: "alice", Agent: "kaos://agent/ai/monitor", Session: "run-1"}
	bob   = memory.Identity{User: "bob", Agent: "kaos://agent/ai/monitor", Session: "run-2"}
)

// countTokens counts s with c, failing the test on an error.
func countTokens(tb testing.TB, c memory.TokenCounter, s string) int {
	tb.Helper()
	n, err := c.CountTokens(context.Background(), s)
	if err != nil {
		tb.Fatalf("counting tokens: %v", err)
	}
	return n
}
