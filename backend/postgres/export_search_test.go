package postgres

import (
	"context"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// HNSWIndex is the name of the index Search builds.
const HNSWIndex = hnswIndex

// ExplainSearch returns the plan PostgreSQL chooses for the statement a
// Search with these arguments runs first (EXPLAIN without ANALYZE, one
// line per plan line); the index scan's parameters, which the statement
// sets as it runs, are the connection's own while it is planned. It needs
// pgvector; the store must have a dimension.
func (d *Driver) ExplainSearch(ctx context.Context, q driver.Query, vec []float32, k int) (string, error) {
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
	form := formIndex
	if !p.indexed {
		form = formExact
	}
	query, args := p.searchSQL(q, vec, k, now, d.efSearch, form)
	var lines []string
	if err := d.db.SelectContext(ctx, &lines, "EXPLAIN "+query, args...); err != nil {
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

// ShortScopes returns how many scopes d remembers as coming up short
// without an iterative scan.
func (d *Driver) ShortScopes() int { return d.search.short.len() }

// RememberShort makes d's searches of q for k or more results start with
// an iterative scan, as if such a search had come up short without one.
func (d *Driver) RememberShort(q driver.Query, k int) { d.search.short.remember(scopeKey(q), k) }

// len returns how many scopes are remembered.
func (s *shortScopes) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.least)
}
