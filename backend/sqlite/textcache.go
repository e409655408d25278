//go:build cgo

package sqlite

import (
	"context"
	"database/sql"
	"sync"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/lexical"
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
// in one lexical.Index per writer identity, so that a search reads only
// the indexes of the writers its filter matches and its statistics are
// theirs (driver.TextSearcher). It is loaded from the file on the first
// text search, caught up with the records added since (by this process or
// any other) before every search, and loaded again when the epoch shows a
// change or removal. The content itself is not kept: a search reads its
// winners from the file.
type textCache struct {
	mu     sync.RWMutex
	loaded bool
	epoch  int64
	maxRow int64 // the largest rowid read
	groups map[memory.Identity]*lexical.Index[*textRow]
	byKey  map[recordKey]*textRow
	loads  int // how many times the cache was loaded, for tests
}

// textRow is what a text search needs of a record besides its text: its
// writer, what the query's kinds, key, ids and expiry test, and List
// order for ties.
type textRow struct {
	writer  memory.Identity
	id      string
	kind    memory.Kind
	key     string
	created int64
	expires int64 // 0: never
}

// textColumns are what load and catchUp read, in scanTextRow's order.
const textColumns = `rowid, id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
	created, expires, rkey, content`

// reset empties the cache and marks it unloaded.
func (c *textCache) reset() {
	c.loaded, c.epoch, c.maxRow = false, 0, 0
	c.groups, c.byKey = nil, nil
}

// put adds row with its content, replacing the row under the same key.
// The caller holds mu for writing.
func (c *textCache) put(row *textRow, content string) {
	k := recordKey{row.writer.Tenant, row.id}
	if old := c.byKey[k]; old != nil {
		c.groups[old.writer].Remove(old)
		delete(c.byKey, k)
	}
	if content == "" {
		return
	}
	x := c.groups[row.writer]
	if x == nil {
		x = lexical.NewIndex[*textRow]()
		c.groups[row.writer] = x
	}
	x.Add(row, content)
	c.byKey[k] = row
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
func (c *textCache) load(ctx context.Context, db *sqlx.DB) error {
	return inSnapshot(ctx, db, func(conn *sqlx.Conn) error { return c.loadFrom(ctx, conn) })
}

// loadFrom is load's body, on a connection inside a read transaction.
func (c *textCache) loadFrom(ctx context.Context, conn *sqlx.Conn) error {
	epoch, maxRow, err := textState(ctx, conn)
	if err != nil {
		return err
	}
	c.reset()
	c.groups = map[memory.Identity]*lexical.Index[*textRow]{}
	c.byKey = map[recordKey]*textRow{}
	if err := c.read(ctx, conn, 0, maxRow); err != nil {
		c.reset()
		return err
	}
	c.loaded, c.epoch, c.maxRow = true, epoch, maxRow
	c.loads++
	return nil
}

// catchUp reads the records added above the cache's largest rowid, up to
// maxRow. The caller holds mu for writing.
func (c *textCache) catchUp(ctx context.Context, db *sqlx.DB, maxRow int64) error {
	if err := c.read(ctx, db, c.maxRow, maxRow); err != nil {
		c.reset()
		return err
	}
	c.maxRow = maxRow
	return nil
}

// read puts the records of rowids in (from, to] into the cache.
func (c *textCache) read(ctx context.Context, q sqlx.QueryerContext, from, to int64) error {
	rows, err := q.QueryContext(ctx, `SELECT `+textColumns+` FROM memory_records WHERE rowid > ? AND rowid <= ? ORDER BY rowid`, from, to)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			rowid   int64
			row     = new(textRow)
			w       = &row.writer
			kind    string
			expires sql.NullInt64
			content string
		)
		if err := rows.Scan(&rowid, &row.id, &kind, &w.Tenant, &w.User, &w.Agent, &w.Instance, &w.Squad, &w.Session,
			&row.created, &expires, &row.key, &content); err != nil {
			return err
		}
		row.kind = memory.Kind(kind)
		if expires.Valid {
			row.expires = expires.Int64
		}
		c.put(row, content)
	}
	return rows.Err()
}

// textChange is one record a committed write stored or removed.
type textChange struct {
	key     recordKey
	removed bool
	row     *textRow // of a stored record
	content string   // of a stored record
}

// textChangesOf returns the text changes of storing recs, in order (a
// later occurrence of an id replaces an earlier one).
func textChangesOf(recs []memory.Record) []textChange {
	out := make([]textChange, len(recs))
	for i, r := range recs {
		out[i] = textChange{
			key:     recordKey{r.Identity.Tenant, r.ID},
			row:     &textRow{writer: r.Identity, id: r.ID, kind: r.Kind, key: r.Key, created: r.Created.UnixNano(), expires: expiryNanos(r)},
			content: r.Content,
		}
	}
	return out
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
	changes []textChange
	unknown bool // the write does not know what it removed: commit resets a loaded cache
}

func (w *textWrite) begin(ctx context.Context, c *textCache, conn *sqlx.Conn, changes []textChange) error {
	if !w.locked {
		c.mu.Lock()
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
	}
}

func (w *textWrite) done(c *textCache) {
	if w.locked {
		w.locked = false
		c.mu.Unlock()
	}
}

// apply brings a loaded cache at epoch-1 to epoch with the changes of the
// transaction that committed epoch; a cache at another epoch missed a
// change and is reset, to be loaded again. A stored record already in
// the cache is replaced; one that is not (a new record) is left for the
// catch-up by rowid. The caller holds mu.
func (c *textCache) apply(epoch int64, changes []textChange) {
	if !c.loaded {
		return
	}
	if c.epoch != epoch-1 {
		c.reset()
		return
	}
	for _, ch := range changes {
		old := c.byKey[ch.key]
		switch {
		case ch.removed && old != nil:
			c.groups[old.writer].Remove(old)
			delete(c.byKey, ch.key)
		case !ch.removed && old != nil:
			c.put(ch.row, ch.content)
		}
	}
	c.epoch = epoch
}

// isLoaded reports whether the cache is loaded, for a write deciding
// whether its deletions are worth reading back.
func (c *textCache) isLoaded() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.loaded
}
