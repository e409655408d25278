package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
)

// inProcessSets are the in-process vector benchmarks' data sets, their
// vector copies loaded.
var inProcessSets dataSets

// inProcessBench is backendtest's vector benchmark configuration over
// drivers with Options.InProcessVectors.
var inProcessBench = backendtest.VectorBenchConfig{
	Filled: func(b *testing.B, scopes, perScope int) driver.Driver {
		name := fmt.Sprintf("%dx%d", scopes, perScope)
		return inProcessSets.get(b, name, postgres.Options{InProcessVectors: true}, func(d *postgres.Driver) error {
			start := time.Now()
			ctx := context.Background()
			if err := backendtest.FillVectors(ctx, d, scopes, perScope); err != nil {
				return err
			}
			filled := time.Since(start)
			start = time.Now()
			if _, err := d.RankVector(ctx, vectorTenantQuery(), backendtest.BenchVectorRecord(0, 0).Vector, 1); err != nil {
				return err
			}
			b.Logf("%s: writing took %s, loading it for search %s", name, filled, time.Since(start))
			return nil
		})
	},
}

// vectorTenantQuery matches every record of the vector data sets.
func vectorTenantQuery() driver.Query {
	return driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: backendtest.BenchVectorIdentity(0).Tenant}}}
}

// BenchmarkSearchInProcess100k measures a warm search of the vector copy
// (Options.InProcessVectors), k = 10, over 100,000 vectors of 384
// dimensions in one scope, each search after its catch-up statement.
func BenchmarkSearchInProcess100k(b *testing.B) { backendtest.BenchmarkSearch100k(b, inProcessBench) }

// BenchmarkSearchInProcessOneScopeOf1000 is the same search within one
// scope of 1,000 vectors among 1,000.
func BenchmarkSearchInProcessOneScopeOf1000(b *testing.B) {
	backendtest.BenchmarkSearchOneScopeOf1000(b, inProcessBench)
}

// BenchmarkFirstSearchInProcess100k measures the first vector search of a
// new driver with Options.InProcessVectors over the 100,000 stored
// vectors of 384 dimensions: the load of the vector copy and one search.
func BenchmarkFirstSearchInProcess100k(b *testing.B) {
	dsn := inProcessSets.dsnOf(inProcessBench.Filled(b, 1, 100_000))
	ctx := context.Background()
	vec := backendtest.BenchVectorRecord(0, 7).Vector
	backendtest.TimeEach(b, func(int) (int, error) {
		nd, err := postgres.Open(dsn, postgres.Options{InProcessVectors: true})
		if err != nil {
			return 0, err
		}
		defer nd.Close()
		got, err := nd.RankVector(ctx, vectorTenantQuery(), vec, backendtest.BenchVectorK)
		return len(got), err
	})
}
