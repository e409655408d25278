//go:build cgo

package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/mattn/go-sqlite3"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/sqldriver"
	"github.com/agentmem/memory/internal/textcache"
	"github.com/agentmem/memory/internal/veccache"
)

// insertSQL returns the statement that inserts n records. With upsert it
// also replaces a stored record with the same tenant and id when both
// carry the same identity. When the identities differ the WHERE clause
// leaves the stored row alone and no row changes, so the statement changes
// fewer than n rows, which Put reports as driver.HeldByAnother. (A record repeated within
// one statement updates the row its first occurrence inserted, under the
// same rule.)
//
// Put runs the plain insert first and the upsert only for a chunk the
// insert finds an existing id in: checking for a conflict before every row
// costs an extra primary-key probe, about 5% of ingest.
func insertSQL(n int, upsert bool) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO memory_records
	(id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
	 created, expires, tokens, label, rkey, metadata, content, vector)
VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	}
	if upsert {
		b.WriteString(`
ON CONFLICT (tenant_id, id) DO UPDATE SET
	kind = excluded.kind, created = excluded.created, expires = excluded.expires,
	tokens = excluded.tokens, label = excluded.label, rkey = excluded.rkey,
	metadata = excluded.metadata, content = excluded.content, vector = excluded.vector,
	version = memory_records.version + 1
WHERE user_id = excluded.user_id
	AND agent_id = excluded.agent_id AND instance_id = excluded.instance_id
	AND squad_id = excluded.squad_id AND session_id = excluded.session_id`)
	}
	return b.String()
}

// Put writes records in statements of maxChunk rows, and the remainder in
// statements of the powers of two below it, so a handful of statement
// texts cover every batch size and all stay in the connection's statement
// cache (stmtCacheSize). Chunks of 128 ingest faster than chunks of 32
// (BENCHMARKS.md, "Choices measured"): fewer statement executions, each
// binding more rows.
const maxChunk = 128

// inserts[k] and upserts[k] insert 1<<k records.
var inserts, upserts = func() (ins, ups []string) {
	for n := 1; n <= maxChunk; n *= 2 {
		ins = append(ins, insertSQL(n, false))
		ups = append(ups, insertSQL(n, true))
	}
	return ins, ups
}()

// selectColumns are the columns scanRecord reads.
const selectColumns = sqldriver.RecordColumns + ", vector"

// owner is the id and identity of a stored record, as the conflict
// report reads them.
type owner struct {
	ID       string `db:"id"`
	Tenant   string `db:"tenant_id"`
	User     string `db:"user_id"`
	Agent    string `db:"agent_id"`
	Instance string `db:"instance_id"`
	Squad    string `db:"squad_id"`
	Session  string `db:"session_id"`
}

// identity returns the stored record's identity.
func (o owner) identity() memory.Identity {
	return memory.Identity{Tenant: o.Tenant, User: o.User, Agent: o.Agent, Instance: o.Instance, Squad: o.Squad, Session: o.Session}
}

// putArgs returns the upsert arguments of r, which CheckPut has validated.
func putArgs(r memory.Record) ([]any, error) {
	created := r.Created.UnixNano() // in range: Validate checked it
	var expires any                 // NULL: never
	if !r.Expires.IsZero() {
		expires = r.Expires.UnixNano()
	}
	meta := ""
	if len(r.Metadata) > 0 {
		b, err := json.Marshal(r.Metadata)
		if err != nil {
			return nil, memory.Wrap(memory.ErrInvalidArgument, err, "record "+r.ID+" metadata")
		}
		meta = string(b)
	}
	id := r.Identity
	return []any{
		r.ID, string(r.Kind), id.Tenant, id.User, id.Agent, id.Instance, id.Squad, id.Session,
		created, expires, int64(r.Tokens), r.Label, r.Key, meta, r.Content, encodeVector(r.Vector),
	}, nil
}

// scanRecord reads one row of selectColumns; see sqldriver.ScanRecord.
func scanRecord(rows *sql.Rows) (memory.Record, error) { return sq.ScanRecord(rows) }

