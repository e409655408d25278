package sqldriver

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/internal/veccache"
)

// ReserveVectors makes room in c for the stored vectors of each writer,
// counted on q: the records whose column (the driver's vector column) is
// not NULL, grouped by identity, with dims the SQL of a vector's
// dimension. A load of the vectors runs it first, in the load's read
// transaction, so that each writer's set is allocated once: grown by
// halves, each growth a copy, the sets' copies were a third of a load
// (BENCHMARKS.md).
func ReserveVectors(ctx context.Context, q RowsQueryer, column, dims string, c *veccache.Cache) error {
	rows, err := q.QueryContext(ctx, `SELECT tenant_id, user_id, agent_id, instance_id, squad_id, session_id, count(*), max(`+dims+`)
		FROM memory_records WHERE `+column+` IS NOT NULL GROUP BY 1, 2, 3, 4, 5, 6`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			w    memory.Identity
			n, d int
		)
		if err := rows.Scan(&w.Tenant, &w.User, &w.Agent, &w.Instance, &w.Squad, &w.Session, &n, &d); err != nil {
			return err
		}
		c.Reserve(w, d, n)
	}
	return rows.Err()
}
