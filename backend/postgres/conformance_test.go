package postgres_test

import (
	"github.com/agentmem/memory"
	"testing"

	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
)

// TestConformance runs the shared driver conformance suite against a fresh
// database per case, in one cluster shared by the package's tests. A
// replica is another driver opened on the same database: its own
// connection pool.
func TestConformance(t *testing.T) {
	conformance(t, postgres.Options{}, backendtest.ApproximateVectorSearch)
}

// TestConformanceInProcessVectors runs the suite with the vectors
// searched in the process, which must be exact.
func TestConformanceInProcessVectors(t *testing.T) {
	conformance(t, postgres.Options{InProcessVectors: true}, backendtest.ExactVectorSearch)
}

// conformance runs the suite over drivers opened with opt, whose vector
// search is vs.
func conformance(t *testing.T, opt postgres.Options, vs backendtest.VectorSearch) {
	sharedCluster(t)
	dbs := &backendtest.Replicas{Open: func(t *testing.T, dsn string, clock memory.Clock) driver.Driver {
		opt := opt
		opt.Clock = clock
		d, err := postgres.Open(dsn, opt)
		if err != nil {
			t.Fatalf("postgres.Open: %v", err)
		}
		return d
	}}
	backendtest.Run(t, backendtest.Config{
		NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver {
			return dbs.New(t, freshDB(t), clock)
		},
		Sweeper:      true,
		Swapper:      true,
		VectorSearch: vs,
		TextSearch:   backendtest.ExactTextSearch,
		Claimer:      true,
		WorkEraser:   true,
		Replica:      dbs.Replica,
	})
}
