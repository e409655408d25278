package inmem_test

import (
	"testing"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/inmem"
)

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Config{
		NewDriver: func(t *testing.T, clock backend.Clock) backend.Driver {
			return inmem.New(inmem.Options{Clock: clock})
		},
		Sweeper:      true,
		Swapper:      true,
		VectorSearch: backendtest.ExactVectorSearch,
		Claimer:      true, // one process: no replicas, Replica stays nil
	})
}
