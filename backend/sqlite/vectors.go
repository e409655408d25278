//go:build cgo

package sqlite

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/sqldriver"
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
	if _, err := driver.BatchDims(recs, 0); err != nil {
		return err
	}
	dims := int(d.dims.Load())
	if dims == 0 {
		var err error
		if dims, err = sq.StoredDims(ctx, conn); err != nil {
			return classify(err, "sqlite: read the vector dimension")
		}
	}
	after, err := driver.BatchDims(recs, dims)
	if err != nil {
		return err
	}
	if dims == 0 && after != 0 {
		// Not cached: the transaction may yet roll back. The next write
		// reads the committed value.
		_, err := conn.ExecContext(ctx, `INSERT INTO memory_settings (name, value) VALUES (?, ?)`, sqldriver.SettingVectorDims, strconv.Itoa(after))
		return classify(err, "sqlite: record the vector dimension")
	}
	if dims != 0 {
		d.dims.Store(int64(dims))
	}
	return nil
}
