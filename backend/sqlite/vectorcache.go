//go:build cgo

package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/vecindex"
)

// settingVectorEpoch counts the committed transactions that changed the
// set of stored vectors. Every such transaction, in any process, adds one
// in the same transaction, so a cache built at epoch e is current exactly
// while the stored epoch is e.
const settingVectorEpoch = "vector_epoch"

// vectorCache holds the store's vectors in memory for exact search,
// grouped by writer identity so that a search reads only the vectors of
// the writers its filter matches. It is loaded from the file on the first
// search, kept current by this driver's own writes, and loaded again
// whenever the stored epoch shows that another process or driver changed
// vectors.
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
	groups map[memory.Identity]*vectorGroup
	byID   map[recordKey]vecindex.Ref
	rows   []vectorRow // by Ref; freed rows are reused
	free   []vecindex.Ref
	// expiring counts the rows that expire: while there are none, a
	// search that names no kinds, key or ids tests no row.
	expiring int
	loads    int // how many times the cache was loaded, for tests
}

// vectorGroup is the vectors of one writer identity.
type vectorGroup struct {
	id  memory.Identity
	set *vecindex.Set
}

// vectorRow is what a search needs of a record besides its vector: what
// the query's kinds, key, ids and expiry test, List order for ties, and
// the rest of the record's driver.Ref for RankVector.
type vectorRow struct {
	group   *vectorGroup
	id      string
	kind    memory.Kind
	key     string
	speaker string // Metadata[memory.SpeakerKey]
	created int64
	expires int64 // 0: never
	asks    bool  // driver.Asks(Content)
}

// ref returns the driver.Ref of the record row caches.
func (row *vectorRow) ref() driver.Ref {
	return driver.Ref{ID: row.id, Kind: row.kind, Identity: row.group.id, Created: time.Unix(0, row.created),
		Speaker: row.speaker, Asks: row.asks}
}

// asksColumn is driver.Asks(content) computed by SQLite, 1 or 0: the
// content ends with a question mark once the characters Asks passes over
// are trimmed (rtrim and substr count characters, not bytes).
const asksColumn = `substr(rtrim(content, ' ' || char(9, 13, 10) || '"''”’)]'), -1) IN ('?', '？')`

// recordKey is what record ids are unique under: a tenant and an id.
type recordKey struct{ tenant, id string }

// vectorChange is one record a committed write stored or removed.
type vectorChange struct {
	key      recordKey
	removed  bool
	identity memory.Identity // of a stored record
	row      vectorRow       // of a stored record; its group is set by add
	vector   []float32       // nil: stored without a vector
}

// reset empties the cache and marks it unloaded.
func (c *vectorCache) reset() {
	c.loaded = false
	c.groups, c.byID, c.rows, c.free, c.expiring = nil, nil, nil, nil, 0
}

// add puts a row and its vector in the cache. The caller holds mu.
func (c *vectorCache) add(row vectorRow, identity memory.Identity, vec []float32) {
	g := c.groups[identity]
	if g == nil {
		g = &vectorGroup{id: identity, set: vecindex.NewSet(len(vec))}
		c.groups[identity] = g
	}
	row.group = g
	var ref vecindex.Ref
	if n := len(c.free); n > 0 {
		ref = c.free[n-1]
		c.free = c.free[:n-1]
		c.rows[ref] = row
	} else {
		ref = vecindex.Ref(len(c.rows))
		c.rows = append(c.rows, row)
	}
	g.set.Add(ref, vec)
	c.byID[recordKey{identity.Tenant, row.id}] = ref
	if row.expires != 0 {
		c.expiring++
	}
}

// remove drops the record k from the cache, if it is there. The caller
// holds mu.
func (c *vectorCache) remove(k recordKey) {
	ref, ok := c.byID[k]
	if !ok {
		return
	}
	row := c.rows[ref]
	row.group.set.Remove(ref)
	if row.group.set.Len() == 0 {
		delete(c.groups, row.group.id)
	}
	delete(c.byID, k)
	if row.expires != 0 {
		c.expiring--
	}
	c.rows[ref] = vectorRow{}
	c.free = append(c.free, ref)
}

