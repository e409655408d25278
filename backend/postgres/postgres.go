// Package postgres is a storage driver over a PostgreSQL server, read and
// written through github.com/lib/pq and github.com/jmoiron/sqlx. It
// implements driver.Driver, driver.Sweeper, driver.Swapper
// (compare-and-swap under a row lock), driver.VectorRanker (an HNSW
// index when the pgvector extension is installed, exact search in the
// server without it, or with Options.InProcessVectors exact search over
// an in-process copy of the vectors kept current from the change log),
// driver.TextSearcher (the library's lexical engine over an in-process
// copy of the analysed texts, kept current from a change log; see
// SearchText) and driver.Claimer (a work queue claimed with FOR UPDATE
// SKIP LOCKED) with driver.WorkEraser (a scope's pending work erased with
// its records), and suits deployments where several replicas of a program
// share one store.
//
// # Concurrency
//
// Every call is one statement or one transaction on the server, at the
// default READ COMMITTED isolation; PostgreSQL's row locks make concurrent
// upserts of one id serialise. A Put writes its records in id order, so
// two batches sharing ids never deadlock on them; a Put that nevertheless
// loses a deadlock or serialization race is retried, a few times, before
// it fails with memory.ErrConflict.
//
// # Durability
//
// A call returns once the server has committed its transaction. With the
// server's defaults (fsync and synchronous_commit on) a committed write
// survives a crash of the program, of the server and of its machine, power
// loss included; surviving the loss of the machine's disks needs the
// server's own replication (synchronous_standby_names). A session with
// synchronous_commit off — set in the DSN, for example
// options='-c synchronous_commit=off' — commits faster but may lose the
// last few hundred milliseconds of commits to a server crash, never
// leaving the database inconsistent.
//
// # Schema
//
// The driver creates its tables on first use and records their version in
// the memory_schema table. Migrations run inside one transaction holding
// a transaction-level advisory lock (pg_advisory_xact_lock with
// AdvisoryLockKey), so replicas opening one database at once migrate it
// exactly once; a database migrated by a newer driver is refused with
// memory.ErrUnimplemented. Tables are named without a schema and so live
// in the first schema of the connection's search_path.
//
// The records live in memory_records, whose text columns use the "C"
// collation, so equality is exact and ordering is byte-wise whatever the
// database's locale. Identity columns hold the empty string for an empty field; times
// are unix nanoseconds in BIGINT columns (a NULL expiry means never);
// metadata is a JSONB object, NULL when there is none. Four partial
// identity indexes (session, user, squad, agent; each led by tenant and
// followed by created and id descending, so the newest N records of a
// scope are read off an index in List order) hold only the records that
// have the field, and a partial index on expiry serves sweeps.
//
// Since schema version 5, statement-level triggers on memory_records log
// the tenant and id of every record inserted, updated or deleted, with
// the writing transaction's id, in memory_text_changes, from which every
// driver's text cache catches up (see SearchText), and its vector copy
// with Options.InProcessVectors. Each write therefore
// also inserts one small row per record it touches; drivers prune the
// log in the background of changes older than about ten minutes.
//
// Keyed JSON documents (memory.KindDocument) are kept in JSONB. The
// content column holds the JSON text exactly as the caller wrote it —
// white space, key order, duplicate keys, number spellings and escapes —
// and reads return that text; the stored generated column document holds
// the same payload as jsonb (content::jsonb for documents, NULL for every
// other kind), so operators and the server can query it (document->'key',
// document @> '{...}') and index it, for example with
// CREATE INDEX ... ON memory_records USING gin (document jsonb_path_ops).
// jsonb's text form normalises the JSON, so the driver never returns it.
// memory.CheckJSON refuses what jsonb cannot hold (\u0000, unpaired
// surrogate escapes), so a document every driver accepts fits here too.
// Migrating a database to schema version 3 adds the column, rewriting the
// table once; documents an earlier driver stored without checking their
// JSON make that migration fail with memory.ErrInvalidArgument, naming
// them and leaving the database at version 2 until they are corrected or
// deleted.
//
// # Errors
//
// Native errors are classified with the memory.Err* sentinels and stay
// reachable with errors.As (as *pq.Error). Unique violations,
// serialization failures, deadlocks and lock time-outs are
// memory.ErrConflict; program limits, full disks and values too long are
// memory.ErrTooLarge; privilege and authentication failures are
// memory.ErrPermissionDenied; a missing database or table is
// memory.ErrNotFound; data and syntax errors, among them a document's
// content that jsonb refuses (which memory.Record.Validate makes
// impossible), are memory.ErrInvalidArgument; connection failures, shutdowns and anything
// else that leaves the store unusable for the call are memory.ErrClosed.
// Context errors are returned unchanged.
package postgres

