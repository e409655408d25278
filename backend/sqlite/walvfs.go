//go:build cgo

package sqlite

// #include "walvfs.h"
import "C"

import (
	"fmt"
	"sync"
)

// walVFS is the name of the VFS Open's writer connection opens the file
// with (walvfs.c). It is SQLite's default VFS but for the writes to the
// WAL file: SQLite writes each frame of a commit in two system calls (the
// 24-byte frame header, then the page), twelve for the six pages an
// appended turn changes, and on a virtual machine a system call is most of
// a write's cost (BENCHMARKS.md, issue 11). The VFS holds back the header
// of a frame that commits nothing and the page written right after it,
// and writes them with the next write that is anything else — the commit
// frame's header — in one call, so a commit takes two calls whatever its
// number of pages, and one more for each 120 KiB (BUFFER_BYTES) of frames
// past the first.
//
// Nothing can observe the difference:
//
//   - Every other call on the WAL file (a read, a sync, a size, a
//     truncation, a file control) first writes what is held back, so the
//     connection itself always finds the file as SQLite left it.
//   - Other connections and processes read only frames a commit has
//     published in the WAL index, and SQLite publishes a commit after its
//     frames are written; the held-back frames are all before the commit
//     frame's header, which is written with them. A failed write fails the
//     commit, as it would have without the VFS.
//   - A crash loses what is held back; those frames belong to a
//     transaction that had not committed, which the WAL's checksums
//     already ignore when a crash tears it. With synchronous=FULL, SQLite
//     syncs the WAL after the commit frame, which is in the file by then.
//   - When the connection gives up the WAL's write lock, anything still
//     held back is frames of a transaction that ended without committing
//     them (one that spilled pages and rolled back). They are dropped, not
//     written later over frames another writer may have written since.
//
// The writes are SQLite's, byte for byte and in order, but for those
// dropped frames, which nothing reads; only their number of system calls
// changes.
const walVFS = "agentmem-wal"

var registerWALVFS = sync.OnceValue(func() error {
	if rc := C.agentmem_walvfs_register(); rc != 0 {
		return fmt.Errorf("sqlite: registering the %s VFS: SQLite error %d", walVFS, int(rc))
	}
	return nil
})

// walWrites returns how many writes have reached WAL files through the
// VFS, in this process.
func walWrites() int64 { return int64(C.agentmem_walvfs_writes()) }

// walHeaderWrites returns how many of walWrites wrote a WAL file's header
// alone, as SQLite does when the log restarts after a checkpoint.
func walHeaderWrites() int64 { return int64(C.agentmem_walvfs_header_writes()) }

// walDrops returns how many times a WAL file dropped the frames it held
// back when its connection gave up the write lock, in this process.
func walDrops() int64 { return int64(C.agentmem_walvfs_drops()) }
