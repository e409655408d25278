package sqldriver

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agentmem/memory"
)

// RecordColumns are the columns of memory_records that ScanRecord reads
// before the vector, in its order. A driver's select list is
// RecordColumns followed by its vector column.
const RecordColumns = `id, kind, tenant_id, user_id, agent_id, instance_id, squad_id, session_id,
	created, expires, tokens, label, rkey, metadata, content, version`

// ScanRecord reads one row of RecordColumns and the vector column: times
// in unix nanoseconds (a NULL expiry is never), metadata as a JSON object
// (empty or NULL when there is none), the vector as DecodeVector reads it
// (NULL when there is none). It scans into plain values rather than
// through struct reflection: List is the hot read path.
func (s *SQL) ScanRecord(rows *sql.Rows) (memory.Record, error) {
	var (
		r               memory.Record
		kind            string
		meta, vector    sql.RawBytes // decoded before the next row
		created, tokens int64
		expires         sql.NullInt64
		id              = &r.Identity
	)
	if err := rows.Scan(&r.ID, &kind, &id.Tenant, &id.User, &id.Agent, &id.Instance, &id.Squad, &id.Session,
		&created, &expires, &tokens, &r.Label, &r.Key, &meta, &r.Content, &r.Version, &vector); err != nil {
		return memory.Record{}, err
	}
	if vector != nil {
		v, err := s.d.DecodeVector(vector)
		if err != nil {
			return memory.Record{}, memory.Wrap(memory.ErrInvalidArgument, err, s.d.Name+": record "+r.ID+" has a malformed vector")
		}
		r.Vector = v
	}
	r.Kind = memory.Kind(kind)
	r.Created = time.Unix(0, created).UTC()
	if expires.Valid {
		r.Expires = time.Unix(0, expires.Int64).UTC()
	}
	r.Tokens = int(tokens)
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &r.Metadata); err != nil {
			return memory.Record{}, memory.Wrap(memory.ErrInvalidArgument, err, s.d.Name+": record "+r.ID+" has malformed metadata")
		}
		if len(r.Metadata) == 0 {
			r.Metadata = nil
		}
	}
	return r, nil
}

// HasVectors reports whether any record of recs carries a vector.
func HasVectors(recs []memory.Record) bool {
	for _, r := range recs {
		if r.Vector != nil {
			return true
		}
	}
	return false
}

// SettingVectorDims names the memory_settings row holding the dimension
// of every stored vector, fixed by the first vector stored.
const SettingVectorDims = "vector_dims"

// StoredDims reads the store's vector dimension; 0 when no vector has been
// stored yet. Errors come back unclassified.
func (s *SQL) StoredDims(ctx context.Context, q Queryer) (int, error) {
	var v string
	err := q.QueryRowContext(ctx, s.readSettingSQL, SettingVectorDims).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > memory.MaxVectorDims {
		return 0, fmt.Errorf("stored vector dimension %q is not between 1 and %d", v, memory.MaxVectorDims)
	}
	return n, nil
}
