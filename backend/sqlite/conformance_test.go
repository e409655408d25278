package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/sqlite"
)

// TestConformance runs the shared driver conformance suite against a fresh
// database file per case.
func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Config{
		NewDriver: func(t *testing.T, clock backend.Clock) backend.Driver {
			d, err := sqlite.Open(filepath.Join(t.TempDir(), "memory.db"), sqlite.Options{Clock: clock})
			if err != nil {
				t.Fatalf("sqlite.Open: %v", err)
			}
			t.Cleanup(func() { _ = d.Close() })
			return d
		},
		Sweeper: true,
		Swapper: true,
	})
}
