package postgres_test

import (
	"sync"
	"testing"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/postgres"
)

// TestConformance runs the shared driver conformance suite against a fresh
// database per case, in one cluster shared by the package's tests. A
// replica is another driver opened on the same database: its own
// connection pool.
func TestConformance(t *testing.T) {
	sharedCluster(t)
	var dbs replicaDBs
	backendtest.Run(t, backendtest.Config{
		NewDriver: func(t *testing.T, clock backend.Clock) backend.Driver {
			return dbs.open(t, freshDB(t), clock)
		},
		Sweeper:      true,
		Swapper:      true,
		VectorSearch: backendtest.ApproximateVectorSearch,
		Claimer:      true,
		Replica:      dbs.replica,
	})
}

// replicaDBs remembers the database and clock of every driver it opened,
// so that a replica opens the same database with the same clock.
type replicaDBs struct {
	mu     sync.Mutex
	opened map[backend.Driver]opening
}

type opening struct {
	dsn   string
	clock backend.Clock
}

// open opens the database dsn names with clock, closed when t ends.
func (r *replicaDBs) open(t *testing.T, dsn string, clock backend.Clock) backend.Driver {
	d, err := postgres.Open(dsn, postgres.Options{Clock: clock})
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opened == nil {
		r.opened = map[backend.Driver]opening{}
	}
	r.opened[d] = opening{dsn, clock}
	return d
}

// replica opens another driver on d's database with d's clock.
func (r *replicaDBs) replica(t *testing.T, d backend.Driver) backend.Driver {
	r.mu.Lock()
	o, ok := r.opened[d]
	r.mu.Unlock()
	if !ok {
		t.Fatalf("replica of a driver this test did not open")
	}
	return r.open(t, o.dsn, o.clock)
}
