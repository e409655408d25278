package pgtest

import (
	"context"
	"database/sql"
	"testing"
	"time"
)

// TestRestartWithSettings restarts a cluster with a setting, keeping its
// data, then restores the settings Start gave it.
func TestRestartWithSettings(t *testing.T) {
	c := ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	show := func() string {
		t.Helper()
		db, err := sql.Open("postgres", c.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var v string
		if err := db.QueryRowContext(ctx, "SHOW work_mem").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	db, err := sql.Open("postgres", c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE TABLE kept (x int)"); err != nil {
		t.Fatal(err)
	}
	before := show()
	if err := c.Restart(ctx, "work_mem=7MB"); err != nil {
		t.Fatal(err)
	}
	if got := show(); got != "7MB" {
		t.Errorf("work_mem after a restart with work_mem=7MB is %s", got)
	}
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if got := show(); got != before {
		t.Errorf("work_mem after a plain restart is %s, want %s as before", got, before)
	}
	var n int
	db2, err := sql.Open("postgres", c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if err := db2.QueryRowContext(ctx, "SELECT count(*) FROM kept").Scan(&n); err != nil {
		t.Errorf("the table made before the restarts: %v", err)
	}
}

// TestStockCluster starts a cluster from the machine's own binaries.
func TestStockCluster(t *testing.T) {
	c := StockForTest(t)
	db, err := sql.Open("postgres", c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow("SHOW server_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	t.Logf("stock server %s", v)
}