import (
	"context"
	"database/sql"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/sqldriver"
)

// DriverName is the database/sql driver name Open uses. It is registered
// by github.com/lib/pq.
const DriverName = "postgres"

// Default option values.
const (
	// DefaultMaxConns is the size of Open's connection pool when
	// Options.MaxConns is zero.
	DefaultMaxConns = 16
	// DefaultConnMaxIdleTime is how long Open's pool keeps an idle
	// connection.
	DefaultConnMaxIdleTime = 5 * time.Minute
)

// Options configure a Driver. The zero value is the documented default.
type Options struct {
	// Clock decides expiry: List never returns a record whose Expires is
	// at or before Clock's reading, and Sweep deletes those records. Nil
	// means time.Now.
	Clock memory.Clock
	// Logger receives debug records of opening and schema migrations and
	// of retried transactions. Nil discards them.
	Logger *slog.Logger
	// MaxConns bounds Open's connection pool; zero means DefaultMaxConns.
	// New leaves the injected handle's settings alone.
	MaxConns int
	// EfSearch is the least hnsw.ef_search a vector search through the
	// HNSW index sets: the candidate list of pgvector's graph walk, which
	// trades speed for recall (see Search). A search for k results sets
	// max(EfSearch, 2k), at most 1000. Zero means DefaultEfSearch; other
	// values must be between 1 and 1000. It has no effect with
	// InProcessVectors.
	EfSearch int
	// InProcessVectors makes vector search run in the process, exactly,
	// over a copy of the store's vectors that each driver keeps current
	// from the change log before every search, as it keeps its text cache
	// (see SearchText), instead of in the server (see Search). A search
	// then costs one catch-up statement and no graph walk, and answers
	// with references (RankVector), so a hybrid recall reads only the
	// records it returns. The copy costs memory in every process, about
	// 5 bytes per dimension and a few hundred bytes of bookkeeping per
	// vector, growth slack included (100,000 vectors of 384 dimensions
	// with short ids: 250 MB of heap, measured), and the first
	// vector search of a driver reads every vector (BENCHMARKS.md gives
	// the times). It suits stores whose vectors fit in each replica's
	// memory; pgvector is then not needed.
	InProcessVectors bool
}

// Driver is a driver.Driver, Sweeper, Swapper, VectorRanker,
// TextRanker and Claimer over one PostgreSQL database. It is safe for
// concurrent use.
type Driver struct {
	db    *sqlx.DB
	own   bool // Close closes db
	clock memory.Clock
	log   *slog.Logger

	gate     sqldriver.Gate
	dims     atomic.Int64         // the store's vector dimension once read; 0 before
	search   searchState          // how Search runs; see search.go
	efSearch int                  // Options.EfSearch, or its default
	tc       textCache            // the texts, for SearchText
	vc       vectorCopy           // the vectors, with Options.InProcessVectors
	inProc   bool                 // Options.InProcessVectors
	ts       sqldriver.TextSearch // how SearchText runs
	prune    textPruner           // prunes the text change log
	prepared preparedSet          // text search's statements, prepared
	writes   atomic.Uint64        // the driver's writes to the records so far (wrote)
	// chores runs background work: pruning the text change log, writing
	// the text cache's snapshot.
	chores sqldriver.Chores
}

