package postgres_test

import (
	"os"
	"testing"

	_ "github.com/lib/pq"

	"github.com/agentmem/memory/internal/pgtest"
)

// shared is the one cluster the package's tests share, started on first
// use and stopped by TestMain.
var shared pgtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Stop()
	os.Exit(code)
}

// sharedCluster returns the package's cluster, starting it on first use.
// Without server binaries it skips t, unless pgtest.RequireEnv is set.
func sharedCluster(t testing.TB) *pgtest.Cluster { return shared.Cluster(t) }

// freshDB creates an empty database in the shared cluster, drops it when
// t ends, and returns its DSN.
func freshDB(t testing.TB) string { return shared.CreateDB(t, true) }

// createDB creates an empty database in the shared cluster and returns its
// DSN; with drop, it drops the database when t ends (otherwise it lives as
// long as the cluster).
func createDB(t testing.TB, drop bool) string { return shared.CreateDB(t, drop) }
