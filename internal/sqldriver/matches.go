package sqldriver

import (
	"context"
	"strings"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// FetchMatches reads on db the records tenant holds under ids, with the
// driver's select list columns (which ScanRecord reads), and pairs them
// with their scores, in the order of ids: the winners of a search ranked
// in the driver's memory. A record deleted since the search ranked it is
// left out. Errors are classified.
func (s *SQL) FetchMatches(ctx context.Context, db RowsQueryer, columns, tenant string, ids []string, scores []float64) ([]driver.Match, error) {
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
		return nil, Fail(ctx, s.d.Kind, err, what)
	}
	recs, err := Collect(rows, 0, s.ScanRecord)
	if err != nil {
		return nil, Fail(ctx, s.d.Kind, err, what)
	}
	byID := make(map[string]memory.Record, len(recs))
	for _, r := range recs {
		byID[r.ID] = r
	}
	out := make([]driver.Match, 0, len(ids))
	for i, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, driver.Match{Record: r, Score: scores[i]})
		}
	}
	return out, nil
}