// apply brings a loaded cache at epoch-1 to epoch with the changes of the
// transaction that committed epoch; a cache at another epoch missed a
// change and is reset, to be loaded again. The caller holds mu.
func (c *vectorCache) apply(epoch int64, changes []vectorChange) {
	if !c.loaded {
		return
	}
	if c.epoch != epoch-1 {
		c.reset()
		return
	}
	for _, ch := range changes {
		c.remove(ch.key)
		if !ch.removed && ch.vector != nil {
			c.add(ch.row, ch.identity, ch.vector)
		}
	}
	c.epoch = epoch
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
// current at, in one read transaction. The caller holds mu for writing.
func (c *vectorCache) load(ctx context.Context, db *sqlx.DB) error {
	return inSnapshot(ctx, db, func(conn *sqlx.Conn) error { return c.loadFrom(ctx, conn) })
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
func (c *vectorCache) loadFrom(ctx context.Context, conn *sqlx.Conn) error {
	epoch, err := storedEpoch(ctx, conn)
	if err != nil {
		return err
	}
	rows, err := conn.QueryContext(ctx, `SELECT id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
		created, expires, rkey, vector, `+speakerColumn+`, `+asksColumn+` FROM memory_records WHERE vector IS NOT NULL`)
	if err != nil {
		return err
	}
	defer rows.Close()
	c.reset()
	c.groups = map[memory.Identity]*vectorGroup{}
	c.byID = map[recordKey]vecindex.Ref{}
	speakers := map[string]string{} // each speaker's name held once
	for rows.Next() {
		var (
			row     vectorRow
			w       memory.Identity
			kind    string
			expires sql.NullInt64
			blob    []byte
		)
		if err := rows.Scan(&row.id, &kind, &w.Tenant, &w.User, &w.Agent, &w.Instance, &w.Squad, &w.Session,
			&row.created, &expires, &row.key, &blob, &row.speaker, &row.asks); err != nil {
			c.reset()
			return err
		}
		vec, err := decodeVector(blob)
		if err != nil {
			c.reset()
			return memory.Wrap(memory.ErrInvalidArgument, err, "sqlite: record "+row.id+" has a malformed vector")
		}
		row.kind = memory.Kind(kind)
		if name, ok := speakers[row.speaker]; ok {
			row.speaker = name
		} else {
			speakers[row.speaker] = row.speaker
		}
		if expires.Valid {
			row.expires = expires.Int64
		}
		c.add(row, w, vec)
	}
	if err := rows.Err(); err != nil {
		c.reset()
		return err
	}
	c.loaded, c.epoch = true, epoch
	c.loads++
	return nil
}

// expiryNanos returns r's expiry in unix nanoseconds, as the caches keep
// it: 0 when r never expires.
func expiryNanos(r memory.Record) int64 {
	if r.Expires.IsZero() {
		return 0
	}
	return r.Expires.UnixNano()
}

// changesOf returns the cache changes of storing recs (in order: a later
// occurrence of an id replaces an earlier one).
func changesOf(recs []memory.Record) []vectorChange {
	out := make([]vectorChange, len(recs))
	for i, r := range recs {
		expires := expiryNanos(r)
		out[i] = vectorChange{
			key:      recordKey{r.Identity.Tenant, r.ID},
			identity: r.Identity,
			row: vectorRow{id: r.ID, kind: r.Kind, key: r.Key, speaker: r.Metadata[memory.SpeakerKey],
				created: r.Created.UnixNano(), expires: expires, asks: driver.Asks(r.Content)},
			vector: slices.Clone(r.Vector),
		}
	}
	return out
}

// vectorWrite carries a write transaction's vector changes to the cache:
// begin, inside the transaction, locks the cache and moves the stored
// epoch on; commit, after the transaction committed, applies the changes;
// done, deferred, unlocks the cache whatever happened.
type vectorWrite struct {
	locked  bool
	epoch   int64
	changes []vectorChange
}

func (w *vectorWrite) begin(ctx context.Context, c *vectorCache, conn *sqlx.Conn, changes []vectorChange) error {
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
