package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/sqldriver"
)

// maxAttempts bounds how often Put runs a transaction that lost a
// deadlock or serialization race.
const maxAttempts = 5

// upsertSQL inserts a whole batch given as one array per column, or
// replaces a stored record with the same tenant and id when both carry the
// same identity. When the identities differ the WHERE clause leaves the
// stored row alone and no row changes, so the statement changes fewer rows
// than were sent, which Put reports as driver.HeldByAnother. Arrays keep the
// statement and its 17 parameters the same for every batch size.
//
// A record's version counts its writes, and Put stores each id of a batch
// once (see dedupe), so the version column carries how often the id
// occurred in the batch: a new id starts there and a stored one adds it.
// Vectors travel as the text of real[] literals, because an array of
// arrays cannot hold rows without a vector.
const upsertSQL = `INSERT INTO memory_records
	(id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
	 created, expires, tokens, label, rkey, metadata, content, version, embedding)
SELECT id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
	created, expires, tokens, label, rkey, metadata, content, version, embedding::real[]
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
	$9::bigint[], $10::bigint[], $11::bigint[], $12::text[], $13::text[], $14::jsonb[], $15::text[],
	$16::bigint[], $17::text[])
	AS u (id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
	created, expires, tokens, label, rkey, metadata, content, version, embedding)
` + onConflict

// upsertOneSQL is upsertSQL for a single record, with plain parameters:
// appending one turn is the commonest write, and a VALUES row plans faster
// than unnest.
const upsertOneSQL = `INSERT INTO memory_records
	(id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
	 created, expires, tokens, label, rkey, metadata, content, version, embedding)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::bigint, $10::bigint, $11::bigint, $12, $13, $14::jsonb, $15,
	$16::bigint, $17::text::real[])
` + onConflict

// insertOneSQL inserts a single record unless its tenant holds its id.
const insertOneSQL = `INSERT INTO memory_records
	(id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
	 created, expires, tokens, label, rkey, metadata, content, version, embedding)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::bigint, $10::bigint, $11::bigint, $12, $13, $14::jsonb, $15,
	$16::bigint, $17::text::real[])
ON CONFLICT (tenant_id, id) DO NOTHING`

// onConflict replaces a stored record only when its identity is the new one's.
const onConflict = `ON CONFLICT (tenant_id, id) DO UPDATE SET
	kind = excluded.kind, created = excluded.created, expires = excluded.expires,
	tokens = excluded.tokens, label = excluded.label, rkey = excluded.rkey,
	metadata = excluded.metadata, content = excluded.content, embedding = excluded.embedding,
	version = memory_records.version + excluded.version
WHERE memory_records.user_id = excluded.user_id
	AND memory_records.agent_id = excluded.agent_id AND memory_records.instance_id = excluded.instance_id
	AND memory_records.squad_id = excluded.squad_id AND memory_records.session_id = excluded.session_id`

// selectColumns are the columns scanRecord reads, the vector in binary
// form (vectorColumn).
const selectColumns = sqldriver.RecordColumns + ", " + vectorColumn

// putArgs returns the upsert's 17 column arrays for recs, which CheckPut
// has validated (their times lie within the range of int64 unix
// nanoseconds); writes[i] is how often recs[i]'s id occurred in the batch.
func putArgs(recs []memory.Record, writes []int64) ([]any, error) {
	n := len(recs)
	var (
		text    [13][]string // every text column but metadata, by upsert position
		created = make([]int64, n)
		expires = make([]sql.NullInt64, n) // NULL: never
		tokens  = make([]int64, n)
		meta    = make([]sql.NullString, n) // NULL: none
		vectors = make([]sql.NullString, n) // NULL: none
	)
	for c := range text {
		text[c] = make([]string, n)
	}
	for i, r := range recs {
		id := r.Identity
		for c, v := range [...]string{r.ID, string(r.Kind), id.Tenant, id.User, id.Agent, id.Instance, id.Squad, id.Session, r.Label, r.Key, r.Content} {
			text[c][i] = v
		}
		created[i] = r.Created.UnixNano()
		if !r.Expires.IsZero() {
			expires[i] = sql.NullInt64{Int64: r.Expires.UnixNano(), Valid: true}
		}
		tokens[i] = int64(r.Tokens)
		if len(r.Metadata) > 0 {
			b, err := json.Marshal(r.Metadata)
			if err != nil {
				return nil, memory.Wrap(memory.ErrInvalidArgument, err, "record "+r.ID+" metadata")
			}
			meta[i] = sql.NullString{String: string(b), Valid: true}
		}
		if r.Vector != nil {
			vectors[i] = sql.NullString{String: vectorLiteral(r.Vector), Valid: true}
		}
	}
	return []any{
		pq.StringArray(text[0]), pq.StringArray(text[1]), pq.StringArray(text[2]), pq.StringArray(text[3]),
		pq.StringArray(text[4]), pq.StringArray(text[5]), pq.StringArray(text[6]), pq.StringArray(text[7]),
		pq.Int64Array(created), pq.GenericArray{A: expires}, pq.Int64Array(tokens),
		pq.StringArray(text[8]), pq.StringArray(text[9]), pq.GenericArray{A: meta}, pq.StringArray(text[10]),
		pq.Int64Array(writes), pq.GenericArray{A: vectors},
	}, nil
}

