//go:build cgo

package sqlite_test

import (
	"github.com/agentmem/memory"
	"path/filepath"
	"testing"

	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/sqlite"
)

// TestConformance runs the shared driver conformance suite against a fresh
// database file per case. A replica is another driver opened on the same
// file: its own writer, readers and checkpointer.
func TestConformance(t *testing.T) {
	files := &backendtest.Replicas{Open: func(t *testing.T, path string, clock memory.Clock) driver.Driver {
		d, err := sqlite.Open(path, sqlite.Options{Clock: clock})
		if err != nil {
			t.Fatalf("sqlite.Open: %v", err)
		}
		return d
	}}
	backendtest.Run(t, backendtest.Config{
		NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver {
			return files.New(t, filepath.Join(t.TempDir(), "memory.db"), clock)
		},
		Sweeper:      true,
		Swapper:      true,
		VectorSearch: backendtest.ExactVectorSearch,
		TextSearch:   backendtest.ExactTextSearch,
		Claimer:      true,
		WorkEraser:   true,
		Replica:      files.Replica,
	})
}
