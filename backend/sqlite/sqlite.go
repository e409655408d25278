//go:build cgo

// Package sqlite is the embedded default storage driver: every record lives
// in one SQLite file, read and written through github.com/mattn/go-sqlite3
// and github.com/jmoiron/sqlx. It needs no service and no set-up beyond a
// path. It implements driver.Driver, driver.Sweeper, driver.Swapper
// (compare-and-swap on record versions), driver.VectorSearcher (exact
// k-nearest search over an in-memory copy of the vectors; see Search) and
// driver.Claimer (a work queue with leases, shared safely by every
// process that opens the file) with driver.WorkEraser (a scope's pending
// work erased with its records).
//
// # Concurrency
//
// SQLite allows one writer at a time. The driver therefore serialises its
// own writes in the process (a writer waiting its turn still honours its
// context) and runs each one as an immediate transaction (BEGIN IMMEDIATE),
// so a write never starts as a reader and fails to upgrade. Reads run on a
// separate pool of connections; in WAL mode they see a consistent snapshot
// and are never blocked by the writer. Writers in other processes are
// waited for up to the busy timeout. Goroutines of one process never see
// "database is locked". A Put is one transaction however large its batch;
// a Delete or Sweep is one statement.
//
// # Durability
//
// The database runs in WAL mode with synchronous=NORMAL by default: a
// committed write survives a crash of the program, and the file is never
// corrupted, but the transactions committed since the last checkpoint may
// be lost to a power failure or an operating-system crash (with Open,
// checkpoints run in the background within milliseconds of a commit).
// Options.SyncFull selects synchronous=FULL, which syncs the WAL at every
// commit and survives power loss as well, at the price of one fsync per
// Put.
//
// Open's writer connection writes the WAL through a VFS of this package's
// own, agentmem-wal: SQLite's default VFS, except that the frames of a
// commit reach the WAL file in two system calls (one more per 120 KiB
// past the first) where SQLite makes two a page; walvfs.go explains why
// no reader, process or crash can tell. The bytes, their order and the
// syncs are SQLite's (the uncommitted frames of a rolled-back transaction
// aside, which are not written), and the file is an ordinary SQLite
// database, which any program opens as usual.
//
// # Schema
//
// The driver creates its tables on first use and records their version in
// the memory_schema table. Newer versions of the driver migrate older files
// forward inside one immediate transaction; a file written by a newer driver
// than this one is refused with memory.ErrUnimplemented. Records live in
// one table, memory_records, with four identity indexes (session, user, squad,
// agent; each led by tenant and followed by created, so the newest N
// records of a scope are read off the index newest first, and only records
// with equal creation times are sorted, by id, among themselves; the squad
// index also carries instance, which every instance-keyed level pairs with
// squad or session) and an index on expiry for sweeps. The indexes are
// partial: a record enters only the indexes of the fields it has. Every
// index costs ingest throughput, so there are no more than the read levels
// need; a store-level query, which matches on tenant alone, reads the
// whole table. Times are stored as unix nanoseconds, metadata as a JSON
// object, vectors as little-endian float32 blobs. Beside it, memory_work
// holds the work queue and memory_settings the store's vector dimension
// and the count of vector changes that tells every process's search cache
// when it is out of date, and memory_text_snapshots and
// memory_vector_snapshots the snapshots of the text cache and the vector
// copy that a new process starts from.
//
// # Errors
//
// Native errors are classified with the memory.Err* sentinels and stay
// reachable with errors.As (as sqlite3.Error). SQLite's busy, locked and
// constraint errors are memory.ErrConflict; too big and full are
// memory.ErrTooLarge; read-only and permission errors are
// memory.ErrPermissionDenied; a file that cannot be opened is
// memory.ErrNotFound; a file that is not a database, or is corrupt, is
// memory.ErrInvalidArgument; anything that leaves the storage unusable
// (I/O failures, out of memory, a lost connection) is memory.ErrClosed.
// Context errors are returned unchanged.
package sqlite

import (
	"context"
	"database/sql"
	sqlconn "database/sql/driver"
	"errors"
	"github.com/agentmem/memory/backend/driver"
	"log/slog"
	"net/url"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/mattn/go-sqlite3"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/sqldriver"
)