// firstRow returns the first element of each column array putArgs made,
// as plain parameters (NULL where the array holds NULL).
func firstRow(arrays []any) []any {
	row := make([]any, len(arrays))
	for i, a := range arrays {
		switch a := a.(type) {
		case pq.StringArray:
			row[i] = a[0]
		case pq.Int64Array:
			row[i] = a[0]
		case pq.GenericArray:
			switch v := a.A.(type) {
			case []sql.NullInt64:
				row[i] = v[0]
			case []sql.NullString:
				row[i] = v[0]
			}
		}
	}
	return row
}

// scanRecord reads one row of selectColumns; see sqldriver.ScanRecord.
func scanRecord(rows *sql.Rows) (memory.Record, error) { return sq.ScanRecord(rows) }

// recordKey is what record ids are unique under: a tenant and an id.
type recordKey struct{ tenant, id string }

func keyOf(r memory.Record) recordKey { return recordKey{r.Identity.Tenant, r.ID} }

// dedupe returns recs with every tenant's id once, its last occurrence
// kept, sorted by tenant and id, and how often each occurred. Occurrences
// of one id must carry one identity: a batch that disagrees with itself is
// refused as it would be across two batches (driver.HeldByAnother).
func dedupe(recs []memory.Record) ([]memory.Record, []int64, error) {
	last := make(map[recordKey]int, len(recs))
	count := make(map[recordKey]int64, len(recs))
	for i, r := range recs {
		k := keyOf(r)
		if j, ok := last[k]; ok && recs[j].Identity != r.Identity {
			return nil, nil, driver.HeldByAnother(r.ID)
		}
		last[k] = i
		count[k]++
	}
	out := make([]memory.Record, 0, len(last))
	for i, r := range recs {
		if last[keyOf(r)] == i {
			out = append(out, r)
		}
	}
	// One order for every batch: two batches sharing ids lock them in the
	// same order and never deadlock on each other.
	slices.SortFunc(out, func(a, b memory.Record) int {
		return cmp.Or(strings.Compare(a.Identity.Tenant, b.Identity.Tenant), strings.Compare(a.ID, b.ID))
	})
	writes := make([]int64, len(out))
	for i, r := range out {
		writes[i] = count[keyOf(r)]
	}
	return out, writes, nil
}

// Put stores recs in one transaction, all or nothing; see driver.Driver.
// A record whose id its tenant holds with another identity fails the
// whole batch with memory.ErrPermissionDenied. When one tenant's id
// appears more than once the last occurrence is stored; occurrences with
// different identities are refused alike.
func (d *Driver) Put(ctx context.Context, recs []memory.Record) error {
	if err := d.enter(ctx, driver.CheckPut(recs)); err != nil {
		return err
	}
	defer d.gate.Leave()
	if len(recs) == 0 {
		return nil
	}
	recs, writes, err := dedupe(recs)
	if err != nil {
		return err
	}
	if _, err := driver.BatchDims(recs, 0); err != nil {
		return err
	}
	args, err := putArgs(recs, writes)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		err := d.put(ctx, recs, args)
		if err == nil || attempt == maxAttempts || !retryable(err) || ctx.Err() != nil {
			return err
		}
		d.log.Debug("postgres: retrying a put that lost a race", "attempt", attempt, "err", err)
	}
}

