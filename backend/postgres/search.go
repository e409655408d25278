package postgres

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

var _ driver.VectorRanker = (*Driver)(nil)

const (
	// hnswIndex names the HNSW index over the embedding column.
	hnswIndex = "memory_records_embedding_halfvec"
	// oldHNSWIndex names the HNSW index of full-precision vectors that
	// earlier versions of this driver built; building hnswIndex drops it.
	oldHNSWIndex = "memory_records_embedding_hnsw"
	// maxHNSWDims is the most dimensions pgvector's HNSW index takes for
	// the halfvec type. A store of more dimensions is searched exactly,
	// by the server.
	maxHNSWDims = 4000
	// maxEfSearch is pgvector's upper bound of hnsw.ef_search.
	maxEfSearch = 1000
	// indexRetry is how long a driver whose HNSW index could not be built
	// searches without it before trying again.
	indexRetry = 10 * time.Minute
)

// Search returns the k unexpired records matching q that carry a vector
// and are nearest to vec by cosine similarity; see driver.VectorSearcher.
// q is applied in full inside the search, so a selective filter never
// shortens the result while more than k records match. Scores are
// computed by the driver in float64 from the stored vectors, and the
// results are ordered by score, then Created and ID descending.
//
// # In the process
//
// With Options.InProcessVectors the search runs in the driver's process,
// exactly, over a copy of every stored vector (internal/veccache, as the
// SQLite driver's), grouped by writer so that only the vectors of the
// writers q's filter matches are scored, with kinds, key, ids and expiry
// applied inside the search. The first search of a driver loads the copy
// in one repeatable-read transaction; every search first reads the
// records any process added, replaced or deleted since, from the change
// log the text cache catches up from (textlog.go), one prepared
// statement; the copy is loaded again only when the log was pruned past
// it. The k winners are then read from the database, and one deleted by
// another process in between is left out. pgvector is not used, and the
// rest of this description does not apply.
//
// # With pgvector
//
// When the server has the pgvector extension (0.7 or newer for the
// index; 0.8 or newer for iterative index scans), the search runs in the
// server. The first search of a driver whose store has a dimension D (1
// to 4000) creates, once per database, the extension (CREATE EXTENSION
// IF NOT EXISTS vector) and the partial expression index
//
//	CREATE INDEX memory_records_embedding_halfvec ON memory_records
//		USING hnsw ((l2_normalize(embedding::vector(D))::halfvec(D)) halfvec_ip_ops)
//		WHERE embedding IS NOT NULL
//
// in one transaction holding the migration lock (pg_advisory_xact_lock
// with AdvisoryLockKey), so replicas do not race; the same transaction
// drops memory_records_embedding_hnsw, the full-precision index of
// earlier versions, and analyses memory_records, whose statistics the
// planner needs to read the index at all. The index holds each vector scaled to unit length,
// in half precision: for unit vectors the inner product orders as cosine
// similarity does, it is cheaper to compute, and unit components always
// fit half precision (whose largest value is 65504) whatever the stored
// vector's scale. Half precision halves the graph's pages, which makes
// the graph walk about a quarter faster than over full-precision vectors
// at equal recall (BENCHMARKS.md); it changes only which candidates the
// walk finds, never the scores, which the driver computes from the
// stored float32 vectors.
//
// On an empty or small table that takes moments, and later inserts
// maintain the index; on a large table the first search builds it over
// every stored vector, which takes minutes and blocks writes to
// memory_records meanwhile (100,000 vectors of 384 dimensions: about a
// minute on two cores with maintenance_work_mem = 1GB; with the default
// 64MB the graph spills to disk and takes several times longer). Run one
// search at deployment time, with a generous deadline, to build it ahead
// of traffic: a search whose context ends during the build rolls it
// back. A build that fails otherwise (for instance for a role that does
// not own the table) is logged as a warning, and the driver searches
// without the index, retrying the build every ten minutes.
//
// The graph walk is bound by memory latency: a server should hold the
// index in shared_buffers, with its shared memory in huge pages (see
// BENCHMARKS.md for what they save).
//
// Each search is one statement, outside any explicit transaction, that
// asks for the k rows nearest the query among those q matches. The index
// scan's parameters travel with it: the query vector comes from a
// subquery that first sets hnsw.ef_search to max(Options.EfSearch, 2k)
// (at most 1000; DefaultEfSearch is 60) and hnsw.iterative_scan with
// set_config(..., true), which lasts only for the statement's own
// transaction. The executor computes that subquery before the index scan
// reads its first tuple, which is when pgvector reads both settings; the
// connection goes back to the pool as it came. That saves the three
// round trips of BEGIN, SET LOCAL and COMMIT. The planner, which runs
// before the subquery, costs the index at the connection's own
// hnsw.ef_search, and chooses between the HNSW index (an approximate
// search, for broad scopes) and the scope's own indexes (an exact search
// of a narrow scope, such as one session).
//
// A filter may reject most of the graph walk's candidates, leaving fewer
// than k rows while more are left. A search then runs again with
// pgvector's iterative scan (0.8 and newer), which walks on in batches
// until it has k rows or has passed hnsw.max_scan_tuples candidates, and
// after that, if still short, exactly, with no index: a narrow filter
// costs time, never results. The first statement scans iteratively only
// for a scope that came up short before without (the driver remembers
// up to 4096 such scopes): an iterative scan costs about an eighth more
// than a plain walk, and returns the same rows whenever the walk holds k
// of them (BENCHMARKS.md), as it does for a scope that makes up most of
// the indexed records.
//
// Among records at one distance, which of them the index yields is its
// own choice. Without the index (more than 4000 dimensions, pgvector
// older than 0.7, or while it cannot be built) the server computes every
// cosine distance in the scope.
//
// # Without pgvector
//
// When the extension cannot be created (not installed on the server, or
// the role may not create it), the driver logs a warning once and
// searches exactly: it reads the id, creation time and vector of every
// record in the scope, scores them, and reads the k best records whole,
// in one snapshot. That is correct but slow for large scopes. The
// decision holds for the driver's lifetime; open a new driver after
// installing pgvector.
//
// Search fails with memory.ErrInvalidArgument when vec's dimension is
// not the store's (an empty store, which has none, returns nothing), and
// with memory.ErrClosed after Close.
func (d *Driver) Search(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.Match, error) {
	if err := d.enter(ctx, driver.CheckSearch(q, vec, k)); err != nil {
		return nil, err
	}
	defer d.gate.Leave()
	dims, err := d.knownDims(ctx)
	if err != nil {
		return nil, err
	}
	if dims == 0 {
		return nil, nil
	}
	if len(vec) != dims {
		return nil, driver.DimensionMismatch(len(vec), dims)
	}
	if d.inProc {
		ranked, err := d.rankInProcess(ctx, q, vec, k)
		if err != nil || len(ranked) == 0 {
			return nil, err
		}
		found := make([]driver.Match, len(ranked))
		for i, m := range ranked {
			found[i] = driver.Match{Record: memory.Record{ID: m.Ref.ID}, Score: m.Score}
		}
		return sq.FetchMatches(ctx, &d.prepared, selectColumns, q.Filter.Identity.Tenant, found)
	}
	p, err := d.planSearch(ctx, dims)
	if err != nil {
		return nil, err
	}
	now, err := d.clock.Nanos()
	if err != nil {
		return nil, err
	}
	if !p.exact {
		return d.searchInServer(ctx, p, q, vec, k, now)
	}
	// Repeatable read: the exact search's two reads see one snapshot.
	tx, err := d.db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, fail(ctx, err, "postgres: begin search")
	}
	defer func() { _ = tx.Rollback() }()
	out, err := searchInGo(ctx, tx, q, vec, k, now)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fail(ctx, err, "postgres: commit search")
	}
	return out, nil
}

