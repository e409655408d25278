package postgres

import (
	"context"
	"database/sql"
	"log/slog"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/sqldriver"
	"github.com/agentmem/memory/internal/textcache"
)

// How text search's caches stay current.
//
// PostgreSQL gives no order of commits a reader can resume from: a
// sequence number or transaction id is taken before its transaction
// commits, so a change may become visible after changes with larger
// numbers were read. The cache therefore remembers not a number but the
// snapshot it is current at (pg_snapshot: every transaction below its
// xmin has finished, none from its xmax on has, and of those between,
// the ones it lists were still running). Triggers (schema version 5)
// log the tenant and id of every record each statement inserts, updates
// or deletes in memory_text_changes, with the top-level transaction's id
// (pg_current_xact_id), in the same transaction, so a change row becomes
// visible exactly when the change does.
//
// A cache at snapshot S holds exactly the records visible in S. The
// records visible in a later snapshot T differ only by the changes of
// the transactions visible in T and not in S, and every such transaction
// has an id of at least xmin(S) (below xmin(S) every transaction had
// finished when S was taken, so it is visible in S or aborted and
// invisible everywhere). One statement (catchUpSQL), which sees one
// snapshot T and returns it, reads the keys of those changes — log rows
// with xid >= xmin(S) that are not visible in S — joined with the
// records stored under them as T sees them: a record present is put in
// the cache, replacing what it held, and a key without one is removed.
// Reading each changed key's state at T, rather than replaying changes,
// needs no order among them: the cache is then at T whatever order the
// transactions committed in. A transaction still running at T is
// invisible in T, so it is read by the next catch-up from T, which lists
// it as running. Applying a key twice is harmless, so a catch-up that
// meets changes the cache already holds costs time, never correctness.
//
// The log is pruned (prune) of the changes of transactions that finished
// long enough ago (textLogRetention), and memory_settings' text_log_floor
// records the largest transaction id pruned: a cache at S may have lost
// changes it needed exactly when floor >= xmin(S), and then loads every
// record again. A TRUNCATE of memory_records (which no driver call makes)
// moves the floor to its own transaction's id, past every cache current
// before it.

// settingTextLogFloor names the memory_settings row holding the largest
// transaction id (xid8, as text) whose changes were pruned from the log.
const settingTextLogFloor = "text_log_floor"

// textCache holds every stored record's content, analysed for text search
// (textcache.Cache), kept current at a snapshot by sync. It is loaded
// from the database on the first text search, caught up with the changes
// of every process from the log before every search, and loaded again
// when the log was pruned past it.
type textCache struct {
	sqldriver.TextCache
	sync logSync[textcache.Change]
}

// init readies d's text cache.
func (c *textCache) init(d *Driver) {
	c.Meter.MaxAge = textLogRetention / 2
	c.sync = logSync[textcache.Change]{
		mu:     &c.Mu,
		writes: &d.writes,
		loaded: func() bool { return c.C != nil },
		read: func(ctx context.Context, since string) (catchUp[textcache.Change], error) {
			return readTextChanges(ctx, &d.prepared, since)
		},
		apply: func(changes []textcache.Change) {
			for _, ch := range changes {
				c.C.Apply(ch)
			}
			c.Meter.Changed(len(changes))
		},
		load: func(ctx context.Context, fromSnapshot bool) (string, bool, error) {
			snap, stored, err := c.load(ctx, d.db, fromSnapshot, d.log)
			if err == nil {
				d.log.Debug("postgres: loaded texts for search", "snapshot", snap, "records", c.C.Len(), "stored", stored)
			}
			return snap, stored, err
		},
		fail: func(ctx context.Context, err error, read bool) error {
			if read {
				return fail(ctx, err, "postgres: read the changed texts")
			}
			return fail(ctx, err, "postgres: load texts")
		},
	}
}

// textColumnsOf are sqldriver.TextColumns and the speaker of the records
// r, which may be NULL (a removed key): every column but expires is made
// non-NULL.
const textColumnsOf = `coalesce(r.id, ''), coalesce(r.kind, ''), coalesce(r.tenant_id, ''), coalesce(r.user_id, ''),
	coalesce(r.agent_id, ''), coalesce(r.instance_id, ''), coalesce(r.squad_id, ''), coalesce(r.session_id, ''),
	coalesce(r.created, 0), r.expires, coalesce(r.rkey, ''), coalesce(r.content, ''), coalesce(r.metadata->>'` + memory.SpeakerKey + `', '')`

