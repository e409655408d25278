package sqldriver

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// storedSwapSQL reads what a compare-and-swap compares; New appends the
// dialect's row lock.
const storedSwapSQL = `SELECT tenant_id, user_id, agent_id, instance_id, squad_id, session_id, version, expires
	FROM memory_records WHERE tenant_id = ? AND id = ?`

// CheckSwap reads the record stored under rec's tenant and id, within the
// swap's transaction on q and under the dialect's row lock, and checks it
// against expect, the version the caller read (0: none live) at time now
// (unix nanoseconds; an expired record is not live). It returns the
// stored version, 0 when there is no row; a row whose identity is not
// rec's fails with driver.HeldByAnother, a version other than expect
// with driver.VersionConflict.
func (s *SQL) CheckSwap(ctx context.Context, q Queryer, rec memory.Record, expect, now int64) (int64, error) {
	var (
		w       memory.Identity
		version int64
		expires sql.NullInt64
	)
	err := q.QueryRowContext(ctx, s.storedSwapSQL, rec.Identity.Tenant, rec.ID).
		Scan(&w.Tenant, &w.User, &w.Agent, &w.Instance, &w.Squad, &w.Session, &version, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		if expect != 0 {
			return 0, driver.VersionConflict(rec.ID, expect, 0)
		}
		return 0, nil
	}
	if err != nil {
		return 0, driver.Fail(ctx, s.d.Kind, err, s.d.Name+": read the stored version")
	}
	if w != rec.Identity {
		return 0, driver.HeldByAnother(rec.ID)
	}
	current := version
	if expires.Valid && expires.Int64 <= now {
		current = 0
	}
	if current != expect {
		return 0, driver.VersionConflict(rec.ID, expect, current)
	}
	return version, nil
}