// Per-connection settings for the connections Open makes.
const (
	// walBackstopPages is the writer's own automatic checkpoint threshold.
	// The background checkpointer normally keeps the WAL backfilled; this
	// bounds the WAL (about 64 MiB) if it falls behind, and lets the WAL
	// restart from its beginning under continuous writes.
	walBackstopPages = 16384
	// mmapBytes is how much of the file each connection maps into memory
	// and reads without a system call per page.
	mmapBytes = 1 << 30
	// checkpointInterval is the least time between background checkpoints.
	checkpointInterval = 10 * time.Millisecond
	writerCacheKiB     = 64 << 10 // page cache of the single writer connection
	readerCacheKiB     = 16 << 10 // page cache of each reader connection
	stmtCacheSize      = 64       // prepared statements kept per connection: Put uses 16, Enqueue 7
)

// Driver is a driver.Driver, Sweeper, Swapper, VectorSearcher,
// TextSearcher and Claimer over one SQLite database.
// It is safe for concurrent use.
type Driver struct {
	w, r  *sqlx.DB      // writer (one connection when opened by Open) and readers
	own   bool          // Close closes w and r
	ck    *checkpointer // background checkpoints; nil unless Open opened a file
	wsem  chan struct{}
	clock memory.Clock
	log   *slog.Logger

	gate sqldriver.Gate
	dims atomic.Int64         // the store's vector dimension once read; 0 before
	vc   vectorCache          // the vectors, for Search
	tc   textCache            // the texts, for SearchText
	ts   sqldriver.TextSearch // how SearchText runs
	// chores runs background work: writing the snapshots of the text
	// cache and the vector copy.
	chores            sqldriver.Chores
	inMemory          bool // the database is in memory: no other process can read a snapshot
	noVectorSnapshots bool // Options.NoVectorSnapshots
}

var (
	_ driver.Driver  = (*Driver)(nil)
	_ driver.Sweeper = (*Driver)(nil)
	_ driver.Swapper = (*Driver)(nil)
)

// Open opens (creating it if needed) the database file at path and returns
// a driver that owns its connections: a single writer connection, a pool
// of read-only (query_only) reader connections, and one connection on
// which a background goroutine checkpoints the WAL into the database file,
// so that commits only append to the WAL. Every connection has the busy
// timeout and a statement cache; the writer and the readers map the file
// into memory for reads; the writer runs synchronous=NORMAL (FULL with
// Options.SyncFull) and writes the WAL through the agentmem-wal VFS (see
// Durability in the package documentation). The schema
// is created or migrated before Open returns. Opening reads the schema
// version only, however large the file.
//
// The first Open (or New) of a process registers an automatic extension
// with SQLite: every SQLite connection the process opens from then on,
// the driver's and any other of go-sqlite3's, gets the SQL function
// agentmem_connection(), callable only from top-level SQL, which the
// driver uses to read its stored snapshots in place (blobs.go).
//
// path is a file name, not a URI; MemoryPath opens a private in-memory
// database on a single connection. Open fails with
// memory.ErrInvalidArgument for an empty path or a file that is not a
// database, memory.ErrNotFound when the file cannot be created (a missing
// directory, say), and memory.ErrUnimplemented when the file's schema is
// newer than this driver.
func Open(path string, opt Options) (*Driver, error) {
	if path == "" {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "sqlite: empty database path")
	}
	busy := opt.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	readers := opt.ReadConns
	if readers <= 0 {
		readers = max(DefaultMinReadConns, runtime.GOMAXPROCS(0))
	}
	syncMode := "NORMAL"
	if opt.SyncFull {
		syncMode = "FULL"
	}
	// Snapshots are read in place (blobs.go) on connections opened once
	// this has run; without it they are read through database/sql.
	if err := registerBlobs(); err != nil && opt.Logger != nil {
		opt.Logger.Warn("sqlite: reading snapshots without SQLite's blob I/O", "err", err)
	}
	common := url.Values{}
	common.Set("_busy_timeout", strconv.FormatInt(busy.Milliseconds(), 10))
	common.Set("_stmt_cache_size", strconv.Itoa(stmtCacheSize))

	wp := cloneValues(common)
	wp.Set("_journal_mode", "WAL")
	wp.Set("_synchronous", syncMode)
	wp.Set("_txlock", "immediate") // writes say BEGIN IMMEDIATE themselves; this covers any other
	wp.Set("_cache_size", strconv.Itoa(-writerCacheKiB))

	if path == MemoryPath {
		w := openDB(MemoryPath+"?"+wp.Encode(), nil)
		pinOne(w)
		return start(w, w, true, opt)
	}

	// The writer alone writes the WAL, so it alone opens the file through
	// walVFS. Registering it fails only when SQLite's default VFS is older
	// than version 3; the writer then writes the WAL as SQLite does.
	if err := registerWALVFS(); err != nil {
		if opt.Logger != nil {
			opt.Logger.Warn("sqlite: writing the WAL without the agentmem-wal VFS", "err", err)
		}
	} else {
		wp.Set("vfs", walVFS)
	}
	w := openDB(fileDSN(path, wp), func(c *sqlite3.SQLiteConn) error {
		_, err := c.Exec("PRAGMA wal_autocheckpoint = "+strconv.Itoa(walBackstopPages)+"; PRAGMA mmap_size = "+strconv.Itoa(mmapBytes), nil)
		return err
	})
	pinOne(w)
	rp := cloneValues(common)
	rp.Set("_query_only", "true")
	rp.Set("_cache_size", strconv.Itoa(-readerCacheKiB))
	r := openDB(fileDSN(path, rp), func(c *sqlite3.SQLiteConn) error {
		_, err := c.Exec("PRAGMA mmap_size = "+strconv.Itoa(mmapBytes), nil)
		return err
	})
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	r.SetConnMaxLifetime(0)
	r.SetConnMaxIdleTime(0)
	d, err := start(w, r, true, opt)
	if err != nil {
		return nil, err
	}
	// The checkpointer connects once the file exists and is in WAL mode.
	ck := openDB(fileDSN(path, common), nil)
	pinOne(ck)
	d.ck = &checkpointer{db: ck, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go d.checkpoints()
	return d, nil
}