// Put stores recs in one immediate transaction, all or nothing; see
// driver.Driver. A record whose id its tenant holds with another identity
// fails the whole batch with memory.ErrPermissionDenied. Times must lie between the years
// 1678 and 2262 (unix nanoseconds in an int64), or Put fails with
// memory.ErrInvalidArgument.
func (d *Driver) Put(ctx context.Context, recs []memory.Record) error {
	if err := d.enter(ctx, driver.CheckPut(recs)); err != nil {
		return err
	}
	defer d.gate.Leave()
	args := make([][]any, len(recs))
	for i, r := range recs {
		a, err := putArgs(r)
		if err != nil {
			return err
		}
		args[i] = a
	}
	if len(recs) == 0 {
		return nil
	}
	if done, err := d.putAlone(ctx, recs, args); done {
		return err
	}
	var (
		vw vectorWrite
		tw textWrite
	)
	defer vw.done(&d.vc)
	defer tw.done(&d.tc)
	err := d.write(ctx, func(conn *sqlx.Conn) error {
		// Statements run without a cancellable context, which would cost
		// a goroutine per statement in go-sqlite3; cancellation is checked
		// between statements instead.
		bg := context.WithoutCancel(ctx)
		vectors := sqldriver.HasVectors(recs)
		if vectors {
			if err := d.checkDims(bg, conn, recs); err != nil {
				return err
			}
		}
		replaced := false
		flat := make([]any, 0, maxChunk*columns)
		for i := 0; i < len(recs); {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := len(upserts) - 1
			for 1<<k > len(recs)-i {
				k--
			}
			n := 1 << k
			flat = flat[:0]
			for _, a := range args[i : i+n] {
				flat = append(flat, a...)
			}
			res, err := conn.ExecContext(bg, inserts[k], flat...)
			if duplicateID(err) {
				// The failed statement changed nothing; the transaction
				// goes on.
				replaced = true
				res, err = conn.ExecContext(bg, upserts[k], flat...)
			}
			if err != nil {
				return fail(ctx, err, "sqlite: insert records")
			}
			changed, err := res.RowsAffected()
			if err != nil {
				return fail(ctx, err, "sqlite: insert records")
			}
			if changed != int64(n) {
				return conflict(bg, conn, recs[i:i+n])
			}
			i += n
		}
		// New records take new rowids, which text search reads by
		// itself; a replacement changes a stored record.
		if replaced {
			if err := tw.begin(bg, &d.tc, conn, textcache.ChangesOf(recs)); err != nil {
				return err
			}
		}
		// New records without vectors leave the vectors as they were;
		// anything else may change them.
		if vectors || replaced {
			return vw.begin(bg, &d.vc, conn, veccache.ChangesOf(recs))
		}
		return nil
	})
	if err == nil {
		vw.commit(&d.vc)
		tw.commit(&d.tc)
	}
	return err
}

// putAlone stores a batch that one plain insert statement holds — a
// power of two of records, at most maxChunk, without vectors, as appending
// one turn is — in that one statement, which SQLite runs as a transaction
// of its own: the same write, without the BEGIN and COMMIT round trips of
// an explicit transaction. (SQLite takes the write lock when the statement
// starts, waiting for other processes up to the busy timeout, as BEGIN
// IMMEDIATE does.) It reports whether it settled the Put; it did not when
// the batch does not qualify, or when the insert met an id its tenant
// holds — the statement then changed nothing, and the transactional path
// replaces the record or refuses the batch.
func (d *Driver) putAlone(ctx context.Context, recs []memory.Record, args [][]any) (bool, error) {
	n := len(recs)
	if n > maxChunk || n&(n-1) != 0 || sqldriver.HasVectors(recs) {
		return false, nil
	}
	k := 0
	for 1<<k < n {
		k++
	}
	flat := make([]any, 0, n*columns)
	for _, a := range args {
		flat = append(flat, a...)
	}
	select {
	case d.wsem <- struct{}{}:
	case <-ctx.Done():
		return true, ctx.Err()
	}
	defer func() { <-d.wsem }()
	conn, err := d.w.Connx(ctx)
	if err != nil {
		return true, fail(ctx, err, "sqlite: acquire writer connection")
	}
	defer conn.Close()
	// Without a cancellable context, as inside transactions: go-sqlite3
	// would start a goroutine per statement to watch it.
	_, err = conn.ExecContext(context.WithoutCancel(ctx), inserts[k], flat...)
	switch {
	case err == nil:
		d.committed()
		return true, nil
	case duplicateID(err):
		return false, nil
	}
	d.ensureNoTx(conn)
	return true, fail(ctx, err, "sqlite: insert records")
}

// duplicateID reports whether err is the primary-key violation of a plain
// insert meeting an id its tenant holds.
func duplicateID(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
}

// columns is the number of values putArgs returns.
const columns = 16

