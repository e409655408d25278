//go:build cgo

package sqlite

import (
	"context"
	"database/sql"
	"log/slog"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/sqldriver"
	"github.com/agentmem/memory/internal/textcache"
)

// settingTextEpoch counts the committed transactions that changed or
// removed stored records (replacements, swaps, deletions, sweeps). Adding
// new records does not count: a new record takes a rowid above every
// rowid stored before it (SQLite gives max(rowid)+1, and only reuses a
// rowid once the largest was deleted, which counts), so a text cache built
// up to rowid m at epoch e is current exactly while the epoch is e, after
// it reads the records above m. Appending a turn, the hot path, pays
// nothing for text search.
const settingTextEpoch = "text_epoch"

// textCache holds every stored record's content, analysed for text search
// (textcache.Cache), with the epoch and largest rowid it is current at.
// It is loaded from the file on the first text search, caught up with the
// records added since (by this process or any other) before every search,
// and loaded again when the epoch shows a change or removal. The content
// itself is not kept: a search reads its winners from the file.
type textCache struct {
	sqldriver.TextCache // C is nil until loaded, and after a reset
	epoch               int64
	maxRow              int64 // the largest rowid read
}

// reset empties the cache and marks it unloaded.
func (c *textCache) reset() {
	c.C, c.epoch, c.maxRow = nil, 0, 0
}

// textState reads the text epoch and the largest rowid, in one statement
// and so from one snapshot.
func textState(ctx context.Context, q sqlx.QueryerContext) (epoch, maxRow int64, err error) {
	var e, m sql.NullInt64
	err = q.QueryRowxContext(ctx, `SELECT CAST((SELECT value FROM memory_settings WHERE name = ?) AS INTEGER),
		(SELECT max(rowid) FROM memory_records)`, settingTextEpoch).Scan(&e, &m)
	return e.Int64, m.Int64, err
}

// load reads every stored record into the cache, with the epoch and
// largest rowid they are current at, in one read transaction. The caller
// holds mu for writing.
func (c *textCache) load(ctx context.Context, db *sqlx.DB, log *slog.Logger) error {
	return inSnapshot(ctx, db, func(conn *sqlx.Conn) error { return c.loadFrom(ctx, conn, log) })
}

// loadFrom is load's body, on a connection inside a read transaction: it
// starts from the stored snapshot when that is current (see
// readSnapshot), and reads the records above it.
func (c *textCache) loadFrom(ctx context.Context, conn *sqlx.Conn, log *slog.Logger) error {
	epoch, maxRow, err := textState(ctx, conn)
	if err != nil {
		return err
	}
	c.reset()
	fresh, from, written := readSnapshot(ctx, conn, epoch, maxRow, log)
	if fresh == nil {
		fresh, from = textcache.New(), 0
	}
	n, err := readTexts(ctx, conn, fresh, from, maxRow)
	if err != nil {
		return err
	}
	fresh.Pack()
	c.C, c.epoch, c.maxRow = fresh, epoch, maxRow
	c.Loads++
	if written.IsZero() {
		c.Meter.Unstored()
	} else {
		c.Meter.Loaded(written, n)
		c.Snaps++
	}
	return nil
}

// catchUp reads the records added above the cache's largest rowid, up to
// maxRow. The caller holds mu for writing.
func (c *textCache) catchUp(ctx context.Context, db *sqlx.DB, maxRow int64) error {
	n, err := readTexts(ctx, db, c.C, c.maxRow, maxRow)
	if err != nil {
		c.reset()
		return err
	}
	c.maxRow = maxRow
	c.Meter.Changed(n)
	return nil
}

// speakerColumn is the record's speaker, Metadata[memory.SpeakerKey], as
// sqldriver.ScanText reads it after sqldriver.TextColumns. A record
// without metadata stores the empty string, which is not JSON.
const speakerColumn = `CASE metadata WHEN '' THEN '' ELSE coalesce(json_extract(metadata, '$."` + memory.SpeakerKey + `"'), '') END`

// readTexts puts the records of rowids in (from, to] into c and reports
// how many it read.
func readTexts(ctx context.Context, q sqlx.QueryerContext, c *textcache.Cache, from, to int64) (int, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+sqldriver.TextColumns+`, `+speakerColumn+` FROM memory_records WHERE rowid > ? AND rowid <= ? ORDER BY rowid`, from, to)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		w, row, content, err := sqldriver.ScanText(rows)
		if err != nil {
			return n, err
		}
		c.Put(w, row, content)
		n++
	}
	return n, rows.Err()
}

// textWrite carries a write transaction's changes of stored records to
// the text cache, as vectorWrite does for vectors: begin, inside the
// transaction, locks the cache and moves the text epoch on; commit, after
// the transaction committed, applies the changes, so this driver's own
// replacements, swaps and deletions do not make its next search load
// every text again; done, deferred, unlocks the cache whatever happened.
type textWrite struct {
	locked  bool
	epoch   int64
	changes []textcache.Change
	unknown bool // the write does not know what it removed: commit resets a loaded cache
	// deleted marks a write that deleted records; lastRow is then the
	// largest rowid left after it. SQLite gives the next new record
	// lastRow+1, which may be at or below the largest rowid the cache
	// read, so the cache must read from there again.
	deleted bool
	lastRow int64
}

// deletedDown records, inside a transaction that deleted records, the
// largest rowid left.
func (w *textWrite) deletedDown(ctx context.Context, conn *sqlx.Conn) error {
	var m sql.NullInt64
	if err := conn.QueryRowxContext(ctx, `SELECT max(rowid) FROM memory_records`).Scan(&m); err != nil {
		return classify(err, "sqlite: read the largest rowid")
	}
	w.deleted, w.lastRow = true, m.Int64
	return nil
}

func (w *textWrite) begin(ctx context.Context, c *textCache, conn *sqlx.Conn, changes []textcache.Change) error {
	if !w.locked {
		c.Mu.Lock()
		w.locked = true
	}
	epoch, err := addEpoch(ctx, conn, settingTextEpoch)
	if err != nil {
		return classify(err, "sqlite: count the record change")
	}
	w.epoch, w.changes = epoch, changes
	return nil
}

func (w *textWrite) commit(c *textCache) {
	switch {
	case w.locked && w.unknown:
		c.reset()
	case w.locked:
		c.apply(w.epoch, w.changes)
		if w.deleted && c.maxRow > w.lastRow {
			c.maxRow = w.lastRow
		}
	}
}

func (w *textWrite) done(c *textCache) {
	if w.locked {
		w.locked = false
		c.Mu.Unlock()
	}
}

// apply brings a loaded cache at epoch-1 to epoch with the changes of the
// transaction that committed epoch; a cache at another epoch missed a
// change and is reset, to be loaded again. A stored record already in
// the cache is replaced; one that is not (a new record) is left for the
// catch-up by rowid. The caller holds mu.
func (c *textCache) apply(epoch int64, changes []textcache.Change) {
	if c.C == nil {
		return
	}
	if c.epoch != epoch-1 {
		c.reset()
		return
	}
	for _, ch := range changes {
		if c.C.Has(ch.Key) {
			c.C.Apply(ch)
		}
	}
	c.epoch = epoch
	// A snapshot of another epoch serves no new handle.
	c.Meter.Changed(len(changes))
	c.Meter.Stale()
}

// isLoaded reports whether the cache is loaded, for a write deciding
// whether its deletions are worth reading back.
func (c *textCache) isLoaded() bool {
	c.Mu.RLock()
	defer c.Mu.RUnlock()
	return c.C != nil
}