// catchUpSQL reads, in one statement and so from one snapshot T, T
// itself, whether the log was pruned past the snapshot $1, and unless it
// was, the keys of the changes T sees that $1 does not, each with the
// record stored under it in T (present, then textColumnsOf). It returns
// one row with NULL keys when there is no change.
//
// It runs before every text search, prepared, and is shaped for that.
// $1's xmin is computed in scalar subqueries, whose value no plan sees,
// so that the server's custom plans (made for each run's $1) cost what
// its generic plan does, and after five runs it keeps the generic plan
// instead of planning every run: 0.09 ms a run with no change instead of
// 0.41 (BENCHMARKS.md). The log's rows are bounded on both sides, below
// by S's xmin and above by T's xmax (a transaction at or past it is
// invisible in T, and so read by the next catch-up), because a plan that
// cannot see the bounds takes a one-sided range for a third of the log,
// and scans a log of a million changes whole (200 ms), where a range of
// two unseen bounds is costed as a small slice, read through the xid
// index. The records are read through a LATERAL subquery
// with LIMIT 1, which the planner cannot merge into a join: one primary
// key lookup per changed key, where a plan costed for the generic
// estimate of the changes would otherwise hash-join them with a scan of
// every record (3.7 ms instead of 19 ms for 1,000 changes among 100,000
// records).
const catchUpSQL = catchUpSelect + textColumnsOf + catchUpFrom

// catchUpSelect and catchUpFrom are catchUpSQL but for the columns read
// of each changed record (r), which every copy chooses.
const (
	catchUpSelect = `SELECT s.snap::text, s.pruned, c.tenant_id, c.id, r.id IS NOT NULL, `
	catchUpFrom   = `
FROM (SELECT pg_current_snapshot() AS snap,
		coalesce((SELECT value::xid8 FROM memory_settings WHERE name = '` + settingTextLogFloor + `') >= (SELECT pg_snapshot_xmin($1::pg_snapshot)), false) AS pruned) s
	LEFT JOIN (SELECT DISTINCT tenant_id, id FROM memory_text_changes
		WHERE xid >= (SELECT pg_snapshot_xmin($1::pg_snapshot)) AND xid < (SELECT pg_snapshot_xmax(pg_current_snapshot()))
			AND NOT pg_visible_in_snapshot(xid, $1::pg_snapshot)) c ON NOT s.pruned
	LEFT JOIN LATERAL (SELECT * FROM memory_records r WHERE r.tenant_id = c.tenant_id AND r.id = c.id LIMIT 1) r ON true`
)

// readTextChanges runs catchUpSQL for a cache at snapshot since.
func readTextChanges(ctx context.Context, db sqldriver.RowsQueryer, since string) (catchUp[textcache.Change], error) {
	return readChanges(ctx, db, catchUpSQL, since, func(rows *sql.Rows, lead ...any) (func(textcache.Key, bool) textcache.Change, error) {
		w, row, content, err := sqldriver.ScanText(rows, lead...)
		return func(key textcache.Key, present bool) textcache.Change {
			if !present {
				return textcache.Change{Key: key, Removed: true}
			}
			return textcache.Change{Key: key, Writer: w, Row: row, Content: content}
		}, err
	})
}

// readChanges runs query, a catch-up statement (catchUpSelect, a copy's
// columns, catchUpFrom), for a copy at snapshot since. scan reads one
// row's columns of the copy, after lead, and returns how to make the
// change of the key they were read for (present: a record is stored
// under it).
func readChanges[K ~struct{ Tenant, ID string }, Ch any](ctx context.Context, db sqldriver.RowsQueryer, query, since string,
	scan func(rows *sql.Rows, lead ...any) (func(K, bool) Ch, error)) (catchUp[Ch], error) {
	var cu catchUp[Ch]
	rows, err := db.QueryContext(ctx, query, since)
	if err != nil {
		return cu, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			tenant, id sql.NullString
			present    bool
		)
		change, err := scan(rows, &cu.snap, &cu.pruned, &tenant, &id, &present)
		if err != nil {
			return cu, err
		}
		if !id.Valid {
			continue // the one row of no change
		}
		cu.changes = append(cu.changes, change(K{Tenant: tenant.String, ID: id.String}, present))
	}
	return cu, rows.Err()
}

// load reads every stored record into the cache in one repeatable-read
// transaction, and returns the snapshot they are current at; or, with
// fromSnapshot, the stored text snapshot, when there is one to read (see
// readSnapshot), and reports whether it did. The caller holds mu for
// writing.
func (c *textCache) load(ctx context.Context, db *sqlx.DB, fromSnapshot bool, log *slog.Logger) (string, bool, error) {
	tx, err := db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return "", false, err
	}
	defer func() { _ = tx.Rollback() }()
	// The first statement takes the transaction's snapshot.
	var snap string
	if err := tx.QueryRowContext(ctx, `SELECT pg_current_snapshot()::text`).Scan(&snap); err != nil {
		return "", false, err
	}
	if fromSnapshot {
		if stored, at, tag := readSnapshot(ctx, tx, log); stored != nil {
			stored.Pack()
			c.C = stored
			c.Loads++
			c.Meter.Loaded(at, 0)
			c.Snaps++
			return tag, true, nil
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+sqldriver.TextColumns+`, coalesce(metadata->>'`+memory.SpeakerKey+`', '') FROM memory_records`)
	if err != nil {
		return "", false, err
	}
	defer rows.Close()
	fresh := textcache.New()
	for rows.Next() {
		w, row, content, err := sqldriver.ScanText(rows)
		if err != nil {
			return "", false, err
		}
		fresh.Put(w, row, content)
	}
	if err := rows.Err(); err != nil {
		return "", false, err
	}
	fresh.Pack()
	c.C = fresh
	c.Loads++
	c.Meter.Unstored()
	return snap, false, nil
}
