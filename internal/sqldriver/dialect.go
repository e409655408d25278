package sqldriver

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Dialect is how one engine spells the statements the drivers share.
type Dialect struct {
	// Name starts error messages and log records ("sqlite: list records").
	Name string
	// Kind classifies the engine's native errors.
	Kind driver.Classifier
	// Numbered writes placeholders as $1, $2, … (PostgreSQL) instead of ?.
	Numbered bool
	// PinIndex makes a record query name the one identity index it reads,
	// for a planner that does not weigh one partial index against another
	// (SQLite): the most selective field the filter matches on with a
	// value (session, user, squad, agent) is compared plainly, with its partial
	// index's own condition beside it; every other column but tenant_id,
	// and expires, is written with a unary +, which keeps the comparison
	// but keeps the column's index out of the plan. When a query names
	// ids, no identity index is pinned and the primary key is read.
	// Without PinIndex (PostgreSQL) every indexed field the filter
	// matches with a value gets its partial index's condition, and the
	// planner chooses among them by cost — unless the query names ids,
	// when every identity column but tenant_id is compared as an
	// expression (col || ''), which no index holds, and the primary key
	// is read.
	PinIndex bool
	// Array, when set, binds a list of values as one array parameter, so
	// that lists read col = ANY($n::text[]) and one statement text serves
	// every length. Nil writes col IN (?, ?, …), a parameter per value.
	Array func([]string) any
	// LockRow ends a SELECT whose row the transaction then writes: " FOR
	// UPDATE" where writers lock rows (PostgreSQL); empty where the
	// transaction already holds the database's one write lock (SQLite's
	// BEGIN IMMEDIATE).
	LockRow string
	// DecodeVector decodes the vector column of ScanRecord's rows.
	DecodeVector func([]byte) ([]float32, error)
	// Blobs, when set, returns a reader of blobs in place on q, a
	// connection the caller holds inside a read transaction, or nil when
	// q cannot read them so: a stored snapshot's chunks are then read by
	// rowid straight into the snapshot's buffer (SQLite's incremental
	// blob I/O) instead of through database/sql, which hands each chunk
	// over in a fresh copy. Nil (PostgreSQL): through database/sql.
	Blobs func(ctx context.Context, q Queryer) BlobReader
}

// A BlobReader reads the blob in column of the row rowid of table into
// dst, which must be exactly as long as the blob; a blob of another
// length is an error.
type BlobReader func(table, column string, rowid int64, dst []byte) error

// SQL is the shared implementation in one dialect: the statement texts,
// built once by New, and the code that builds and runs them. It is safe
// for concurrent use.
type SQL struct {
	d Dialect

	// Statements in the dialect, with their parameters in this order.
	liveSQL         string // the expiry condition of List, up to its parameter
	readSettingSQL  string // name: reads memory_settings' value
	storedSwapSQL   string // tenant, id: the stored version a swap compares
	recordSchemaSQL string // version: records the schema version

	sweepSQL string // unix nanoseconds: deletes the records expired then
	// RenewSQL, CompleteSQL and ReleaseSQL act on a current claim; see
	// Renew and Settle. RenewSQL binds the lease end, queue, id and token;
	// the other two bind queue, id and token.
	RenewSQL, CompleteSQL, ReleaseSQL string
}

// New returns the shared implementation in dialect d.
func New(d Dialect) *SQL {
	pin := ""
	if d.PinIndex {
		pin = "+"
	}
	return &SQL{
		d:               d,
		sweepSQL:        d.rebind(`DELETE FROM memory_records WHERE expires IS NOT NULL AND expires <= ?`),
		liveSQL:         " AND (" + pin + "expires IS NULL OR " + pin + "expires > ",
		readSettingSQL:  d.rebind(`SELECT value FROM memory_settings WHERE name = ?`),
		storedSwapSQL:   d.rebind(storedSwapSQL + d.LockRow),
		recordSchemaSQL: d.rebind(recordSchemaSQL),
		RenewSQL:        d.rebind(renewSQL),
		CompleteSQL:     d.rebind(completeSQL),
		ReleaseSQL:      d.rebind(releaseSQL),
	}
}

