package postgres

import (
	"context"
	"database/sql"
	"sync"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/sqldriver"
	"github.com/agentmem/memory/internal/veccache"
)

// vectorCopy holds the store's vectors in the process for exact search
// (veccache.Cache), when Options.InProcessVectors asks for it. It is
// loaded from the database on the first vector search, caught up with
// the changes of every process from the change log before every search,
// exactly as the text cache is (textlog.go), and loaded again when the
// log was pruned past it.
type vectorCopy struct {
	mu    sync.RWMutex
	vecs  *veccache.Cache // nil until loaded
	sync  logSync[veccache.Change]
	loads int // how many times the copy was loaded, for tests
}

// asksOf is driver.Asks of the column content, computed by the server:
// the content ends with a question mark once the characters Asks passes
// over are trimmed (rtrim and right count characters, not bytes). NULL
// content (a removed key) asks nothing.
func asksOf(content string) string {
	return `coalesce(right(rtrim(` + content + `, ' ' || chr(9) || chr(13) || chr(10) || '"''”’)]'), 1) IN ('?', '？'), false)`
}

// vectorColumnsOf are what the copy reads of the records r, which may be
// NULL (a removed key): every column but expires and the vector is made
// non-NULL.
var vectorColumnsOf = `coalesce(r.id, ''), coalesce(r.kind, ''), coalesce(r.tenant_id, ''), coalesce(r.user_id, ''),
	coalesce(r.agent_id, ''), coalesce(r.instance_id, ''), coalesce(r.squad_id, ''), coalesce(r.session_id, ''),
	coalesce(r.created, 0), r.expires, coalesce(r.rkey, ''), coalesce(r.metadata->>'` + memory.SpeakerKey + `', ''), ` +
	asksOf("r.content") + `, array_send(r.embedding)`

// vectorCatchUpSQL is catchUpSQL reading what the vector copy holds of
// each changed record.
var vectorCatchUpSQL = catchUpSelect + vectorColumnsOf + catchUpFrom

// scanVector reads one row of vectorColumnsOf, after the columns before
// them into lead: the record's writer, its veccache.Row and its vector
// (nil when it has none).
func scanVector(rows *sql.Rows, lead ...any) (memory.Identity, veccache.Row, []float32, error) {
	var (
		w       memory.Identity
		row     veccache.Row
		kind    string
		expires sql.NullInt64
		blob    []byte
	)
	dest := append(lead, &row.ID, &kind, &w.Tenant, &w.User, &w.Agent, &w.Instance, &w.Squad, &w.Session,
		&row.Created, &expires, &row.Key, &row.Speaker, &row.Asks, &blob)
	if err := rows.Scan(dest...); err != nil {
		return w, row, nil, err
	}
	row.Kind = memory.Kind(kind)
	if expires.Valid {
		row.Expires = expires.Int64
	}
	if blob == nil {
		return w, row, nil, nil
	}
	vec, err := decodeVector(blob)
	if err != nil {
		return w, row, nil, memory.Wrap(memory.ErrInvalidArgument, err, "postgres: record "+row.ID+" has a malformed vector")
	}
	return w, row, vec, nil
}

// init readies d's vector copy.
func (c *vectorCopy) init(d *Driver) {
	c.sync = logSync[veccache.Change]{
		mu:     &c.mu,
		writes: &d.writes,
		loaded: func() bool { return c.vecs != nil },
		read: func(ctx context.Context, since string) (catchUp[veccache.Change], error) {
			return readVectorChanges(ctx, &d.prepared, since)
		},
		apply: func(changes []veccache.Change) {
			for _, ch := range changes {
				c.vecs.Apply(ch)
			}
		},
		load: func(ctx context.Context, _ bool) (string, bool, error) {
			snap, err := c.load(ctx, d.db)
			if err == nil {
				d.log.Debug("postgres: loaded vectors for search", "snapshot", snap, "vectors", c.vecs.Len())
			}
			return snap, false, err
		},
		fail: func(ctx context.Context, err error, read bool) error {
			if read {
				return fail(ctx, err, "postgres: read the changed vectors")
			}
			return fail(ctx, err, "postgres: load vectors")
		},
	}
}

// readVectorChanges runs vectorCatchUpSQL for a copy at snapshot since.
// A record stored without a vector is a removal from the copy.
func readVectorChanges(ctx context.Context, db sqldriver.RowsQueryer, since string) (catchUp[veccache.Change], error) {
	return readChanges(ctx, db, vectorCatchUpSQL, since, func(rows *sql.Rows, lead ...any) (func(veccache.Key, bool) veccache.Change, error) {
		w, row, vec, err := scanVector(rows, lead...)
		return func(key veccache.Key, present bool) veccache.Change {
			return veccache.Change{Key: key, Removed: !present, Writer: w, Row: row, Vector: vec}
		}, err
	})
}

// load reads every stored vector into the copy in one repeatable-read
// transaction, and returns the snapshot they are current at. The caller
// holds mu for writing.
func (c *vectorCopy) load(ctx context.Context, db *sqlx.DB) (string, error) {
	tx, err := db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return "", err
	}
	defer func() { _ = tx.Rollback() }()
	// The first statement takes the transaction's snapshot.
	var snap string
	if err := tx.QueryRowContext(ctx, `SELECT pg_current_snapshot()::text`).Scan(&snap); err != nil {
		return "", err
	}
	fresh := &veccache.Cache{}
	if err := sqldriver.ReserveVectors(ctx, tx, "embedding", "array_length(embedding, 1)", fresh); err != nil {
		return "", err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+vectorColumnsOf+` FROM memory_records r WHERE r.embedding IS NOT NULL`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		w, row, vec, err := scanVector(rows)
		if err != nil {
			return "", err
		}
		fresh.Put(w, row, vec)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	c.vecs = fresh
	c.loads++
	return snap, nil
}

// rankInProcess is RankVector over the vector copy brought up to date,
// for a query vector of the store's dimension, once the gate admitted
// the call. (The writes that grow the change log prune it.)
func (d *Driver) rankInProcess(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.RefMatch, error) {
	now, err := d.clock.Nanos()
	if err != nil {
		return nil, err
	}
	var found []driver.RefMatch
	if err := d.vc.sync.within(ctx, func() { found, err = d.vc.vecs.Search(q, vec, k, now) }); err != nil {
		return nil, err
	}
	return found, err
}
