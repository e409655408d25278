package sqldriver

import (
	"database/sql"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/textcache"
)

// TextColumns are the columns of memory_records that ScanText reads, in
// its order: what a text cache keeps of a record, and its content. The
// select list follows them with the dialect's expression of the record's
// speaker (Metadata[memory.SpeakerKey], empty for none), which ScanText
// reads last.
const TextColumns = `id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
	created, expires, rkey, content`

// ScanText reads one row of TextColumns and the speaker, after the
// columns before them into lead: the record's writer, its textcache.Row
// and its content.
func ScanText(rows *sql.Rows, lead ...any) (memory.Identity, *textcache.Row, string, error) {
	var (
		w       memory.Identity
		row     = new(textcache.Row)
		kind    string
		expires sql.NullInt64
		content string
	)
	dest := append(lead, &row.ID, &kind, &w.Tenant, &w.User, &w.Agent, &w.Instance, &w.Squad, &w.Session,
		&row.Created, &expires, &row.Key, &content, &row.Speaker)
	if err := rows.Scan(dest...); err != nil {
		return w, nil, "", err
	}
	row.Kind = memory.Kind(kind)
	row.Asks = driver.Asks(content)
	if expires.Valid {
		row.Expires = expires.Int64
	}
	return w, row, content, nil
}