// rebind returns query, written with ? placeholders, in d's placeholders.
// The query must hold no ? but its placeholders.
func (d Dialect) rebind(query string) string {
	if !d.Numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for {
		i := strings.IndexByte(query, '?')
		if i < 0 {
			b.WriteString(query)
			return b.String()
		}
		n++
		b.WriteString(query[:i])
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
		query = query[i+1:]
	}
}

// param writes the placeholder of the next parameter to b and returns
// args with v appended; args holds the statement's parameters so far.
func (s *SQL) param(b *strings.Builder, args []any, v any) []any {
	args = append(args, v)
	if s.d.Numbered {
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(len(args)))
	} else {
		b.WriteByte('?')
	}
	return args
}

// In writes the condition that col is one of vals, which must not be
// empty, and returns args with its parameters appended.
func (s *SQL) In(b *strings.Builder, args []any, col string, vals []string) []any {
	return in(s, b, args, col, vals)
}

func in[T ~string](s *SQL, b *strings.Builder, args []any, col string, vals []T) []any {
	b.WriteString(col)
	if s.d.Array != nil {
		list, ok := any(vals).([]string)
		if !ok {
			list = make([]string, len(vals))
			for i, v := range vals {
				list[i] = string(v)
			}
		}
		b.WriteString(" = ANY(")
		args = s.param(b, args, s.d.Array(list))
		b.WriteString("::text[])")
		return args
	}
	b.WriteString(" IN (")
	for i, v := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		args = s.param(b, args, string(v))
	}
	b.WriteByte(')')
	return args
}

// indexedFields are the identity fields with an index of their own in
// both schemas, most selective first. Each index is partial, holding the
// records that have the field, is led by tenant_id and is ordered by
// created, so the newest records of a scope are read off it in order.
// Instance has none: the levels that match on it also match on session
// or squad, and the squad index carries instance_id, so an instance
// condition is checked on the index entry.
var indexedFields = [...]memory.Field{
	memory.FieldSession, memory.FieldUser, memory.FieldSquad, memory.FieldAgent,
}

// scopeColumns maps identity fields to columns, in memory.Field order.
var scopeColumns = [...]struct {
	f       memory.Field
	col     string
	indexed bool
}{
	{memory.FieldTenant, "tenant_id", false},
	{memory.FieldUser, "user_id", true},
	{memory.FieldAgent, "agent_id", true},
	{memory.FieldInstance, "instance_id", false},
	{memory.FieldSquad, "squad_id", true},
	{memory.FieldSession, "session_id", true},
}

// Where writes q's condition on memory_records to b and returns args with
// its parameters appended. Only fixed column names go into the text;
// every value is a parameter. How the condition leads the planner to an
// index is the dialect's; see Dialect.PinIndex.
func (s *SQL) Where(b *strings.Builder, args []any, q driver.Query) []any {
	f := q.Filter
	var pinned memory.Field // none, unless PinIndex finds one
	if s.d.PinIndex && len(q.IDs) == 0 {
		for _, c := range indexedFields {
			if f.Match.Has(c) && f.Identity.Get(c) != "" {
				pinned = c
				break
			}
		}
	}
	if args == nil {
		args = make([]any, 0, 10+len(q.Kinds)+len(q.IDs))
	}
	first := true
	and := func() {
		if !first {
			b.WriteString(" AND ")
		}
		first = false
	}
	for _, c := range scopeColumns {
		if !f.Match.Has(c.f) {
			continue
		}
		and()
		v := f.Identity.Get(c.f)
		col := c.col
		switch {
		case c.f == memory.FieldTenant || c.f == pinned:
		case s.d.PinIndex:
			col = "+" + col
		case len(q.IDs) > 0:
			// Named ids read the primary key. An expression no index
			// holds keeps the identity indexes out of the plan, which a
			// planner misled by stale statistics would otherwise walk
			// through all of a writer's records.
			col = "(" + col + " || '')"
		}
		b.WriteString(col)
		b.WriteString(" = ")
		args = s.param(b, args, v)
		partial := c.indexed && v != "" && len(q.IDs) == 0 // named ids: no identity index
		if s.d.PinIndex {
			partial = c.f == pinned
		}
		if partial {
			// The partial index's own condition, so the planner may use
			// the index whatever the parameter's value.
			b.WriteString(" AND ")
			b.WriteString(c.col)
			b.WriteString(" <> ''")
		}
	}
	if len(q.Kinds) > 0 {
		and()
		args = in(s, b, args, "kind", q.Kinds)
	}
	if q.Key != "" {
		and()
		b.WriteString("rkey = ")
		args = s.param(b, args, q.Key)
	}
	if len(q.IDs) > 0 {
		and()
		args = in(s, b, args, "id", q.IDs)
	}
	if first {
		// CheckQuery guarantees a tenant condition; keep the SQL valid anyway.
		b.WriteString("TRUE")
	}
	return args
}