// put runs one attempt of Put.
func (d *Driver) put(ctx context.Context, recs []memory.Record, args []any) error {
	tx, err := d.db.BeginTxx(ctx, nil)
	if err != nil {
		return fail(ctx, err, "postgres: begin transaction")
	}
	defer func() { _ = tx.Rollback() }()
	if sqldriver.HasVectors(recs) {
		if err := d.checkDims(ctx, tx, recs); err != nil {
			return err
		}
	}
	query := upsertSQL
	if len(recs) == 1 {
		query, args = upsertOneSQL, firstRow(args)
	}
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return fail(ctx, err, "postgres: insert records")
	}
	changed, err := res.RowsAffected()
	if err != nil {
		return fail(ctx, err, "postgres: insert records")
	}
	if changed != int64(len(recs)) {
		return conflict(ctx, tx, recs)
	}
	if err := tx.Commit(); err != nil {
		return fail(ctx, err, "postgres: commit")
	}
	d.wrote()
	return nil
}

// conflict reports the record of chunk whose id its tenant holds, within
// the failing transaction, with another identity.
func conflict(ctx context.Context, tx *sqlx.Tx, chunk []memory.Record) error {
	tenants, ids := make(pq.StringArray, len(chunk)), make(pq.StringArray, len(chunk))
	for i, r := range chunk {
		tenants[i], ids[i] = r.Identity.Tenant, r.ID
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, tenant_id, user_id, agent_id, instance_id, squad_id, session_id
		FROM memory_records WHERE (tenant_id, id) IN (SELECT * FROM unnest($1::text[], $2::text[]))`, tenants, ids)
	if err == nil {
		defer rows.Close()
		stored := make(map[recordKey]memory.Identity, len(chunk))
		for rows.Next() {
			var id string
			var w memory.Identity
			if rows.Scan(&id, &w.Tenant, &w.User, &w.Agent, &w.Instance, &w.Squad, &w.Session) != nil {
				break
			}
			stored[recordKey{w.Tenant, id}] = w
		}
		for _, r := range chunk {
			if w, ok := stored[keyOf(r)]; ok && w != r.Identity {
				return driver.HeldByAnother(r.ID)
			}
		}
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return memory.Errorf(memory.ErrPermissionDenied, "a record of the batch is held by another identity of its tenant")
}

// List returns the unexpired records matching q, newest first (Created
// descending, then ID descending, byte-wise), at most q.Limit of them when
// it is set; see driver.Driver.
//
// A List that names ids, as a recall reading its winners does, runs
// prepared (preparedSet): its text varies only with the fields, kinds
// and key it names, the ids being one array parameter, and its plan is
// the primary key's whatever the parameters (see sqldriver's Where), so
// planning it once per connection instead of at every run loses nothing
// and saves a round trip and a plan (BENCHMARKS.md).
func (d *Driver) List(ctx context.Context, q driver.Query) ([]memory.Record, error) {
	if len(q.IDs) > 0 {
		return sq.List(ctx, &d.gate, d.clock, &d.prepared, selectColumns, q)
	}
	return sq.List(ctx, &d.gate, d.clock, d.db, selectColumns, q)
}

// Delete removes every record matching q, expired or not, in one
// statement, ignoring q.Limit, and reports how many it removed; see
// driver.Driver.
func (d *Driver) Delete(ctx context.Context, q driver.Query) (int64, error) {
	return sq.Delete(ctx, &d.gate, q, d.exec)
}

// Sweep deletes every record that has expired at the driver's clock (its
// Expires at or before the clock's reading) in one statement, and reports
// how many it removed. It reads the expiry index only.
func (d *Driver) Sweep(ctx context.Context) (int64, error) {
	return sq.Sweep(ctx, &d.gate, d.clock, d.exec)
}

// wrote follows a committed write to the records: it counts it, which
// tells the in-process copies to catch up before they search (see
// logSync.within), and maintains the change log.
func (d *Driver) wrote() {
	d.writes.Add(1)
	d.maintain()
}

func (d *Driver) exec(ctx context.Context, query string, args []any, what string) (int64, error) {
	res, err := d.db.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, fail(ctx, err, what)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fail(ctx, err, what)
	}
	d.wrote()
	return n, nil
}

// where writes q's condition to b, with placeholders numbered from $1,
// and returns its parameters; see sqldriver.SQL.Where.
func where(b *strings.Builder, q driver.Query) []any { return sq.Where(b, nil, q) }
