package sqlite

import (
	"github.com/agentmem/memory"
	"log/slog"
	"time"
)

// The names, defaults and options below are the same with cgo and without
// it, so that a program compiles either way; only the cgo build opens a
// database.

// DriverName is the database/sql driver name the package opens databases
// with. It is registered by github.com/mattn/go-sqlite3.
const DriverName = "sqlite3"

// MemoryPath is the path that opens a private in-memory database with Open.
// Its records are lost at Close.
const MemoryPath = ":memory:"

// Default option values.
const (
	// DefaultBusyTimeout is how long a write waits for a writer in another
	// process before failing with memory.ErrConflict.
	DefaultBusyTimeout = 5 * time.Second
	// DefaultMinReadConns is the least number of read connections Open
	// keeps; the default is the larger of it and GOMAXPROCS.
	DefaultMinReadConns = 4
)

// SchemaVersion is the schema version this driver writes and reads. A file
// with an older version is migrated when opened; a newer one is refused.
const SchemaVersion = 5

// Options configure a Driver. The zero value is the documented default.
type Options struct {
	// Clock decides expiry: List never returns a record whose Expires is
	// at or before Clock's reading, and Sweep deletes those records. Nil
	// means time.Now.
	Clock memory.Clock
	// Logger receives debug records of opening and schema migrations, and
	// warnings about failed background checkpoints, connections discarded
	// after a failed rollback and a writer that cannot use the
	// agentmem-wal VFS. Nil discards them.
	Logger *slog.Logger
	// BusyTimeout is how long Open's connections wait for a lock held by
	// another process; zero means DefaultBusyTimeout. New leaves the
	// injected handle's setting alone.
	BusyTimeout time.Duration
	// ReadConns is the size of Open's read pool; zero means the larger of
	// DefaultMinReadConns and GOMAXPROCS. New uses the injected handle for
	// reads and writes alike.
	ReadConns int
	// SyncFull makes Open's writer use synchronous=FULL, syncing the WAL at
	// every commit, instead of synchronous=NORMAL. See the package
	// documentation on durability.
	SyncFull bool
	// NoVectorSnapshots turns off the snapshots of the vector copy. By
	// default, once a search has loaded the copy of 1,000 vectors or
	// more from the records, or an eighth of its vectors changed since
	// the stored snapshot (at most every 30 seconds), or any changed and
	// the snapshot is 10 minutes old, a snapshot of it is written to the
	// file in the background, so that the first vector search of a new
	// process reads it instead of every record's vector while no vector
	// changed since: about 5 bytes a dimension and 40 more a vector, a
	// second copy of the vectors beside the records.
	NoVectorSnapshots bool
}
