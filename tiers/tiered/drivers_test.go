package tiered_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/postgres"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/internal/pgtest"
	"github.com/agentmem/memory/tiers/tiered"
)

// tieredDriver is a driver the tiered memory is tested over. storage
// prepares fresh, empty storage for t and returns an opener: each call
// opens another driver instance on that storage (for in-memory, the one
// driver), closed when t ends — the replicas of the concurrency tests.
type tieredDriver struct {
	name    string
	storage func(t testing.TB) func() driver.Driver
}

var tieredDrivers = []tieredDriver{
	{"inmem", func(t testing.TB) func() driver.Driver {
		d := inmem.New(inmem.Options{})
		t.Cleanup(func() { _ = d.Close() })
		return func() driver.Driver { return d }
	}},
	{"sqlite", func(t testing.TB) func() driver.Driver {
		path := filepath.Join(t.TempDir(), "memory.db")
		return func() driver.Driver {
			d, err := sqlite.Open(path, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			return d
		}
	}},
	{"postgres", func(t testing.TB) func() driver.Driver {
		dsn := pgShared.CreateDB(t, true) + " options='-c synchronous_commit=off'"
		return func() driver.Driver {
			d, err := postgres.Open(dsn, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			return d
		}
	}},
}

// forEachDriver runs test once per driver, in parallel, each over fresh
// storage.
func forEachDriver(t *testing.T, test func(t *testing.T, open func() driver.Driver)) {
	for _, td := range tieredDrivers {
		t.Run(td.name, func(t *testing.T) {
			t.Parallel()
			test(t, td.storage(t))
		})
	}
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