// RankVector is Search answering each match's driver.Ref in place of its
// record (driver.VectorRanker). With Options.InProcessVectors it reads
// no record: the Refs come from the vector copy, and a winner deleted by
// another process since the copy's catch-up is still among them.
// Without, it is Search, each record reduced to its Ref.
func (d *Driver) RankVector(ctx context.Context, q driver.Query, vec []float32, k int) ([]driver.RefMatch, error) {
	if !d.inProc {
		found, err := d.Search(ctx, q, vec, k)
		if err != nil {
			return nil, err
		}
		out := make([]driver.RefMatch, len(found))
		for i, m := range found {
			out[i] = driver.RefMatch{Ref: driver.RefOf(m.Record), Score: m.Score}
		}
		return out, nil
	}
	if err := d.enter(ctx, driver.CheckSearch(q, vec, k)); err != nil {
		return nil, err
	}
	defer d.gate.Leave()
	dims, err := d.knownDims(ctx)
	if err != nil || dims == 0 {
		return nil, err
	}
	if len(vec) != dims {
		return nil, driver.DimensionMismatch(len(vec), dims)
	}
	return d.rankInProcess(ctx, q, vec, k)
}

// searchPlan is how a driver searches a store of dims dimensions.
type searchPlan struct {
	dims int
	// exact: pgvector is unavailable; the driver scores every candidate.
	exact bool
	// reason is why pgvector is unavailable, for the warning.
	reason error
	// indexed: the HNSW index exists; searches set its parameters.
	indexed bool
	// iterative: pgvector has hnsw.iterative_scan (0.8 and newer).
	iterative bool
	// vecType is the vector type with the store's dimension, qualified
	// by the extension's schema; distOp is the cosine distance operator,
	// likewise qualified; indexed is the expression the index holds and
	// that the approximate search orders by, with halfType (the halfvec
	// type of the store's dimension) and ipOp (the negative inner product
	// operator). All come from the catalog, quoted, and dims.
	vecType, distOp, indexExpr, halfType, ipOp string
	// retryAt, when not zero, is when to try building the index again.
	retryAt time.Time
}