// Exec runs a statement that deletes records, naming the call what in its
// errors, and reports how many rows it removed. Each driver has its own:
// SQLite's also drops the deleted records' vectors from its search cache.
type Exec func(ctx context.Context, query string, args []any, what string) (int64, error)

// List is the driver contract's List on db: it checks q, enters g, and
// reads the records matching q that are live at clock's reading, newest
// first (created descending, then id descending), at most q.Limit of them
// when it is set. columns are the driver's select list, which ScanRecord
// reads.
func (s *SQL) List(ctx context.Context, g *Gate, clock memory.Clock, db RowsQueryer, columns string, q driver.Query) ([]memory.Record, error) {
	if err := g.Enter(ctx, s.d.Name, driver.CheckQuery(q)); err != nil {
		return nil, err
	}
	defer g.Leave()
	now, err := clock.Nanos()
	if err != nil {
		return nil, err
	}
	query, args := s.listSQL(columns, q, now)
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, driver.Fail(ctx, s.d.Kind, err, s.d.Name+": list records")
	}
	// A list by ids returns at most one record an id.
	size := q.Limit
	if n := len(q.IDs); n > 0 && (size <= 0 || n < size) {
		size = n
	}
	out, err := Collect(rows, size, s.ScanRecord)
	if err != nil {
		return nil, driver.Fail(ctx, s.d.Kind, err, s.d.Name+": list records")
	}
	if len(q.IDs) > 0 {
		// Ordered here (listSQL): the database's sort would copy each
		// whole row, content and all, into a temporary tree first.
		slices.SortFunc(out, driver.CompareRecords)
		if q.Limit > 0 && len(out) > q.Limit {
			out = out[:q.Limit]
		}
	}
	return out, nil
}

// listSQL returns List's statement and its parameters. A list by ids,
// of at most memory.MaxBatch records, is neither ordered nor limited:
// List orders and cuts it.
func (s *SQL) listSQL(columns string, q driver.Query, now int64) (string, []any) {
	var b strings.Builder
	b.Grow(len(columns) + 256)
	b.WriteString("SELECT ")
	b.WriteString(columns)
	b.WriteString(" FROM memory_records WHERE ")
	args := s.Where(&b, nil, q)
	b.WriteString(s.liveSQL)
	args = s.param(&b, args, now)
	b.WriteString(")")
	if len(q.IDs) > 0 {
		return b.String(), args
	}
	b.WriteString(" ORDER BY created DESC, id DESC")
	if q.Limit > 0 {
		b.WriteString(" LIMIT ")
		args = s.param(&b, args, int64(q.Limit))
	}
	return b.String(), args
}

// Delete is the driver contract's Delete: it checks q, enters g, and
// deletes every record matching q, expired or not, ignoring q.Limit, in
// one statement run by exec, reporting how many it removed.
func (s *SQL) Delete(ctx context.Context, g *Gate, q driver.Query, exec Exec) (int64, error) {
	if err := g.Enter(ctx, s.d.Name, driver.CheckQuery(q)); err != nil {
		return 0, err
	}
	defer g.Leave()
	var b strings.Builder
	b.WriteString("DELETE FROM memory_records WHERE ")
	args := s.Where(&b, nil, q)
	return exec(ctx, b.String(), args, s.d.Name+": delete records")
}

// Sweep is the driver contract's Sweep: it enters g and deletes every
// record expired at clock's reading (its expires at or before it) in one
// statement run by exec, which reads the expiry index only, reporting how
// many it removed.
func (s *SQL) Sweep(ctx context.Context, g *Gate, clock memory.Clock, exec Exec) (int64, error) {
	if err := g.Enter(ctx, s.d.Name, nil); err != nil {
		return 0, err
	}
	defer g.Leave()
	now, err := clock.Nanos()
	if err != nil {
		return 0, err
	}
	return exec(ctx, s.sweepSQL, []any{now}, s.d.Name+": sweep expired records")
}
