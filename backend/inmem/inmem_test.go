package inmem_test

import (
	"github.com/agentmem/memory"
	"testing"

	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
)

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Config{
		NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver {
			return inmem.New(inmem.Options{Clock: clock})
		},
		Sweeper:      true,
		Swapper:      true,
		VectorSearch: backendtest.ExactVectorSearch,
		TextSearch:   backendtest.ExactTextSearch,
		Claimer:      true, // one process: no replicas, Replica stays nil
		WorkEraser:   true,
	})
}
