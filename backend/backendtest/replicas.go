package backendtest

import (
	"github.com/agentmem/memory"
	"sync"
	"testing"

	"github.com/agentmem/memory/backend/driver"
)

// Replicas opens drivers over storage named by a string (a file, a
// directory, a DSN) and serves as Config.Replica: a replica of a driver it
// opened is another driver over the same storage, with the same clock.
//
//	r := &backendtest.Replicas{Open: func(t *testing.T, path string, clock memory.Clock) driver.Driver { ... }}
//	backendtest.Run(t, backendtest.Config{
//		NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver { return r.New(t, newPath(t), clock) },
//		Replica:   r.Replica,
//	})
type Replicas struct {
	// Open opens a driver over the storage where names, with clock; it
	// fails t when it cannot.
	Open func(t *testing.T, where string, clock memory.Clock) driver.Driver

	mu     sync.Mutex
	opened map[driver.Driver]replicaOf
}

// replicaOf is where a driver was opened, and with which clock.
type replicaOf struct {
	where string
	clock memory.Clock
}

// New opens a driver over where with clock and closes it when t ends.
func (r *Replicas) New(t *testing.T, where string, clock memory.Clock) driver.Driver {
	d := r.Open(t, where, clock)
	t.Cleanup(func() { _ = d.Close() })
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opened == nil {
		r.opened = map[driver.Driver]replicaOf{}
	}
	r.opened[d] = replicaOf{where, clock}
	return d
}

// Replica opens another driver over the storage of d, which New opened,
// with d's clock.
func (r *Replicas) Replica(t *testing.T, d driver.Driver) driver.Driver {
	r.mu.Lock()
	o, ok := r.opened[d]
	r.mu.Unlock()
	if !ok {
		t.Fatalf("backendtest: a replica of a driver Replicas did not open")
	}
	return r.New(t, o.where, o.clock)
}