// current reports whether p serves a store of dims dimensions now.
func (p *searchPlan) current(dims int, now time.Time) bool {
	return p != nil && p.dims == dims && (p.retryAt.IsZero() || now.Before(p.retryAt))
}

// searchState is a driver's vector search state: its plan, decided on
// the first search, and the one-time warning when pgvector is missing.
type searchState struct {
	once      sync.Once
	sem       chan struct{} // held while a plan is decided
	plan      atomic.Pointer[searchPlan]
	warnExact sync.Once
	short     shortScopes
}

// searchState returns d's vector search state, made ready on first use.
func (d *Driver) searchState() *searchState {
	st := &d.search
	st.once.Do(func() { st.sem = make(chan struct{}, 1) })
	return st
}

// planSearch returns the plan for a store of dims dimensions, deciding it
// (and creating the extension and index) on first use; one search at a
// time decides while the others wait, each within its own context.
func (d *Driver) planSearch(ctx context.Context, dims int) (*searchPlan, error) {
	st := d.searchState()
	old := st.plan.Load()
	if old.current(dims, time.Now()) {
		return old, nil
	}
	select {
	case st.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-st.sem }()
	old = st.plan.Load()
	if old.current(dims, time.Now()) {
		return old, nil
	}
	p, err := d.preparePlan(ctx, dims)
	if err != nil {
		if old == nil || old.dims != dims || ctx.Err() != nil {
			return nil, err
		}
		// A retry of the index build that could not even start: keep
		// searching as before, and try again later.
		d.log.Warn("postgres: cannot retry building the vector index", "err", err)
		again := *old
		again.retryAt = time.Now().Add(indexRetry)
		p = &again
	}
	st.plan.Store(p)
	if p.exact {
		st.warnExact.Do(func() {
			d.log.Warn("postgres: the pgvector extension is not available; vector search is exact, computed by the driver over every record of the scope, and slow on large scopes",
				"err", p.reason)
		})
	}
	return p, nil
}

