package sqldriver

import (
	"context"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// FetchMatches reads on db the records tenant holds under the ids of
// found, whose records carry their ids alone, with the driver's select
// list columns (which ScanRecord reads), and returns found with its
// records filled in, in order: the winners of a search ranked in the
// driver's memory. A record deleted since the search ranked it is left
// out. Errors are classified.
func (s *SQL) FetchMatches(ctx context.Context, db RowsQueryer, columns, tenant string, found []driver.Match) ([]driver.Match, error) {
	ids := make([]string, len(found))
	for i, m := range found {
		ids[i] = m.Record.ID
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	b.WriteString(columns)
	b.WriteString(" FROM memory_records WHERE tenant_id = ")
	args := s.param(&b, make([]any, 0, 2+len(ids)), tenant)
	b.WriteString(" AND ")
	args = s.In(&b, args, "id", ids)
	what := s.d.Name + ": read the records found"
	rows, err := db.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, driver.Fail(ctx, s.d.Kind, err, what)
	}
	recs, err := Collect(rows, len(found), s.ScanRecord)
	if err != nil {
		return nil, driver.Fail(ctx, s.d.Kind, err, what)
	}
	byID := make(map[string]memory.Record, len(recs))
	for _, r := range recs {
		byID[r.ID] = r
	}
	out := found[:0]
	for _, m := range found {
		if r, ok := byID[m.Record.ID]; ok {
			m.Record = r
			out = append(out, m)
		}
	}
	return out, nil
}
