//go:build cgo

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
)

// plainConn returns a connection to path through SQLite's default VFS,
// the way another program would open the file.
func plainConn(t *testing.T, path string) *sql.Conn {
	t.Helper()
	db, err := sql.Open(DriverName, fileDSN(path, nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func integrityOK(t *testing.T, c *sql.Conn) {
	t.Helper()
	var res string
	if err := c.QueryRowContext(context.Background(), "PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check = %q, %v", res, err)
	}
}

// An appended turn reaches the WAL in two writes, where SQLite alone makes
// two a page.
func TestWALVFSCommitsInTwoWrites(t *testing.T) {
	d, _ := openTemp(t, Options{})
	mustPut(t, d, memory.NewTurn(alice, memory.RoleUser, "first", t0)) // creates the WAL
	const n = 200
	before, headers := walWrites(), walHeaderWrites()
	for i := range n {
		id := alice
		id.Session = fmt.Sprint("run-", i%7)
		mustPut(t, d, memory.NewTurn(id, memory.RoleUser, strings.Repeat("x", 200), t0.Add(1+time.Duration(i))))
	}
	// Besides the header SQLite writes when the log restarts, which the
	// background checkpointer allows whenever it catches up.
	restarts := walHeaderWrites() - headers
	if got := walWrites() - before - restarts; got > 2*n {
		t.Fatalf("%d appends made %d WAL writes besides %d restarts' headers, want at most %d", n, got, restarts, 2*n)
	}
	t.Logf("%d appends, %d WAL restarts", n, restarts)
}

// Another connection, through the default VFS, sees every commit as soon
// as Put returns, whether its frames fit what the VFS holds back or not.
func TestWALVFSCommitsVisibleAtOnce(t *testing.T) {
	d, path := openTemp(t, Options{})
	mustPut(t, d, memory.NewTurn(alice, memory.RoleUser, "first", t0))
	other := plainConn(t, path)
	want := 1
	for i, size := range []int{1, 2, 7, 1, 64, 1, 300, 3, 1000, 1} {
		batch := make([]memory.Record, size)
		for j := range batch {
			batch[j] = memory.NewTurn(alice, memory.RoleUser, strings.Repeat("y", 50+j%3000), t0.Add(time.Duration(want+j)))
		}
		mustPut(t, d, batch...)
		want += size
		var got int
		if err := other.QueryRowContext(context.Background(), "SELECT count(*) FROM memory_records").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("batch %d: the other connection counts %d records, want %d", i, got, want)
		}
	}
	integrityOK(t, other)
}

// A transaction that spills pages into the WAL and rolls back leaves
// frames the VFS held back; they are dropped when the transaction gives up
// the write lock, not written later over the frames another writer
// commits next.
func TestWALVFSDropsFramesOfRolledBackTransaction(t *testing.T) {
	if err := registerWALVFS(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "spill.db")
	vdb, err := sqlx.Open(DriverName, fileDSN(path, map[string][]string{"vfs": {walVFS}, "_journal_mode": {"WAL"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer vdb.Close()
	ctx := context.Background()
	a, err := vdb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	exec := func(c interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}, q string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(a, "PRAGMA cache_size = 10") // pages: a large transaction spills
	exec(a, "CREATE TABLE t (who TEXT, x BLOB)")
	b := plainConn(t, path)
	drops := walDrops()
	for round := range 5 {
		// An empty WAL: the rolled-back transaction's frames and the next
		// commit's start at its beginning, and the rollback reads no page
		// from it (which would write what is held back, lock still held).
		exec(a, "PRAGMA wal_checkpoint(TRUNCATE)")
		exec(a, "BEGIN IMMEDIATE")
		exec(a, "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 60) INSERT INTO t SELECT 'a', randomblob(900) FROM s")
		exec(a, "ROLLBACK")
		exec(b, "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 100) INSERT INTO t SELECT 'b', randomblob(900) FROM s")
		var n int
		if err := a.QueryRowContext(ctx, "SELECT count(*) FROM t WHERE who = 'b'").Scan(&n); err != nil || n != 100*(round+1) {
			t.Fatalf("round %d: the VFS connection counts %d of b's rows, %v; want %d", round, n, err, 100*(round+1))
		}
		exec(a, "INSERT INTO t VALUES ('a', randomblob(10))")
		integrityOK(t, b)
		if err := b.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 101*(round+1) {
			t.Fatalf("round %d: %d rows, %v; want %d", round, n, err, 101*(round+1))
		}
	}
	if walDrops() == drops {
		t.Fatal("no rolled-back transaction left frames held back: the test did not test")
	}
}

// With SyncFull, the commit SQLite syncs is the one the VFS wrote.
func TestWALVFSSyncFull(t *testing.T) {
	d, path := openTemp(t, Options{SyncFull: true})
	for i := range 20 {
		mustPut(t, d, memory.NewTurn(alice, memory.RoleUser, fmt.Sprint(i), t0.Add(time.Duration(i))))
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := Open(path, Options{SyncFull: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := mustList(t, d, at(t, alice, memory.LevelSession)); len(got) != 20 {
		t.Fatalf("%d records after reopening, want 20", len(got))
	}
}
