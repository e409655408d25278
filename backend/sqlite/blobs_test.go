//go:build cgo

package sqlite

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestBlobsOn checks the reader of blobs in place on a reader connection
// of Open's: it reads what SQL reads, refuses a destination of another
// length and a row that does not exist, and a connection that cannot
// run SQL gives no reader.
func TestBlobsOn(t *testing.T) {
	ctx := context.Background()
	d, err := Open(filepath.Join(t.TempDir(), "blobs.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	data := bytes.Repeat([]byte("0123456789abcdef"), 70_000) // overflow pages
	if _, err := d.w.Exec(`INSERT INTO memory_vector_snapshots (generation, seq, data) VALUES (1, 0, ?), (1, 1, x'')`, data); err != nil {
		t.Fatal(err)
	}
	conn, err := d.r.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	var full, empty int64
	if err := conn.QueryRowContext(ctx, `SELECT rowid FROM memory_vector_snapshots WHERE seq = 0`).Scan(&full); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRowContext(ctx, `SELECT rowid FROM memory_vector_snapshots WHERE seq = 1`).Scan(&empty); err != nil {
		t.Fatal(err)
	}
	read := blobsOn(ctx, conn)
	if read == nil {
		t.Fatal("a reader connection of Open's reads no blob in place")
	}
	got := make([]byte, len(data))
	if err := read("memory_vector_snapshots", "data", full, got); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read in place: %v, the bytes match: %v", err, bytes.Equal(got, data))
	}
	if err := read("memory_vector_snapshots", "data", empty, nil); err != nil {
		t.Errorf("reading an empty blob: %v", err)
	}
	err = read("memory_vector_snapshots", "data", full, make([]byte, len(data)-1))
	if err == nil || !strings.Contains(err.Error(), "holds 1120000 bytes, not 1119999") {
		t.Errorf("a destination one byte short: %v", err)
	}
	if err := read("memory_vector_snapshots", "data", full+100, got); err == nil || !strings.Contains(err.Error(), "no such rowid") {
		t.Errorf("a row that does not exist: %v", err)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if blobsOn(ctx, conn) != nil {
		t.Error("a closed connection gave a reader of blobs")
	}
}
