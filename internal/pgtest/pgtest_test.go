package pgtest

import (
	"context"
	"database/sql"
	"os"
	"testing"
)

func TestClusterLifecycle(t *testing.T) {
	c := ForTest(t)
	db, err := sql.Open("postgres", c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var version string
	if err := db.QueryRowContext(ctx, "SHOW server_version_num").Scan(&version); err != nil {
		t.Fatal(err)
	}
	t.Logf("server_version_num %s on port %d", version, c.Port)
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO t VALUES ($1, $2)", 1, "ålice 用户"); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := db.QueryRowContext(ctx, "SELECT v FROM t WHERE id = $1", 1).Scan(&v); err != nil || v != "ålice 用户" {
		t.Fatalf("read back %q, %v", v, err)
	}
	db.Close()

	dir, pid := c.Dir(), c.server.Process.Pid
	c.Stop()
	c.Stop() // idempotent
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s still exists after Stop (%v)", dir, err)
	}
	if alive(pid) {
		t.Errorf("postgres process %d still running after Stop", pid)
	}
}

func TestTwoClustersAreIndependent(t *testing.T) {
	a, b := ForTest(t), ForTest(t)
	if a.Port == b.Port || a.SocketDir == b.SocketDir {
		t.Fatalf("clusters share port %d or socket %s", a.Port, a.SocketDir)
	}
	for i, c := range []*Cluster{a, b} {
		db, err := sql.Open("postgres", c.DSN)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("CREATE TABLE only_here (x int)"); err != nil {
			t.Fatalf("cluster %d: %v", i, err)
		}
		db.Close()
	}
}
