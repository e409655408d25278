package sqlite_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/sqlite"
)

// TestConformance runs the shared driver conformance suite against a fresh
// database file per case. A replica is another driver opened on the same
// file: its own writer, readers and checkpointer.
func TestConformance(t *testing.T) {
	var files replicaFiles
	backendtest.Run(t, backendtest.Config{
		NewDriver: func(t *testing.T, clock backend.Clock) backend.Driver {
			return files.open(t, filepath.Join(t.TempDir(), "memory.db"), clock)
		},
		Sweeper:      true,
		Swapper:      true,
		VectorSearch: backendtest.ExactVectorSearch,
		Claimer:      true,
		Replica:      files.replica,
	})
}

// replicaFiles remembers the file and clock of every driver it opened, so
// that a replica opens the same file with the same clock.
type replicaFiles struct {
	mu     sync.Mutex
	opened map[backend.Driver]opening
}

type opening struct {
	path  string
	clock backend.Clock
}

// open opens the database at path with clock, closed when t ends.
func (f *replicaFiles) open(t *testing.T, path string, clock backend.Clock) backend.Driver {
	d, err := sqlite.Open(path, sqlite.Options{Clock: clock})
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opened == nil {
		f.opened = map[backend.Driver]opening{}
	}
	f.opened[d] = opening{path, clock}
	return d
}

// replica opens another driver on d's file with d's clock.
func (f *replicaFiles) replica(t *testing.T, d backend.Driver) backend.Driver {
	f.mu.Lock()
	o, ok := f.opened[d]
	f.mu.Unlock()
	if !ok {
		t.Fatalf("replica of a driver this test did not open")
	}
	return f.open(t, o.path, o.clock)
}
