package fs_test

import (
	"github.com/agentmem/memory"
	"testing"

	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/fs"
)

// TestConformance runs the shared driver conformance suite against a fresh
// directory per case. A replica is another Driver opened on the same
// directory: its own files, index and lock.
func TestConformance(t *testing.T) {
	dirs := replicaDirs(fs.Options{})
	backendtest.Run(t, backendtest.Config{
		NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver {
			return dirs.New(t, t.TempDir(), clock)
		},
		Sweeper:      true,
		Swapper:      true,
		VectorSearch: backendtest.NoVectorSearch,
		TextSearch:   backendtest.ExactTextSearch,
		Claimer:      false,
		Replica:      dirs.Replica,
	})
}

// TestConformanceCompacting runs the suite with a compaction threshold so
// small that most writes rewrite the log, so every check also runs across
// compactions, with replicas reloading the rewritten log.
func TestConformanceCompacting(t *testing.T) {
	dirs := replicaDirs(fs.Options{CompactBytes: 1})
	backendtest.Run(t, backendtest.Config{
		NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver {
			return dirs.New(t, t.TempDir(), clock)
		},
		Sweeper:    true,
		Swapper:    true,
		TextSearch: backendtest.ExactTextSearch,
		Replica:    dirs.Replica,
	})
}

// replicaDirs opens fs drivers with opt, each replica on its driver's
// directory.
func replicaDirs(opt fs.Options) *backendtest.Replicas {
	return &backendtest.Replicas{Open: func(t *testing.T, dir string, clock memory.Clock) driver.Driver {
		o := opt
		o.Clock = clock
		d, err := fs.Open(dir, o)
		if err != nil {
			t.Fatalf("fs.Open: %v", err)
		}
		return d
	}}
}
