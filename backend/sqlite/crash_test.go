//go:build cgo

package sqlite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
)

const crashDBEnv = "AGENTMEM_SQLITE_CRASH_DB"

// TestCrashChild is the child process of TestSIGKILL; run directly, it skips.
func TestCrashChild(t *testing.T) {
	backendtest.CrashChild(t, func() (driver.Driver, error) { return Open(os.Getenv(crashDBEnv), Options{}) })
}

// TestSIGKILL kills a writer 20 times; the file reopens cleanly every time
// and keeps every acknowledged write.
func TestSIGKILL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crash.db")
	backendtest.CrashTest(t, "TestCrashChild", []string{crashDBEnv + "=" + path},
		func() (driver.Driver, error) { return Open(path, Options{}) })
}
