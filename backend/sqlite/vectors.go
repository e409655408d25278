//go:build cgo

package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// encodeVector returns v as little-endian float32 values, or nil (NULL)
// for no vector.
func encodeVector(v []float32) any {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// decodeVector reverses encodeVector.
func decodeVector(b []byte) ([]float32, error) {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil, fmt.Errorf("vector blob of %d bytes is not a whole number of float32 values", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// checkDims checks the vectors of recs against the store's dimension,
// within the write transaction on conn, and records the dimension when
// the batch holds the store's first vectors. Once known, the dimension is
// cached: it never changes.
func (d *Driver) checkDims(ctx context.Context, conn *sqlx.Conn, recs []memory.Record) error {
	if _, err := backend.BatchDims(recs, 0); err != nil {
		return err
	}
	dims := int(d.dims.Load())
	if dims == 0 {
		var err error
		if dims, err = storedDims(ctx, conn); err != nil {
			return classify(err, "sqlite: read the vector dimension")
		}
	}
	after, err := backend.BatchDims(recs, dims)
	if err != nil {
		return err
	}
	if dims == 0 && after != 0 {
		// Not cached: the transaction may yet roll back. The next write
		// reads the committed value.
		_, err := conn.ExecContext(ctx, `INSERT INTO memory_settings (name, value) VALUES (?, ?)`, settingVectorDims, strconv.Itoa(after))
		return classify(err, "sqlite: record the vector dimension")
	}
	if dims != 0 {
		d.dims.Store(int64(dims))
	}
	return nil
}

// storedDims reads the store's vector dimension; 0 when no vector has
// been stored yet.
func storedDims(ctx context.Context, q sqlx.QueryerContext) (int, error) {
	var s string
	err := sqlx.GetContext(ctx, q, &s, `SELECT value FROM memory_settings WHERE name = ?`, settingVectorDims)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > memory.MaxVectorDims {
		return 0, fmt.Errorf("stored vector dimension %q is not between 1 and %d", s, memory.MaxVectorDims)
	}
	return n, nil
}

// hasVectors reports whether any record of recs carries a vector.
func hasVectors(recs []memory.Record) bool {
	for _, r := range recs {
		if r.Vector != nil {
			return true
		}
	}
	return false
}
