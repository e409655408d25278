package facts_test

import (
	"os"
	"sync"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/pgtest"
	"github.com/agentmem/memory/internal/storagetest"
	"github.com/agentmem/memory/tiers/facts"
)

// factDrivers are the drivers the fact tier is tested over.
var factDrivers = storagetest.Drivers(&pgShared)

// forEachDriver runs test once per driver, each over fresh storage.
func forEachDriver(t *testing.T, test func(t *testing.T, d driver.Driver)) {
	storagetest.Run(t, factDrivers, true, func(t *testing.T, open func() driver.Driver) { test(t, open()) })
}

// tickingClock reads a time one millisecond later on every reading, so
// the records a test writes have distinct, ordered creation times.
type tickingClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *tickingClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// newFacts returns a fact tier over a new store on d, and the store.
func newFacts(t testing.TB, d driver.Driver) (*facts.Facts, *backend.Store) {
	t.Helper()
	clock := &tickingClock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	st := backend.NewStore(d, backend.StoreOptions{Clock: clock.now})
	f, err := facts.New(st, facts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f, st
}

// pgShared is the PostgreSQL cluster the tests share, started on first
// use (skipping without server binaries, failing under
// pgtest.RequireEnv) and stopped by TestMain.
var pgShared pgtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	pgShared.Stop()
	os.Exit(code)
}

// The identities of the tests: alice in one session of one agent, and
// others that differ from her in one field each.
var (
	alice       = memory.Identity{Tenant: "acme", User: "alice", Agent: "kaos://agent/ns/helper", Session: "s1"}
	aliceLater  = alice.With(memory.FieldSession, "s2")
	aliceOther  = alice.With(memory.FieldAgent, "kaos://agent/ns/other")
	bob         = alice.With(memory.FieldUser, "bob")
	aliceGlobex = alice.With(memory.FieldTenant, "globex")
)