// conflict reports the record of chunk whose id its tenant holds, within
// the failing transaction, with another identity.
func conflict(ctx context.Context, conn *sqlx.Conn, chunk []memory.Record) error {
	for _, r := range chunk {
		var o owner
		err := conn.GetContext(ctx, &o, `SELECT id, tenant_id, user_id, agent_id, instance_id, squad_id, session_id
			FROM memory_records WHERE tenant_id = ? AND id = ?`, r.Identity.Tenant, r.ID)
		if err == nil && o.identity() != r.Identity {
			return driver.HeldByAnother(r.ID)
		}
	}
	return memory.Errorf(memory.ErrPermissionDenied, "a record of the batch is held by another identity of its tenant")
}

// List returns the unexpired records matching q, newest first (Created
// descending, then ID descending), at most q.Limit of them when it is set;
// see driver.Driver. The read runs on one index: the one of the most
// selective identity field q's filter sets (session, user, squad, agent, in
// that order), or the primary key when q names ids.
func (d *Driver) List(ctx context.Context, q driver.Query) ([]memory.Record, error) {
	return sq.List(ctx, &d.gate, d.clock, d.r, selectColumns, q)
}

// Delete removes every record matching q, expired or not, in one
// statement, ignoring q.Limit, and reports how many it removed; see
// driver.Driver.
func (d *Driver) Delete(ctx context.Context, q driver.Query) (int64, error) {
	return sq.Delete(ctx, &d.gate, q, d.delete)
}

// Sweep deletes every record that has expired at the driver's clock (its
// Expires at or before the clock's reading) and reports how many it
// removed. It reads the expiry index only.
func (d *Driver) Sweep(ctx context.Context) (int64, error) {
	return sq.Sweep(ctx, &d.gate, d.clock, d.delete)
}

// delete runs the DELETE statement query. In a store that holds vectors
// it returns the deleted ids, so that the vectors among them leave the
// search cache.
func (d *Driver) delete(ctx context.Context, query string, args []any, what string) (int64, error) {
	var (
		n  int64
		vw vectorWrite
		tw textWrite
	)
	defer vw.done(&d.vc)
	defer tw.done(&d.tc)
	texts := d.tc.isLoaded()
	err := d.write(ctx, func(conn *sqlx.Conn) error {
		bg := context.WithoutCancel(ctx)
		dims := d.dims.Load()
		if dims == 0 {
			stored, err := sq.StoredDims(ctx, conn)
			if err != nil {
				return fail(ctx, err, what)
			}
			dims = int64(stored)
		}
		if dims == 0 && !texts {
			// No cache to tell which records went: a text cache loaded
			// meanwhile is reset at commit.
			res, err := conn.ExecContext(ctx, query, args...)
			if err != nil {
				return fail(ctx, err, what)
			}
			if n, err = res.RowsAffected(); err != nil {
				return fail(ctx, err, what)
			}
			if n > 0 {
				tw.unknown = true
				return tw.begin(bg, &d.tc, conn, nil)
			}
			return nil
		}
		rows, err := conn.QueryContext(ctx, query+" RETURNING tenant_id, id, vector IS NOT NULL", args...)
		if err != nil {
			return fail(ctx, err, what)
		}
		var (
			vchanges []veccache.Change
			tchanges []textcache.Change
		)
		for rows.Next() {
			var k veccache.Key
			var vector bool
			if err := rows.Scan(&k.Tenant, &k.ID, &vector); err != nil {
				rows.Close()
				return fail(ctx, err, what)
			}
			n++
			tchanges = append(tchanges, textcache.Change{Key: textcache.Key(k), Removed: true})
			if vector {
				vchanges = append(vchanges, veccache.Change{Key: k, Removed: true})
			}
		}
		if err := rows.Close(); err != nil {
			return fail(ctx, err, what)
		}
		if err := rows.Err(); err != nil {
			return fail(ctx, err, what)
		}
		if n > 0 {
			if err := tw.begin(bg, &d.tc, conn, tchanges); err != nil {
				return err
			}
			if err := tw.deletedDown(bg, conn); err != nil {
				return err
			}
		}
		if len(vchanges) > 0 {
			return vw.begin(bg, &d.vc, conn, vchanges)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	vw.commit(&d.vc)
	tw.commit(&d.tc)
	return n, nil
}

// where writes q's condition to b and returns its parameters; see
// sqldriver.SQL.Where and Dialect.PinIndex for how it pins the index a
// read uses.
func where(b *strings.Builder, q driver.Query) []any { return sq.Where(b, nil, q) }
