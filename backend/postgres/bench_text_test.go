package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
)

// dataSets are benchmark data sets, one database each in the shared
// cluster, filled once per process and kept open, ready for search, by
// name; with the DSN of each.
type dataSets struct {
	mu  sync.Mutex
	d   map[string]*postgres.Driver
	dsn map[driver.Driver]string
}

// get returns the data set name, opening a driver with opt on a new
// database and running fill on it the first time.
func (s *dataSets) get(b *testing.B, name string, opt postgres.Options, fill func(d *postgres.Driver) error) *postgres.Driver {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.d[name]; d != nil {
		return d
	}
	if s.d == nil {
		s.d, s.dsn = map[string]*postgres.Driver{}, map[driver.Driver]string{}
	}
	dsn := createDB(b, false) // outlives this b: later runs reuse it
	d, err := postgres.Open(dsn, opt)
	if err != nil {
		b.Fatal(err)
	}
	if err := fill(d); err != nil {
		b.Fatal(err)
	}
	s.d[name], s.dsn[d] = d, dsn
	return d
}

// dsnOf returns the DSN of the data set d was opened on.
func (s *dataSets) dsnOf(d driver.Driver) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dsn[d]
}

// textSets are the text benchmarks' data sets, their text caches loaded.
var textSets dataSets

var textBench = backendtest.TextBenchConfig{
	Filled: func(b *testing.B, scopes, perScope int) driver.Driver {
		name := fmt.Sprintf("%dx%d", scopes, perScope)
		return textSets.get(b, name, postgres.Options{}, func(d *postgres.Driver) error {
			start := time.Now()
			ctx := context.Background()
			if err := backendtest.FillTexts(ctx, d, scopes, perScope); err != nil {
				return err
			}
			if _, err := d.DB().Exec("VACUUM ANALYZE"); err != nil {
				return err
			}
			filled := time.Since(start)
			start = time.Now()
			q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: backendtest.BenchTextIdentity(0).Tenant}}}
			if _, err := d.SearchText(ctx, q, "warm", 1); err != nil {
				return err
			}
			// The snapshot the first search would store in the background
			// is stored now, for the first searches of new drivers to
			// start from.
			if err := d.StoreTextSnapshotForTest(ctx); err != nil {
				return err
			}
			b.Logf("%s: writing took %s, loading it for search %s", name, filled, time.Since(start))
			return nil
		})
	},
	Reopen: func(b *testing.B, d driver.Driver) driver.Driver { return openBench(b, textSets.dsnOf(d)) },
	NewProcess: func(b *testing.B, d driver.Driver) (string, string) {
		return "TestFirstSearchTextChild", textSets.dsnOf(d)
	},
}

// TestFirstSearchTextChild is the child process of
// BenchmarkFirstSearchTextNewProcess; run directly, it skips.
func TestFirstSearchTextChild(t *testing.T) {
	backendtest.FirstSearchTextChild(t, func(dsn string) (driver.Driver, error) {
		return postgres.Open(dsn, postgres.Options{})
	})
}

func BenchmarkSearchText100k(b *testing.B) { backendtest.BenchmarkSearchText100k(b, textBench) }
func BenchmarkSearchTextOneScopeOf1000(b *testing.B) {
	backendtest.BenchmarkSearchTextOneScopeOf1000(b, textBench)
}
func BenchmarkFirstSearchText(b *testing.B) { backendtest.BenchmarkFirstSearchText(b, textBench) }
func BenchmarkFirstSearchTextNewProcess(b *testing.B) {
	backendtest.BenchmarkFirstSearchTextNewProcess(b, textBench)
}
