package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/agentmem/memory/internal/pgtest"
)

// The one cluster the package's tests share, started on first use and
// stopped by TestMain.
var (
	clusterOnce sync.Once
	cluster     *pgtest.Cluster
	clusterErr  error
	dbCounter   atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if cluster != nil {
		cluster.Stop()
	}
	os.Exit(code)
}

// sharedCluster returns the package's cluster, starting it on first use.
// Without server binaries it skips t, unless pgtest.RequireEnv is set.
func sharedCluster(t testing.TB) *pgtest.Cluster {
	t.Helper()
	clusterOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cluster, clusterErr = pgtest.Start(ctx)
	})
	if errors.Is(clusterErr, pgtest.ErrUnavailable) && os.Getenv(pgtest.RequireEnv) == "" {
		t.Skipf("%v; install postgresql-15 (or set %s to make this a failure)", clusterErr, pgtest.RequireEnv)
	}
	if clusterErr != nil {
		t.Fatalf("start PostgreSQL: %v", clusterErr)
	}
	return cluster
}

// freshDB creates an empty database in the shared cluster, drops it when
// t ends, and returns its DSN.
func freshDB(t testing.TB) string {
	t.Helper()
	return createDB(t, true)
}

// createDB creates an empty database in the shared cluster and returns its
// DSN; with drop, it drops the database when t ends (otherwise it lives as
// long as the cluster).
func createDB(t testing.TB, drop bool) string {
	t.Helper()
	c := sharedCluster(t)
	name := fmt.Sprintf("t_%d", dbCounter.Add(1))
	admin, err := sqlx.Open("postgres", c.DSN)
	if err != nil {
		t.Fatalf("open admin connection: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	dsn := fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", c.SocketDir, c.Port, name)
	if !drop {
		return dsn
	}
	t.Cleanup(func() {
		admin, err := sqlx.Open("postgres", c.DSN)
		if err != nil {
			t.Errorf("open admin connection: %v", err)
			return
		}
		defer admin.Close()
		if _, err := admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return dsn
}
