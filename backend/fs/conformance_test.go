package fs_test

import (
	"sync"
	"testing"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/fs"
)

// TestConformance runs the shared driver conformance suite against a fresh
// directory per case. A replica is another Driver opened on the same
// directory: its own files, index and lock.
func TestConformance(t *testing.T) {
	var dirs replicaDirs
	backendtest.Run(t, backendtest.Config{
		NewDriver: func(t *testing.T, clock backend.Clock) backend.Driver {
			return dirs.open(t, t.TempDir(), clock)
		},
		Sweeper:      true,
		Swapper:      true,
		VectorSearch: backendtest.NoVectorSearch,
		Claimer:      false,
		Replica:      dirs.replica,
	})
}

// TestConformanceCompacting runs the suite with a compaction threshold so
// small that most writes rewrite the log, so every check also runs across
// compactions, with replicas reloading the rewritten log.
func TestConformanceCompacting(t *testing.T) {
	dirs := replicaDirs{opt: fs.Options{CompactBytes: 1}}
	backendtest.Run(t, backendtest.Config{
		NewDriver: func(t *testing.T, clock backend.Clock) backend.Driver {
			return dirs.open(t, t.TempDir(), clock)
		},
		Sweeper: true,
		Swapper: true,
		Replica: dirs.replica,
	})
}

// replicaDirs remembers the directory and clock of every driver it
// opened, so that a replica opens the same directory with the same clock.
type replicaDirs struct {
	opt    fs.Options
	mu     sync.Mutex
	opened map[backend.Driver]opening
}

type opening struct {
	dir   string
	clock backend.Clock
}

// open opens the store in dir with clock, closed when t ends.
func (r *replicaDirs) open(t *testing.T, dir string, clock backend.Clock) backend.Driver {
	opt := r.opt
	opt.Clock = clock
	d, err := fs.Open(dir, opt)
	if err != nil {
		t.Fatalf("fs.Open: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opened == nil {
		r.opened = map[backend.Driver]opening{}
	}
	r.opened[d] = opening{dir, clock}
	return d
}

// replica opens another driver on d's directory with d's clock.
func (r *replicaDirs) replica(t *testing.T, d backend.Driver) backend.Driver {
	r.mu.Lock()
	o, ok := r.opened[d]
	r.mu.Unlock()
	if !ok {
		t.Fatalf("replica of a driver this test did not open")
	}
	return r.open(t, o.dir, o.clock)
}
