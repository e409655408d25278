package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
)

// million is the database holding backendtest's 1,000,000-record data
// set, filled once per process in the shared cluster.
var million struct {
	once sync.Once
	dsn  string
	err  error
}

func openBench(b *testing.B, dsn string) driver.Driver {
	d, err := postgres.Open(dsn, postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

var benchConfig = backendtest.BenchConfig{
	NewDriver: func(b *testing.B) driver.Driver { return openBench(b, freshDB(b)) },
	Million: func(b *testing.B) driver.Driver {
		million.once.Do(func() {
			million.dsn = createDB(b, false) // outlives this b: later runs reuse it
			d, err := postgres.Open(million.dsn, postgres.Options{})
			if err != nil {
				million.err = err
				return
			}
			defer d.Close()
			if million.err = backendtest.Fill(context.Background(), d, backendtest.BenchMillion); million.err == nil {
				_, million.err = d.DB().Exec("VACUUM ANALYZE memory_records")
			}
		})
		if million.err != nil {
			b.Fatal(million.err)
		}
		return openBench(b, million.dsn)
	},
}

func BenchmarkAppend(b *testing.B) { backendtest.BenchmarkAppend(b, benchConfig) }

// BenchmarkStoreAppend measures one turn appended through a Store, its
// tokens counted.
func BenchmarkStoreAppend(b *testing.B) { backendtest.BenchmarkStoreAppend(b, benchConfig) }
func BenchmarkIngest(b *testing.B)      { backendtest.BenchmarkIngest(b, benchConfig) }
func BenchmarkNewest50(b *testing.B)    { backendtest.BenchmarkNewest50(b, benchConfig) }