// vectorCatalog is what the catalog says of pgvector and the index.
type vectorCatalog struct {
	schema  sql.NullString // the extension's schema; NULL when not installed
	version sql.NullString // the extension's version
	index   sql.NullBool   // whether the index is valid; NULL when it does not exist
}

func readVectorCatalog(ctx context.Context, q sqlx.QueryerContext) (vectorCatalog, error) {
	var c vectorCatalog
	err := q.QueryRowxContext(ctx, `SELECT n.nspname, e.extversion,
			(SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass($1))
		FROM (SELECT 1) AS one
		LEFT JOIN (pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace) ON e.extname = 'vector'`,
		hnswIndex).Scan(&c.schema, &c.version, &c.index)
	return c, err
}

// atLeast reports whether the extension's version is at least major.minor.
func (c vectorCatalog) atLeast(major, minor int) bool {
	parts := strings.SplitN(c.version.String, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// indexable reports whether an HNSW index can serve a store of dims
// dimensions with this version of pgvector: halfvec and l2_normalize
// came in 0.7.
func (c vectorCatalog) indexable(dims int) bool {
	return dims >= 1 && dims <= maxHNSWDims && c.atLeast(0, 7)
}

// plan returns the pgvector plan for dims dimensions.
func (c vectorCatalog) plan(dims int, indexed bool) *searchPlan {
	schema := pq.QuoteIdentifier(c.schema.String)
	d := strconv.Itoa(dims)
	p := &searchPlan{
		dims:      dims,
		indexed:   indexed,
		iterative: c.atLeast(0, 8),
		vecType:   schema + ".vector(" + d + ")",
		distOp:    "OPERATOR(" + schema + ".<=>)",
		halfType:  schema + ".halfvec(" + d + ")",
		ipOp:      "OPERATOR(" + schema + ".<#>)",
	}
	p.indexExpr = schema + ".l2_normalize(embedding::" + p.vecType + ")::" + p.halfType
	return p
}

// preparePlan decides how to search a store of dims dimensions. When
// the catalog shows pgvector and a valid index (or a dimension no index
// takes), it takes no lock. Otherwise it creates the extension and the
// index under the migration lock; another replica holding the lock is
// waited for, and what it created is then found in place.
func (d *Driver) preparePlan(ctx context.Context, dims int) (*searchPlan, error) {
	cat, err := readVectorCatalog(ctx, d.db)
	if err != nil {
		return nil, fail(ctx, err, "postgres: read the pgvector catalog")
	}
	if cat.schema.Valid {
		if !cat.indexable(dims) {
			return cat.plan(dims, false), nil
		}
		if cat.index.Valid && cat.index.Bool {
			return cat.plan(dims, true), nil
		}
	}

	tx, err := d.db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fail(ctx, err, "postgres: begin creating the vector index")
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, AdvisoryLockKey); err != nil {
		return nil, fail(ctx, err, "postgres: take the migration lock")
	}
	if _, err := tx.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
		if ctx.Err() != nil || !extensionUnavailable(err) {
			return nil, fail(ctx, err, "postgres: create the pgvector extension")
		}
		// The failed statement aborted the transaction; nothing else
		// runs in it, and the deferred rollback releases the lock.
		return &searchPlan{dims: dims, exact: true, reason: err}, nil
	}
	if cat, err = readVectorCatalog(ctx, tx); err != nil {
		return nil, fail(ctx, err, "postgres: read the pgvector catalog")
	}
	if !cat.schema.Valid {
		return nil, memory.Errorf(memory.ErrClosed, "postgres: the pgvector extension is missing right after CREATE EXTENSION")
	}
	indexed := cat.index.Valid && cat.index.Bool
	var retryAt time.Time
	switch {
	case !cat.indexable(dims) || indexed:
	case cat.index.Valid: // present but invalid, as a failed CREATE INDEX CONCURRENTLY leaves it
		d.log.Warn("postgres: the vector index " + hnswIndex + " is invalid and is not used; drop it to have it rebuilt")
		retryAt = time.Now().Add(indexRetry)
	default:
		indexed, retryAt, err = d.buildIndex(ctx, tx, cat.plan(dims, false), cat.schema.String)
		if err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fail(ctx, err, "postgres: commit the vector index")
	}
	p := cat.plan(dims, indexed)
	p.retryAt = retryAt
	return p, nil
}

