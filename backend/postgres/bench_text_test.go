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

// textSets are the text benchmarks' data sets, one database each in the
// shared cluster, filled once per process and kept open with their text
// caches loaded, by name.
var textSets struct {
	mu  sync.Mutex
	dsn map[driver.Driver]string
	d   map[string]*postgres.Driver
}

var textBench = backendtest.TextBenchConfig{
	Filled: func(b *testing.B, scopes, perScope int) driver.Driver {
		textSets.mu.Lock()
		defer textSets.mu.Unlock()
		name := fmt.Sprintf("%dx%d", scopes, perScope)
		if d := textSets.d[name]; d != nil {
			return d
		}
		if textSets.d == nil {
			textSets.d, textSets.dsn = map[string]*postgres.Driver{}, map[driver.Driver]string{}
		}
		dsn := createDB(b, false) // outlives this b: later runs reuse it
		start := time.Now()
		d, err := postgres.Open(dsn, postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		if err := backendtest.FillTexts(ctx, d, scopes, perScope); err != nil {
			b.Fatal(err)
		}
		if _, err := d.DB().Exec("VACUUM ANALYZE"); err != nil {
			b.Fatal(err)
		}
		filled := time.Since(start)
		start = time.Now()
		q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: backendtest.BenchTextIdentity(0).Tenant}}}
		if _, err := d.SearchText(ctx, q, "warm", 1); err != nil {
			b.Fatal(err)
		}
		// The snapshot the first search would store in the background is
		// stored now, for the first searches of new drivers to start from.
		if err := d.StoreTextSnapshotForTest(ctx); err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: writing took %s, loading it for search %s", name, filled, time.Since(start))
		textSets.d[name], textSets.dsn[d] = d, dsn
		return d
	},
	Reopen:     func(b *testing.B, d driver.Driver) driver.Driver { return openBench(b, textSetDSN(d)) },
	NewProcess: func(b *testing.B, d driver.Driver) (string, string) { return "TestFirstSearchTextChild", textSetDSN(d) },
}

// textSetDSN returns the DSN of the data set d was opened on.
func textSetDSN(d driver.Driver) string {
	textSets.mu.Lock()
	defer textSets.mu.Unlock()
	return textSets.dsn[d]
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