// openDB returns a pool over go-sqlite3 connections to dsn, with hook run
// on each new connection. Nothing is connected yet.
func openDB(dsn string, hook func(*sqlite3.SQLiteConn) error) *sqlx.DB {
	drv := &sqlite3.SQLiteDriver{ConnectHook: hook}
	return sqlx.NewDb(sql.OpenDB(connector{drv: drv, dsn: dsn}), DriverName)
}

// connector opens go-sqlite3 connections with a fixed DSN and driver.
type connector struct {
	drv *sqlite3.SQLiteDriver
	dsn string
}

// Connect opens a connection to the connector's DSN.
func (c connector) Connect(context.Context) (sqlconn.Conn, error) { return c.drv.Open(c.dsn) }

// Driver returns the go-sqlite3 driver the connector opens with.
func (c connector) Driver() sqlconn.Driver { return c.drv }

// New returns a driver over an injected handle, which it uses for reads
// and writes alike and does not close. The schema is created or migrated
// before New returns.
//
// db must come from github.com/mattn/go-sqlite3 (sqlx.Open("sqlite3", dsn)
// or sqlx.NewDb over such a *sql.DB); anything else is
// memory.ErrInvalidArgument. New switches the database to WAL mode, which
// is persistent in the file. The other settings are per connection and
// come from the DSN: go-sqlite3's defaults (busy_timeout 5000 ms,
// synchronous NORMAL) suit the driver, and _stmt_cache_size (say 16)
// speeds up small writes. Immediate transactions do not depend on
// _txlock: the driver begins its writes with BEGIN IMMEDIATE itself and
// serialises them within the process. The WAL is checkpointed by SQLite's
// automatic checkpoints on the committing connection, not in the
// background as with Open, and written through the handle's VFS (SQLite's
// default unless the DSN names another), not Open's agentmem-wal, so a
// commit costs SQLite's two system calls a page. An in-memory database must be
// limited to one connection (db.SetMaxOpenConns(1)), since each connection
// to ":memory:" is a database of its own; New refuses it otherwise.
func New(db *sqlx.DB, opt Options) (*Driver, error) {
	if db == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "sqlite: nil database handle")
	}
	if _, ok := db.Driver().(*sqlite3.SQLiteDriver); !ok {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "sqlite: the handle's driver is %T, not github.com/mattn/go-sqlite3", db.Driver())
	}
	// The handle's connections opened from now on read snapshots in
	// place; those it holds already read them through database/sql.
	if err := registerBlobs(); err != nil && opt.Logger != nil {
		opt.Logger.Warn("sqlite: reading snapshots without SQLite's blob I/O", "err", err)
	}
	return start(db, db, false, opt)
}

// pinOne limits db to one connection that is never closed for idleness or
// age, so an in-memory database and the writer's page cache survive.
func pinOne(db *sqlx.DB) {
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
}

