package working_test

import (
	"os"
	"path/filepath"
	"testing"

	_ "github.com/lib/pq"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/fs"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/postgres"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/internal/pgtest"
	"github.com/agentmem/memory/tiers/working"
)

// workingDriver is one driver working memory is tested over. storage
// prepares fresh, empty storage for t and returns an opener: each call
// opens another independent driver instance on that same storage (for
// in-memory, the one driver), closed when t ends — the replicas of the
// concurrency test.
type workingDriver struct {
	name    string
	storage func(t testing.TB) func() driver.Driver
}

var workingDrivers = []workingDriver{
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
		dsn := workingDB(t)
		return func() driver.Driver {
			d, err := postgres.Open(dsn, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			return d
		}
	}},
	{"fs", func(t testing.TB) func() driver.Driver {
		dir := t.TempDir()
		return func() driver.Driver {
			d, err := fs.Open(dir, fs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			return d
		}
	}},
}

// forEachWorkingDriver runs test once per driver, each over fresh storage.
func forEachWorkingDriver(t *testing.T, test func(t *testing.T, open func() driver.Driver)) {
	for _, wd := range workingDrivers {
		t.Run(wd.name, func(t *testing.T) { test(t, wd.storage(t)) })
	}
}

// forEachWorkingDriverParallel is forEachWorkingDriver with the drivers'
// runs in parallel, for long tests whose drivers wait on different
// things (PostgreSQL on its server, the others on the CPU and the disk).
func forEachWorkingDriverParallel(t *testing.T, test func(t *testing.T, open func() driver.Driver)) {
	for _, wd := range workingDrivers {
		t.Run(wd.name, func(t *testing.T) {
			t.Parallel()
			test(t, wd.storage(t))
		})
	}
}

// newWorking returns a Memory over a new store on d.
func newWorking(t testing.TB, d driver.Driver, opt working.Options) (*working.Memory, *backend.Store) {
	t.Helper()
	st := backend.NewStore(d, backend.StoreOptions{})
	w, err := working.New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	return w, st
}

// platformWorking returns working memory over d whose store may write
// platform defaults (Posture.AllowPlatform) under the given system
// tenant (empty: the default), as an administrative program has.
func platformWorking(t testing.TB, d driver.Driver, systemTenant string) *working.Memory {
	t.Helper()
	st := backend.NewStore(d, backend.StoreOptions{Posture: memory.Posture{AllowPlatform: true}, SystemTenant: systemTenant})
	w, err := working.New(st, working.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// pgShared is the PostgreSQL cluster working-memory tests share, started
// on first use and stopped by TestMain.
var pgShared pgtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	pgShared.Stop()
	os.Exit(code)
}

// workingDB creates an empty database for t in the shared cluster, drops
// it when t ends, and returns its DSN. Without server binaries it skips t,
// unless pgtest.RequireEnv is set, when it fails t. Its sessions commit
// without waiting for the WAL to reach the disk: these tests check
// transactional behaviour, not durability across a server crash, and the
// counter test's 16,000 serialised commits would otherwise measure the
// disk's flush latency.
func workingDB(t testing.TB) string {
	t.Helper()
	return pgShared.CreateDB(t, true) + " options='-c synchronous_commit=off'"
}
