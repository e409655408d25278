package postgres_test

import (
	"os"
	"testing"

	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/postgres"
)

const crashDSNEnv = "AGENTMEM_POSTGRES_CRASH_DSN"

// TestCrashChild is the child process of TestSIGKILL; run directly, it skips.
func TestCrashChild(t *testing.T) {
	backendtest.CrashChild(t, func() (driver.Driver, error) { return postgres.Open(os.Getenv(crashDSNEnv), postgres.Options{}) })
}

// TestSIGKILL kills a writing client process 20 times; every write it had
// acknowledged is in the database afterwards.
func TestSIGKILL(t *testing.T) {
	dsn := freshDB(t)
	backendtest.CrashTest(t, "TestCrashChild", []string{crashDSNEnv + "=" + dsn},
		func() (driver.Driver, error) { return postgres.Open(dsn, postgres.Options{}) })
}