// buildIndex creates the HNSW index within tx, behind a savepoint: when
// the build fails for a reason a retry might not cure, it is logged and
// rolled back, and the search goes on without the index until retryAt.
func (d *Driver) buildIndex(ctx context.Context, tx *sqlx.Tx, p *searchPlan, schema string) (indexed bool, retryAt time.Time, err error) {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT agentmem_vector_index`); err != nil {
		return false, time.Time{}, fail(ctx, err, "postgres: create the vector index")
	}
	start := time.Now()
	ddl := `CREATE INDEX IF NOT EXISTS ` + hnswIndex + ` ON memory_records USING hnsw ((` + p.indexExpr + `) ` +
		pq.QuoteIdentifier(schema) + `.halfvec_ip_ops) WHERE embedding IS NOT NULL`
	_, err = tx.ExecContext(ctx, ddl)
	if err == nil {
		_, err = tx.ExecContext(ctx, `DROP INDEX IF EXISTS `+oldHNSWIndex)
	}
	if err == nil {
		d.log.Info("postgres: built the vector index", "index", hnswIndex, "dims", p.dims, "duration", time.Since(start))
		if err := d.analyze(ctx, tx); err != nil {
			return false, time.Time{}, err
		}
		return true, time.Time{}, nil
	}
	var pe *pq.Error
	if ctx.Err() != nil || !errors.As(err, &pe) {
		return false, time.Time{}, fail(ctx, err, "postgres: create the vector index")
	}
	if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT agentmem_vector_index`); rerr != nil {
		return false, time.Time{}, fail(ctx, rerr, "postgres: create the vector index")
	}
	if pe.Code == "42P07" || pe.Code == "23505" { // duplicate_table, unique_violation: created meanwhile by another
		return true, time.Time{}, nil
	}
	d.log.Warn("postgres: cannot build the vector index; searching without it", "index", hnswIndex, "err", err, "retry_in", indexRetry)
	return false, time.Now().Add(indexRetry), nil
}

