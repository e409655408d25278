package tiers_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/fs"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/postgres"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/internal/pgtest"
	"github.com/agentmem/memory/tiers"
)

// workingDriver is one driver working memory is tested over. storage
// prepares fresh, empty storage for t and returns an opener: each call
// opens another independent driver instance on that same storage (for
// in-memory, the one driver), closed when t ends — the replicas of the
// concurrency test.
type workingDriver struct {
	name    string
	storage func(t testing.TB) func() backend.Driver
}

var workingDrivers = []workingDriver{
	{"inmem", func(t testing.TB) func() backend.Driver {
		d := inmem.New(inmem.Options{})
		t.Cleanup(func() { _ = d.Close() })
		return func() backend.Driver { return d }
	}},
	{"sqlite", func(t testing.TB) func() backend.Driver {
		path := filepath.Join(t.TempDir(), "memory.db")
		return func() backend.Driver {
			d, err := sqlite.Open(path, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			return d
		}
	}},
	{"postgres", func(t testing.TB) func() backend.Driver {
		dsn := workingDB(t)
		return func() backend.Driver {
			d, err := postgres.Open(dsn, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.Close() })
			return d
		}
	}},
	{"fs", func(t testing.TB) func() backend.Driver {
		dir := t.TempDir()
		return func() backend.Driver {
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
func forEachWorkingDriver(t *testing.T, test func(t *testing.T, open func() backend.Driver)) {
	for _, wd := range workingDrivers {
		t.Run(wd.name, func(t *testing.T) { test(t, wd.storage(t)) })
	}
}

// forEachWorkingDriverParallel is forEachWorkingDriver with the drivers'
// runs in parallel, for long tests whose drivers wait on different
// things (PostgreSQL on its server, the others on the CPU and the disk).
func forEachWorkingDriverParallel(t *testing.T, test func(t *testing.T, open func() backend.Driver)) {
	for _, wd := range workingDrivers {
		t.Run(wd.name, func(t *testing.T) {
			t.Parallel()
			test(t, wd.storage(t))
		})
	}
}

// newWorking returns a Working over a new store on d.
func newWorking(t testing.TB, d backend.Driver, opt tiers.WorkingOptions) (*tiers.Working, *backend.Store) {
	t.Helper()
	st := backend.NewStore(d, backend.StoreOptions{})
	w, err := tiers.NewWorking(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	return w, st
}

// The PostgreSQL cluster working-memory tests share, started on first use
// and stopped by TestMain; each test gets a database of its own.
var (
	pgOnce    sync.Once
	pgCluster *pgtest.Cluster
	pgErr     error
	pgDBs     atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if pgCluster != nil {
		pgCluster.Stop()
	}
	os.Exit(code)
}

// workingDB creates an empty database for t in the shared cluster, drops
// it when t ends, and returns its DSN. Without server binaries it skips t,
// unless pgtest.RequireEnv is set, when it fails t.
func workingDB(t testing.TB) string {
	t.Helper()
	pgOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		pgCluster, pgErr = pgtest.Start(ctx)
	})
	if errors.Is(pgErr, pgtest.ErrUnavailable) && os.Getenv(pgtest.RequireEnv) == "" {
		t.Skipf("%v; install postgresql-15 (or set %s to make this a failure)", pgErr, pgtest.RequireEnv)
	}
	if pgErr != nil {
		t.Fatalf("start PostgreSQL: %v", pgErr)
	}
	admin, err := sqlx.Open("postgres", pgCluster.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("working_%d", pgDBs.Add(1))
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	// Commits need not wait for the WAL to reach the disk: these tests
	// check transactional behaviour, not durability across a server crash,
	// and the counter test's 16,000 serialised commits would otherwise
	// measure the disk's flush latency.
	if _, err := admin.Exec("ALTER DATABASE " + name + " SET synchronous_commit = off"); err != nil {
		t.Fatalf("configure database %s: %v", name, err)
	}
	t.Cleanup(func() {
		admin, err := sqlx.Open("postgres", pgCluster.DSN)
		if err != nil {
			t.Errorf("open admin connection: %v", err)
			return
		}
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", pgCluster.SocketDir, pgCluster.Port, name)
}