var (
	_ driver.Driver  = (*Driver)(nil)
	_ driver.Sweeper = (*Driver)(nil)
	_ driver.Swapper = (*Driver)(nil)
)

// Open connects to the database dsn names (a lib/pq connection string:
// "postgres://user@host/db?sslmode=disable" or
// "host=... dbname=... sslmode=disable") and returns a driver that owns
// its connection pool and closes it at Close. The schema is created or
// migrated before Open returns. Open fails with memory.ErrInvalidArgument
// for an empty or malformed dsn and memory.ErrUnimplemented when the
// database's schema is newer than this driver; failures to connect are
// classified as described in the package documentation.
func Open(dsn string, opt Options) (*Driver, error) {
	if dsn == "" {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "postgres: empty data source name")
	}
	conn, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, memory.Wrap(memory.ErrInvalidArgument, err, "postgres: parse data source name")
	}
	db := sqlx.NewDb(sql.OpenDB(conn), DriverName)
	n := opt.MaxConns
	if n <= 0 {
		n = DefaultMaxConns
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxIdleTime(DefaultConnMaxIdleTime)
	return start(db, true, opt)
}

// New returns a driver over an injected handle, which it uses for every
// call and does not close. db must come from github.com/lib/pq
// (sqlx.Open("postgres", dsn), or sqlx.NewDb over a *sql.DB opened with
// lib/pq or a pq.Connector); anything else is memory.ErrInvalidArgument.
// The schema is created or migrated before New returns.
func New(db *sqlx.DB, opt Options) (*Driver, error) {
	if db == nil {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "postgres: nil database handle")
	}
	if _, ok := db.Driver().(*pq.Driver); !ok {
		return nil, memory.Errorf(memory.ErrInvalidArgument, "postgres: the handle's driver is %T, not github.com/lib/pq", db.Driver())
	}
	return start(db, false, opt)
}

func start(db *sqlx.DB, own bool, opt Options) (*Driver, error) {
	if opt.EfSearch < 0 || opt.EfSearch > maxEfSearch {
		if own {
			_ = db.Close()
		}
		return nil, memory.Errorf(memory.ErrInvalidArgument, "postgres: EfSearch %d is not between 1 and %d", opt.EfSearch, maxEfSearch)
	}
	d := &Driver{db: db, own: own, clock: opt.Clock, log: opt.Logger, efSearch: opt.EfSearch, inProc: opt.InProcessVectors}
	d.prune.init()
	d.tc.init(d)
	d.vc.init(d)
	d.ts = sqldriver.TextSearch{Gate: &d.gate, Clock: d.clock, Cache: &d.tc.TextCache, Within: d.tc.sync.within,
		After: func() { d.maintain(); d.maybeSnapshot() }, DB: &d.prepared, Columns: selectColumns}
	d.prepared.db = db
	if d.efSearch == 0 {
		d.efSearch = DefaultEfSearch
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if err := d.setup(context.Background()); err != nil {
		if own {
			_ = db.Close()
		}
		return nil, err
	}
	return d, nil
}

// DB returns the handle the driver uses, for administration and tests.
func (d *Driver) DB() *sqlx.DB { return d.db }

// enter admits a call whose arguments the driver.Check function of its
// method judged (invalid); see sqldriver.Gate.Enter. The caller must call
// d.gate.Leave when enter returns nil.
func (d *Driver) enter(ctx context.Context, invalid error) error {
	return d.gate.Enter(ctx, "postgres", invalid)
}

// Close waits for calls in progress, then closes the pool Open made (an
// injected handle is left open for its owner). Later calls fail with
// memory.ErrClosed. It is idempotent.
func (d *Driver) Close() error {
	return d.gate.Close(func() error {
		d.chores.Stop()
		d.prepared.close()
		if !d.own {
			return nil
		}
		return classify(d.db.Close(), "postgres: close")
	})
}