// analyze gathers the statistics of memory_records within tx, right
// after the index build, behind a savepoint: until they exist the
// planner reads no index for a search (a store filled moments ago, which
// autovacuum analyses only after its next nap, a minute by default):
// 100,000 vectors, 350 ms a search without them, 11 ms with
// (BENCHMARKS.md). ANALYZE samples a bounded number of rows, a fraction
// of a second beside the build. A failure is logged, and the index kept.
func (d *Driver) analyze(ctx context.Context, tx *sqlx.Tx) error {
	if _, err := tx.ExecContext(ctx, `SAVEPOINT agentmem_analyze`); err != nil {
		return fail(ctx, err, "postgres: analyse memory_records")
	}
	start := time.Now()
	_, err := tx.ExecContext(ctx, `ANALYZE memory_records`)
	if err == nil {
		d.log.Info("postgres: analysed memory_records for the vector index", "duration", time.Since(start))
		return nil
	}
	if ctx.Err() != nil {
		return fail(ctx, err, "postgres: analyse memory_records")
	}
	if _, rerr := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT agentmem_analyze`); rerr != nil {
		return fail(ctx, rerr, "postgres: analyse memory_records")
	}
	d.log.Warn("postgres: cannot analyse memory_records after building the vector index; searches may not read it until autovacuum does", "err", err)
	return nil
}

// extensionUnavailable reports whether a failed CREATE EXTENSION means
// that this server or role cannot have pgvector: not installed, not
// loadable, not permitted, or a read-only server.
func extensionUnavailable(err error) bool {
	var pe *pq.Error
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "0A000", // feature_not_supported: extension "vector" is not available
		"58P01", // undefined_file: its control file or library is missing
		"42501", // insufficient_privilege: must be superuser to create it
		"42704", // undefined_object
		"25006": // read_only_sql_transaction: a hot standby
		return true
	}
	return false
}

// DefaultEfSearch is the least hnsw.ef_search a search sets when
// Options.EfSearch is zero: the size of the candidate list the HNSW graph
// walk keeps, which a search's time grows about in proportion to. It is
// chosen for data shaped like text embeddings, where it finds about 97 of
// the exact search's top 10 in 100 (pgvector's own default, 40, about
// 92), at the index's default build parameters (m = 16, ef_construction =
// 64). Data without neighbourhood structure, such as random vectors,
// needs a larger value for the same recall. BENCHMARKS.md has the
// measurements and the search times at each value.
const DefaultEfSearch = 60

// efSearch is the hnsw.ef_search a search for k results sets.
func efSearch(base, k int) int {
	return min(max(base, 2*k), maxEfSearch)
}

// searchForm is the form of a search statement.
type searchForm int

const (
	// formIndex orders by the indexed expression, so that the planner
	// may read the HNSW index, with iterative scans off.
	formIndex searchForm = iota
	// formIterative is formIndex with iterative scans on.
	formIterative
	// formExact orders by an expression no index serves.
	formExact
)

// searchInServer runs the search with pgvector, one statement at a time:
// through the index, with an iterative scan when the scope is known to
// come up short without one (see shortScopes), then, while the rows are
// fewer than k, with an iterative scan, then exactly.
func (d *Driver) searchInServer(ctx context.Context, p *searchPlan, q driver.Query, vec []float32, k int, now int64) ([]driver.Match, error) {
	forms := []searchForm{formExact}
	remember := p.indexed && p.iterative
	var key string
	switch {
	case remember:
		forms = []searchForm{formIndex, formIterative, formExact}
		key = scopeKey(q)
		if d.search.short.short(key, k) {
			forms = forms[1:]
		}
	case p.indexed:
		forms = []searchForm{formIndex, formExact}
	}
	var out []driver.Match
	for _, form := range forms {
		// An index scan stops after ef_search candidates, or with an
		// iterative scan after hnsw.max_scan_tuples, which a selective
		// filter may reject: fewer than k rows may mean more are left.
		query, args := p.searchSQL(q, vec, k, now, d.efSearch, form)
		var err error
		if out, err = queryMatches(ctx, d.db, query, args, vec); err != nil {
			return nil, err
		}
		if len(out) >= k {
			break
		}
		if form == formIndex && remember {
			d.search.short.remember(key, k)
		}
	}
	slices.SortFunc(out, compareMatches)
	return out, nil
}

// searchSQL returns the search statement of the form given and its
// arguments. The index forms order by the indexed distance expression
// alone, so that the planner may read the HNSW index, to a query vector
// given by a subquery that first sets the index scan's parameters (see
// Search): hnsw.ef_search to efSearch(ef, k), a parameter, and, with
// pgvector 0.8 or newer, hnsw.iterative_scan. The exact form orders by an
// expression no index serves, with List order for ties, and sets nothing.
func (p *searchPlan) searchSQL(q driver.Query, vec []float32, k int, now int64, ef int, form searchForm) (string, []any) {
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(selectColumns)
	b.WriteString(" FROM memory_records WHERE ")
	args := where(&b, q)
	args = append(args, now)
	b.WriteString(" AND embedding IS NOT NULL AND (expires IS NULL OR expires > $")
	b.WriteString(itoa(len(args)))
	if form == formExact {
		args = append(args, queryVector(vec))
		b.WriteString(") ORDER BY 1 - (embedding::" + p.vecType + " " + p.distOp + " $" + itoa(len(args)) + "::" + p.vecType)
		b.WriteString(") DESC, created DESC, id DESC LIMIT $")
	} else {
		// The indexed expression, compared with the query scaled to unit
		// length, as the index holds the stored vectors. Iterative scans
		// are set off explicitly, whatever the connection's own setting.
		mode := "off"
		if form == formIterative {
			mode = "relaxed_order"
		}
		args = append(args, queryVector(unit(vec)), strconv.Itoa(efSearch(ef, k)))
		b.WriteString(") ORDER BY " + p.indexExpr + " " + p.ipOp + " (SELECT $" + itoa(len(args)-1) + "::" + p.halfType)
		b.WriteString(" WHERE set_config('hnsw.ef_search', $" + itoa(len(args)) + ", true) IS NOT NULL")
		if p.iterative {
			b.WriteString(" AND set_config('hnsw.iterative_scan', '" + mode + "', true) IS NOT NULL")
		}
		b.WriteString(") LIMIT $")
	}
	args = append(args, int64(k))
	b.WriteString(itoa(len(args)))
	return b.String(), args
}

// queryVector returns vec as the text of a pgvector literal.
func queryVector(vec []float32) string {
	lit := vectorLiteral(vec) // {x,y,...}
	return "[" + lit[1:len(lit)-1] + "]"
}

// queryMatches runs a query of selectColumns and scores its records.
func queryMatches(ctx context.Context, db sqlx.QueryerContext, query string, args []any, vec []float32) ([]driver.Match, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fail(ctx, err, "postgres: search")
	}
	defer rows.Close()
	qn := norm(vec)
	var out []driver.Match
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fail(ctx, err, "postgres: search")
		}
		if len(r.Vector) != len(vec) {
			return nil, badVector(r.ID, len(r.Vector), len(vec))
		}
		out = append(out, driver.Match{Record: r, Score: cosine(vec, qn, r.Vector)})
	}
	if err := rows.Err(); err != nil {
		return nil, fail(ctx, err, "postgres: search")
	}
	return out, nil
}

func badVector(id string, got, want int) error {
	return memory.Errorf(memory.ErrInvalidArgument, "postgres: record %s holds a vector of %d dimensions in a store of %d", id, got, want)
}

// candidate is a record scored by the exact search, before it is read whole.
type candidate struct {
	id      string
	created int64
	score   float64
}

// compareCandidates orders candidates best first: by score descending,
// then List order (created, then id, descending).
func compareCandidates(a, b candidate) int {
	switch {
	case a.score > b.score:
		return -1
	case a.score < b.score:
		return 1
	case a.created != b.created:
		if a.created > b.created {
			return -1
		}
		return 1
	}
	return -strings.Compare(a.id, b.id)
}

// compareMatches orders matches as compareCandidates orders candidates.
func compareMatches(a, b driver.Match) int {
	return compareCandidates(
		candidate{a.Record.ID, a.Record.Created.UnixNano(), a.Score},
		candidate{b.Record.ID, b.Record.Created.UnixNano(), b.Score})
}

// searchInGo is the exact search without pgvector, within tx (a
// repeatable-read snapshot): it scores every candidate of the scope from
// its id, creation time and vector, then reads the k best whole.
func searchInGo(ctx context.Context, tx *sqlx.Tx, q driver.Query, vec []float32, k int, now int64) ([]driver.Match, error) {
	var b strings.Builder
	b.WriteString("SELECT id, created, " + vectorColumn + " FROM memory_records WHERE ")
	args := where(&b, q)
	args = append(args, now)
	b.WriteString(" AND embedding IS NOT NULL AND (expires IS NULL OR expires > $")
	b.WriteString(itoa(len(args)))
	b.WriteString(")")
	best, err := scoreCandidates(ctx, tx, b.String(), args, vec, k)
	if err != nil || len(best) == 0 {
		return nil, err
	}

	ids := make(pq.StringArray, len(best))
	rank := make(map[string]int, len(best))
	for i, c := range best {
		ids[i] = c.id
		rank[c.id] = i
	}
	rows, err := tx.QueryContext(ctx, "SELECT "+selectColumns+" FROM memory_records WHERE tenant_id = $1 AND id = ANY($2::text[])", q.Filter.Identity.Tenant, ids)
	if err != nil {
		return nil, fail(ctx, err, "postgres: read the search results")
	}
	defer rows.Close()
	out := make([]driver.Match, len(best))
	found := 0
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fail(ctx, err, "postgres: read the search results")
		}
		i, ok := rank[r.ID]
		if !ok {
			continue
		}
		out[i] = driver.Match{Record: r, Score: best[i].score}
		found++
	}
	if err := rows.Err(); err != nil {
		return nil, fail(ctx, err, "postgres: read the search results")
	}
	if found != len(best) {
		// The snapshot holds every candidate it just returned.
		return nil, memory.Errorf(memory.ErrConflict, "postgres: %d of %d search results vanished within one snapshot", len(best)-found, len(best))
	}
	return out, nil
}

// scoreCandidates runs query (of id, created, embedding) and returns its
// k best rows, best first.
func scoreCandidates(ctx context.Context, tx *sqlx.Tx, query string, args []any, vec []float32, k int) ([]candidate, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fail(ctx, err, "postgres: search")
	}
	defer rows.Close()
	qn := norm(vec)
	// best collects candidates and is cut back to the k best whenever it
	// fills, which keeps the work near n log k for n candidates.
	limit := max(2*k, 256)
	best := make([]candidate, 0, limit)
	var floor candidate // the k-th best as of the last cut, when full
	full := false
	cut := func() {
		slices.SortFunc(best, compareCandidates)
		best = best[:min(k, len(best))]
		if len(best) == k {
			floor, full = best[k-1], true
		}
	}
	var raw []byte
	for rows.Next() {
		var c candidate
		if err := rows.Scan(&c.id, &c.created, &raw); err != nil {
			return nil, fail(ctx, err, "postgres: search")
		}
		v, err := decodeVector(raw)
		if err != nil {
			return nil, memory.Wrap(memory.ErrInvalidArgument, err, "postgres: record "+c.id+" has a malformed vector")
		}
		if len(v) != len(vec) {
			return nil, badVector(c.id, len(v), len(vec))
		}
		c.score = cosine(vec, qn, v)
		if full && compareCandidates(c, floor) >= 0 {
			continue // no better than the k-th best so far
		}
		best = append(best, c)
		if len(best) == limit {
			cut()
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fail(ctx, err, "postgres: search")
	}
	cut()
	return best, nil
}

// unit returns v scaled to length 1, computed in float64; v is not the
// zero vector (driver.CheckSearch refuses it).
func unit(v []float32) []float32 {
	n := norm(v)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// norm returns the Euclidean length of v in float64.
func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// cosine returns the cosine similarity of q, whose length is qn, and v,
// in float64 and within [-1, 1]; 0 when either is the zero vector.
func cosine(q []float32, qn float64, v []float32) float64 {
	var dot, vv float64
	for i, x := range v {
		y := float64(x)
		dot += float64(q[i]) * y
		vv += y * y
	}
	if qn == 0 || vv == 0 {
		return 0
	}
	return max(-1, min(1, dot/(qn*math.Sqrt(vv))))
}
