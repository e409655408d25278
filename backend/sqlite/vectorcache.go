//go:build cgo

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"strconv"
	"sync"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/sqldriver"
	"github.com/agentmem/memory/internal/textcache"
	"github.com/agentmem/memory/internal/veccache"
)

// settingVectorEpoch counts the committed transactions that changed the
// set of stored vectors. Every such transaction, in any process, adds one
// in the same transaction, so a cache built at epoch e is current exactly
// while the stored epoch is e.
const settingVectorEpoch = "vector_epoch"

// vectorCache holds the store's vectors in memory for exact search
// (veccache.Cache, grouped by writer identity, so that a search reads
// only the vectors of the writers its filter matches). It is loaded from
// the file on the first search, kept current by this driver's own
// writes, and loaded again whenever the stored epoch shows that another
// process or driver changed vectors.
//
// A write that changes vectors locks the cache (mu) inside its
// transaction and applies its changes after committing, before unlocking;
// a search holds mu shared and checks the stored epoch under it, so it
// never sees a committed epoch the cache has not caught up with because of
// this driver's own writes.
type vectorCache struct {
	mu     sync.RWMutex
	loaded bool
	epoch  int64
	vecs   *veccache.Cache // nil until loaded
	// meter says when a snapshot of vecs is due (vectorsnapshot.go);
	// its MaxAge is vectorSnapshotMaxAge.
	meter textcache.Meter
	loads int // how many times the cache was loaded, for tests
	snaps int // how many of them read a snapshot, for tests
}

// asksColumn is driver.Asks(content) computed by SQLite, 1 or 0: the
// content ends with a question mark once the characters Asks passes over
// are trimmed (rtrim and substr count characters, not bytes).
const asksColumn = `substr(rtrim(content, ' ' || char(9, 13, 10) || '"''”’)]'), -1) IN ('?', '？')`

// reset empties the cache and marks it unloaded.
func (c *vectorCache) reset() {
	c.loaded, c.vecs = false, nil
}

// apply brings a loaded cache at epoch-1 to epoch with the changes of the
// transaction that committed epoch; a cache at another epoch missed a
// change and is reset, to be loaded again. The caller holds mu.
func (c *vectorCache) apply(epoch int64, changes []veccache.Change) {
	if !c.loaded {
		return
	}
	if c.epoch != epoch-1 {
		c.reset()
		return
	}
	for _, ch := range changes {
		c.vecs.Apply(ch)
	}
	c.epoch = epoch
	// A snapshot of another epoch serves no new handle, but unlike the
	// text cache's a vector snapshot is large (the vectors again): it is
	// not stored again for every change, only once many changed or
	// vectorSnapshotMaxAge passed (see vectorsnapshot.go).
	c.meter.Changed(len(changes))
}

// storedEpoch reads the vector epoch; 0 before any vector was stored.
func storedEpoch(ctx context.Context, q sqlx.QueryerContext) (int64, error) {
	var s string
	err := sqlx.GetContext(ctx, q, &s, `SELECT value FROM memory_settings WHERE name = ?`, settingVectorEpoch)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

// bumpEpoch adds one to the vector epoch within the write transaction on
// conn and returns the new value.
func bumpEpoch(ctx context.Context, conn *sqlx.Conn) (int64, error) {
	return addEpoch(ctx, conn, settingVectorEpoch)
}

// addEpoch adds one to the epoch setting name within the write transaction
// on conn and returns the new value.
func addEpoch(ctx context.Context, conn *sqlx.Conn, name string) (int64, error) {
	var s string
	err := conn.GetContext(ctx, &s, `INSERT INTO memory_settings (name, value) VALUES (?, '1')
		ON CONFLICT (name) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) RETURNING value`, name)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s, 10, 64)
}

// load reads every stored vector into the cache, with the epoch they are
// current at, in one read transaction: from the stored snapshot when it
// is current at that epoch and snapshots is set, else from the records.
// The caller holds mu for writing.
func (c *vectorCache) load(ctx context.Context, db *sqlx.DB, snapshots bool, log *slog.Logger) error {
	return inSnapshot(ctx, db, func(conn *sqlx.Conn) error { return c.loadFrom(ctx, conn, snapshots, log) })
}

// inSnapshot runs fn on a connection of db inside a read transaction, so
// that everything fn reads comes from one snapshot of the file.
func inSnapshot(ctx context.Context, db *sqlx.DB, fn func(conn *sqlx.Conn) error) error {
	conn, err := db.Connx(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	defer func() { _, _ = conn.ExecContext(context.Background(), "ROLLBACK") }()
	return fn(conn)
}

// loadFrom is load's body, on a connection inside a read transaction.
func (c *vectorCache) loadFrom(ctx context.Context, conn *sqlx.Conn, snapshots bool, log *slog.Logger) error {
	epoch, err := storedEpoch(ctx, conn)
	if err != nil {
		return err
	}
	c.reset()
	if snapshots && epoch > 0 {
		if snap, written := readVectorSnapshot(ctx, conn, epoch, log); snap != nil {
			c.loaded, c.epoch, c.vecs = true, epoch, snap
			c.loads++
			c.snaps++
			c.meter.Loaded(written, 0)
			return nil
		}
	}
	fresh := &veccache.Cache{}
	if err := sqldriver.ReserveVectors(ctx, conn, "vector", "length(vector) / 4", fresh); err != nil {
		return err
	}
	rows, err := conn.QueryContext(ctx, `SELECT id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
		created, expires, rkey, vector, `+speakerColumn+`, `+asksColumn+` FROM memory_records WHERE vector IS NOT NULL`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			row     veccache.Row
			w       memory.Identity
			kind    string
			expires sql.NullInt64
			blob    []byte
		)
		if err := rows.Scan(&row.ID, &kind, &w.Tenant, &w.User, &w.Agent, &w.Instance, &w.Squad, &w.Session,
			&row.Created, &expires, &row.Key, &blob, &row.Speaker, &row.Asks); err != nil {
			return err
		}
		vec, err := decodeVector(blob)
		if err != nil {
			return memory.Wrap(memory.ErrInvalidArgument, err, "sqlite: record "+row.ID+" has a malformed vector")
		}
		row.Kind = memory.Kind(kind)
		if expires.Valid {
			row.Expires = expires.Int64
		}
		fresh.Put(w, row, vec)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	c.loaded, c.epoch, c.vecs = true, epoch, fresh
	c.loads++
	c.meter.Unstored()
	return nil
}

// vectorWrite carries a write transaction's vector changes to the cache:
// begin, inside the transaction, locks the cache and moves the stored
// epoch on; commit, after the transaction committed, applies the changes;
// done, deferred, unlocks the cache whatever happened.
type vectorWrite struct {
	locked  bool
	epoch   int64
	changes []veccache.Change
}

func (w *vectorWrite) begin(ctx context.Context, c *vectorCache, conn *sqlx.Conn, changes []veccache.Change) error {
	if !w.locked {
		c.mu.Lock()
		w.locked = true
	}
	epoch, err := bumpEpoch(ctx, conn)
	if err != nil {
		return classify(err, "sqlite: count the vector change")
	}
	w.epoch, w.changes = epoch, changes
	return nil
}

func (w *vectorWrite) commit(c *vectorCache) {
	if w.locked {
		c.apply(w.epoch, w.changes)
	}
}

func (w *vectorWrite) done(c *vectorCache) {
	if w.locked {
		w.locked = false
		c.mu.Unlock()
	}
}
