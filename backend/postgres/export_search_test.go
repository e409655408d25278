package postgres

import (
	"context"
	"database/sql"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// HNSWIndex is the name of the index Search builds.
const HNSWIndex = hnswIndex

// ExplainSearch returns the plan PostgreSQL chooses for the statement a
// Search with these arguments runs first (EXPLAIN without ANALYZE, one
// line per plan line), under the same index scan parameters. It needs
// pgvector; the store must have a dimension.
func (d *Driver) ExplainSearch(ctx context.Context, q backend.Query, vec []float32, k int) (string, error) {
	dims, err := d.knownDims(ctx)
	if err != nil {
		return "", err
	}
	p, err := d.planSearch(ctx, dims)
	if err != nil {
		return "", err
	}
	if p.exact {
		return "", memory.Errorf(memory.ErrUnimplemented, "no pgvector: %v", p.reason)
	}
	now, err := d.clock.Nanos()
	if err != nil {
		return "", err
	}
	tx, err := d.db.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return "", err
	}
	defer func() { _ = tx.Rollback() }()
	if err := p.setParams(ctx, tx, d.efSearch, k); err != nil {
		return "", err
	}
	query, args := p.searchSQL(q, vec, k, now, !p.indexed)
	var lines []string
	if err := tx.SelectContext(ctx, &lines, "EXPLAIN "+query, args...); err != nil {
		return "", err
	}
	return strings.Join(lines, "\n"), nil
}

// SearchUsesIndex reports whether d's searches set the HNSW index's
// parameters, having found or built the index; false before the first
// search.
func (d *Driver) SearchUsesIndex() bool {
	p := d.searchState().plan.Load()
	return p != nil && p.indexed
}
