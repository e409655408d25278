package postgres_test

import (
	"testing"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/postgres"
)

// TestConformance runs the shared driver conformance suite against a fresh
// database per case, in one cluster shared by the package's tests.
func TestConformance(t *testing.T) {
	sharedCluster(t)
	backendtest.Run(t, backendtest.Config{
		NewDriver: func(t *testing.T, clock backend.Clock) backend.Driver {
			d, err := postgres.Open(freshDB(t), postgres.Options{Clock: clock})
			if err != nil {
				t.Fatalf("postgres.Open: %v", err)
			}
			t.Cleanup(func() { _ = d.Close() })
			return d
		},
		Sweeper: true,
		Swapper: true,
	})
}
