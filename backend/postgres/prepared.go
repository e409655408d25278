package postgres

import (
	"context"
	"database/sql"
	"sync"

	"github.com/jmoiron/sqlx"
)

// preparedSet runs statements prepared, each prepared on its first use
// and kept until close: a prepared statement is planned once per
// connection (and then by a generic plan), not at every run, which saves
// a text search's statements a tenth of a millisecond each. Only
// statements whose texts come from a small, bounded set may go through
// it (the text search's, which never vary, and List's by ids, which vary
// only with the identity fields, kinds and key a query names: a list of
// ids or kinds is one array parameter in this dialect), or it would grow
// without bound.
type preparedSet struct {
	db    *sqlx.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// QueryContext runs query, prepared, with args.
func (p *preparedSet) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	p.mu.Lock()
	stmt := p.stmts[query]
	if stmt == nil {
		var err error
		if stmt, err = p.db.PrepareContext(ctx, query); err != nil {
			p.mu.Unlock()
			return nil, err
		}
		if p.stmts == nil {
			p.stmts = map[string]*sql.Stmt{}
		}
		p.stmts[query] = stmt
	}
	p.mu.Unlock()
	return stmt.QueryContext(ctx, args...)
}

// close releases the prepared statements.
func (p *preparedSet) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, stmt := range p.stmts {
		_ = stmt.Close()
	}
	p.stmts = nil
}
