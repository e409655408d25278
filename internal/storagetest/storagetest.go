// Package storagetest gives the tests of the packages above the drivers
// (the tiers) fresh storage on every driver, as a table to run a test
// over: the in-memory driver, SQLite on a file, PostgreSQL in a database
// of its own and fs in a directory.
package storagetest

import (
	"context"
	"path/filepath"
	"testing"

	qc "github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/fs"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/postgres"
	"github.com/agentmem/memory/backend/qdrant"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/internal/pgtest"
	"github.com/agentmem/memory/internal/qdrantserver"
)

// Driver is a driver tests run over.
type Driver struct {
	Name string
	// Storage prepares fresh, empty storage for t and returns an opener:
	// each call opens another driver on that storage (for the in-memory
	// driver, the one driver), closed when t ends — the replicas of a
	// concurrency test.
	Storage func(t testing.TB) func() driver.Driver
}

// Drivers returns the drivers, PostgreSQL's in databases of pg (which
// skips a test without server binaries, unless pgtest.RequireEnv is set).
// Its sessions commit without waiting for the WAL to reach the disk: the
// tests check transactional behaviour, not durability across a server
// crash, and serialised commits would otherwise measure the disk.
func Drivers(pg *pgtest.Shared) []Driver {
	return []Driver{
		{"inmem", func(t testing.TB) func() driver.Driver {
			d := inmem.New(inmem.Options{})
			t.Cleanup(func() { _ = d.Close() })
			return func() driver.Driver { return d }
		}},
		{"sqlite", func(t testing.TB) func() driver.Driver {
			path := filepath.Join(t.TempDir(), "memory.db")
			return opener(t, func() (driver.Driver, error) { return sqlite.Open(path, sqlite.Options{}) })
		}},
		{"postgres", func(t testing.TB) func() driver.Driver {
			dsn := pg.CreateDB(t, true) + " options='-c synchronous_commit=off'"
			return opener(t, func() (driver.Driver, error) { return postgres.Open(dsn, postgres.Options{}) })
		}},
		{"fs", func(t testing.TB) func() driver.Driver {
			dir := t.TempDir()
			return opener(t, func() (driver.Driver, error) { return fs.Open(dir, fs.Options{}) })
		}},
		{"qdrant", func(t testing.TB) func() driver.Driver {
			host, port := qdrantserver.Start(t)
			return opener(t, func() (driver.Driver, error) {
				c, err := qc.NewClient(&qc.Config{Host: host, Port: port, PoolSize: 1, SkipCompatibilityCheck: true})
				if err != nil {
					return nil, err
				}
				t.Cleanup(func() { _ = c.Close() })
				return qdrant.New(context.Background(), qdrant.Options{Client: c, Collection: "memory", Dims: VectorDims, ExactSearch: true})
			})
		}},
	}
}

// VectorDims is the dimension of the vectors the Qdrant driver's
// collections hold (Qdrant fixes it when a collection is made): the tiers'
// tests embed with it.
const VectorDims = 8

// Run runs test once per driver of drivers, each over fresh storage (see
// Driver.Storage), as subtests named after the drivers; in parallel with
// each other when parallel (for long tests whose drivers wait on
// different things: PostgreSQL on its server, the others on the CPU and
// the disk).
func Run(t *testing.T, drivers []Driver, parallel bool, test func(t *testing.T, open func() driver.Driver)) {
	for _, d := range drivers {
		t.Run(d.Name, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			test(t, d.Storage(t))
		})
	}
}

// opener returns a function opening a driver with open, closed when t
// ends, failing t when it cannot.
func opener(t testing.TB, open func() (driver.Driver, error)) func() driver.Driver {
	return func() driver.Driver {
		d, err := open()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Close() })
		return d
	}
}

// Without returns drivers without the one named name.
func Without(drivers []Driver, name string) []Driver {
	var out []Driver
	for _, d := range drivers {
		if d.Name != name {
			out = append(out, d)
		}
	}
	return out
}
