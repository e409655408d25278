package fs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
)

const crashDirEnv = "AGENTMEM_FS_CRASH_DIR"

// TestCrashChild is the child process of TestSIGKILL; run directly, it skips.
func TestCrashChild(t *testing.T) {
	backendtest.CrashChild(t, func() (driver.Driver, error) {
		return Open(os.Getenv(crashDirEnv), Options{})
	})
}

// TestSIGKILL kills a writer 20 times at random moments; the directory
// reopens cleanly every time and keeps every acknowledged write.
func TestSIGKILL(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "crash")
	backendtest.CrashTest(t, "TestCrashChild", []string{crashDirEnv + "=" + dir},
		func() (driver.Driver, error) { return Open(dir, Options{}) })
}