func start(w, r *sqlx.DB, own bool, opt Options) (*Driver, error) {
	d := &Driver{
		w:     w,
		r:     r,
		own:   own,
		wsem:  make(chan struct{}, 1),
		clock: opt.Clock,
		log:   opt.Logger,

		noVectorSnapshots: opt.NoVectorSnapshots,
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.vc.meter.MaxAge = vectorSnapshotMaxAge
	d.ts = sqldriver.TextSearch{Gate: &d.gate, Clock: d.clock, Cache: &d.tc.TextCache, Within: d.withinTexts,
		After: d.maybeSnapshot, DB: d.r, Columns: selectColumns}
	if err := d.setup(context.Background()); err != nil {
		if own {
			_ = d.closeHandles()
		}
		return nil, err
	}
	return d, nil
}

func fileDSN(path string, params url.Values) string {
	u := url.URL{Path: path}
	return "file:" + u.EscapedPath() + "?" + params.Encode()
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// enter admits a call whose arguments the driver.Check function of its
// method judged (invalid); see sqldriver.Gate.Enter. The caller must call
// d.gate.Leave when enter returns nil.
func (d *Driver) enter(ctx context.Context, invalid error) error {
	return d.gate.Enter(ctx, "sqlite", invalid)
}

// Close waits for calls in progress, then releases the connections Open
// made (an injected handle is left open for its owner). Later calls fail
// with memory.ErrClosed. It is idempotent.
func (d *Driver) Close() error {
	return d.gate.Close(func() error {
		d.chores.Stop()
		d.vc.mu.Lock()
		d.vc.reset()
		d.vc.mu.Unlock()
		if !d.own {
			return nil
		}
		return d.closeHandles()
	})
}

func (d *Driver) closeHandles() error {
	var err error
	if d.ck != nil {
		close(d.ck.stop)
		<-d.ck.done
		err = d.ck.db.Close()
	}
	if d.r != d.w {
		if rerr := d.r.Close(); err == nil {
			err = rerr
		}
	}
	if werr := d.w.Close(); err == nil {
		err = werr
	}
	return classify(err, "sqlite: close")
}

// write runs fn in an immediate transaction on a writer connection, one
// write at a time in this process. fn's error is returned as is (fn
// classifies its own errors); the transaction is rolled back on any error.
func (d *Driver) write(ctx context.Context, fn func(conn *sqlx.Conn) error) error {
	select {
	case d.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-d.wsem }()

	conn, err := d.w.Connx(ctx)
	if err != nil {
		return fail(ctx, err, "sqlite: acquire writer connection")
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		d.ensureNoTx(conn)
		return fail(ctx, err, "sqlite: begin transaction")
	}
	if err := fn(conn); err != nil {
		d.rollback(conn)
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return err
	}
	// The batch is complete: commit even if ctx was cancelled meanwhile.
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err != nil {
		d.rollback(conn)
		return classify(err, "sqlite: commit")
	}
	d.committed()
	return nil
}

// rollback ends the transaction on conn. SQLite may already have rolled it
// back (after an interrupt, say); whatever happened, conn is not returned
// to the pool while a transaction is still open on it.
func (d *Driver) rollback(conn *sqlx.Conn) {
	_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
	d.ensureNoTx(conn)
}

func (d *Driver) ensureNoTx(conn *sqlx.Conn) {
	_ = conn.Raw(func(dc any) error {
		if c, ok := dc.(*sqlite3.SQLiteConn); ok && !c.AutoCommit() {
			d.log.Warn("sqlite: discarding a connection left inside a transaction")
			return sqlconn.ErrBadConn
		}
		return nil
	})
}

// checkpointer copies committed pages from the WAL into the database file
// on a connection of its own, off the writer's path: a commit only appends
// to the WAL, and the copying and syncing run concurrently with the next
// write.
type checkpointer struct {
	db   *sqlx.DB
	kick chan struct{} // a commit happened; capacity 1
	stop chan struct{}
	done chan struct{}
}

// committed tells the checkpointer that the WAL grew.
func (d *Driver) committed() {
	if d.ck != nil {
		select {
		case d.ck.kick <- struct{}{}:
		default:
		}
	}
}

func (d *Driver) checkpoints() {
	c := d.ck
	defer close(c.done)
	pause := time.NewTimer(0)
	<-pause.C
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		// A checkpoint that finds another one running (in another process,
		// or the writer's own) reports busy and is simply retried later.
		var busy, frames, copied int
		if err := c.db.QueryRowx("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied); err != nil {
			var se sqlite3.Error
			if !errors.As(err, &se) || (se.Code != sqlite3.ErrBusy && se.Code != sqlite3.ErrLocked) {
				d.log.Warn("sqlite: background checkpoint failed", "err", err)
			}
		}
		pause.Reset(checkpointInterval)
		select {
		case <-c.stop:
			pause.Stop()
			return
		case <-pause.C:
		}
	}
}
