//go:build cgo

package sqlite

// #include <stdlib.h>
// #include "blobs.h"
import "C"

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/agentmem/memory/internal/sqldriver"
)

// Reading a blob in place. database/sql hands a blob over in a copy that
// go-sqlite3 makes in fresh memory (C.GoBytes), after SQLite assembled it
// from the file's pages in another buffer: in a new process loading the
// snapshots of 100,000 facts (44 MB), those two copies took nearly half
// of the process's page faults, one every 4 KiB of fresh memory
// (BENCHMARKS.md). go-sqlite3 has no incremental blob I/O, so the driver
// calls SQLite's (sqlite3_blob_open, sqlite3_blob_read) itself, on the
// connection the read transaction holds, and SQLite copies the blob from
// its pages straight into the snapshot's buffer.
//
// The connection's handle comes from SQL: every connection opened once
// registerBlobs ran defines agentmem_connection(), which returns the
// sqlite3 pointer of the connection it runs on (an automatic extension,
// so it covers connections go-sqlite3 opens too). A connection without
// it — one opened before, as a handle given to New may be — reads its
// snapshots through database/sql as before.

var registerBlobs = sync.OnceValue(func() error {
	if rc := C.agentmem_blobs_register(); rc != C.SQLITE_OK {
		return fmt.Errorf("sqlite: registering agentmem_connection(): SQLite error %d", int(rc))
	}
	return nil
})

// blobReads counts the blobs read in place in this process, for tests.
var blobReads atomic.Int64

// blobsOn returns a reader of blobs in place on q, a connection held by
// the caller inside a read transaction, valid while the caller holds it;
// nil when the connection cannot (it has no agentmem_connection()).
func blobsOn(ctx context.Context, q sqldriver.Queryer) sqldriver.BlobReader {
	var conn int64
	if err := q.QueryRowContext(ctx, "SELECT agentmem_connection()").Scan(&conn); err != nil || conn == 0 {
		return nil
	}
	return func(table, column string, rowid int64, dst []byte) error {
		ct, cc := C.CString(table), C.CString(column)
		defer C.free(unsafe.Pointer(ct))
		defer C.free(unsafe.Pointer(cc))
		if len(dst) > math.MaxInt32 {
			return fmt.Errorf("sqlite: read %s.%s of row %d: %d bytes are more than SQLite reads at once", table, column, rowid, len(dst))
		}
		var p unsafe.Pointer
		if len(dst) > 0 {
			p = unsafe.Pointer(&dst[0])
		}
		var have C.int
		rc := C.agentmem_blob_read(C.sqlite3_int64(conn), ct, cc, C.sqlite3_int64(rowid), p, C.int(len(dst)), &have)
		if rc != C.SQLITE_OK {
			return fmt.Errorf("sqlite: read %s.%s of row %d: %s (SQLite error %d)", table, column, rowid, C.GoString(C.agentmem_blob_errmsg(C.sqlite3_int64(conn))), int(rc))
		}
		if int(have) != len(dst) {
			return fmt.Errorf("sqlite: %s.%s of row %d holds %d bytes, not %d", table, column, rowid, int(have), len(dst))
		}
		blobReads.Add(1)
		return nil
	}
}
