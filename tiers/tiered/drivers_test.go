package tiered_test

import (
	"os"
	"testing"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/pgtest"
	"github.com/agentmem/memory/internal/storagetest"
	"github.com/agentmem/memory/tiers/tiered"
)

// tieredDrivers are the drivers the tiered memory is tested over: every
// driver with a work queue (not fs).
var tieredDrivers = storagetest.Without(storagetest.Drivers(&pgShared), "fs")

// forEachDriver runs test once per driver, in parallel, each over fresh
// storage.
func forEachDriver(t *testing.T, test func(t *testing.T, open func() driver.Driver)) {
	storagetest.Run(t, tieredDrivers, true, test)
}

// newMemory returns a tiered Memory over a new store on d, closed when t
// ends.
func newMemory(t testing.TB, d driver.Driver, opt tiered.Options) (*tiered.Memory, *backend.Store) {
	t.Helper()
	st := backend.NewStore(d, backend.StoreOptions{})
	m, err := tiered.New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m, st
}

// pgShared is the PostgreSQL cluster the package's tests share.
var pgShared pgtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	pgShared.Stop()
	os.Exit(code)
}
