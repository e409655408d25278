package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Shared is one cluster that the tests of a package share: started by the
// first test that asks for it, with an empty database of its own for each
// test, and stopped by Stop, which the package's TestMain calls after
// m.Run. The zero value is ready to use.
type Shared struct {
	once sync.Once
	c    *Cluster
	err  error
	dbs  atomic.Int64
}

// Cluster returns the shared cluster, starting it on first use. Without
// server binaries it skips t, unless RequireEnv is set, when it fails t.
func (s *Shared) Cluster(t testing.TB) *Cluster {
	t.Helper()
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		s.c, s.err = Start(ctx)
	})
	skipUnavailable(t, s.err)
	if s.err != nil {
		t.Fatalf("start PostgreSQL: %v", s.err)
	}
	return s.c
}

// CreateDB creates an empty database in the shared cluster and returns its
// DSN; with drop, the database is dropped when t ends (otherwise it lives
// as long as the cluster, for data sets built once per process).
func (s *Shared) CreateDB(t testing.TB, drop bool) string {
	t.Helper()
	c := s.Cluster(t)
	name := fmt.Sprintf("t_%d", s.dbs.Add(1))
	admin := func(stmt string) error {
		db, err := sql.Open("postgres", c.DSN)
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.Exec(stmt)
		return err
	}
	if err := admin("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	if drop {
		t.Cleanup(func() {
			if err := admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
				t.Errorf("drop database %s: %v", name, err)
			}
		})
	}
	return fmt.Sprintf("host=%s port=%d user=postgres dbname=%s sslmode=disable", c.SocketDir, c.Port, name)
}

// Stop stops the cluster if it was started.
func (s *Shared) Stop() {
	if s.c != nil {
		s.c.Stop()
	}
}
