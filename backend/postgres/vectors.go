package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/internal/sqldriver"
)

// vectorLiteral returns v as the text of a real[] literal. Each value is
// written with the fewest digits that read back as the same float32.
func vectorLiteral(v []float32) string {
	var b strings.Builder
	b.Grow(12 * len(v))
	b.WriteByte('{')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
	}
	b.WriteByte('}')
	return b.String()
}

// checkDims checks the vectors of recs against the store's dimension
// within tx, recording it when recs hold the store's first vectors. Two
// transactions recording different first dimensions at once are ordered
// by the settings row's primary key: the second waits for the first,
// inserts nothing, and then reads the winner's dimension.
func (d *Driver) checkDims(ctx context.Context, tx *sqlx.Tx, recs []memory.Record) error {
	dims := int(d.dims.Load())
	if dims == 0 {
		want, err := driver.BatchDims(recs, 0)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO memory_settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`,
			sqldriver.SettingVectorDims, strconv.Itoa(want))
		if err != nil {
			return fail(ctx, err, "postgres: record the vector dimension")
		}
		inserted, err := res.RowsAffected()
		if err != nil {
			return fail(ctx, err, "postgres: record the vector dimension")
		}
		if dims, err = sq.StoredDims(ctx, tx); err != nil {
			return fail(ctx, err, "postgres: read the vector dimension")
		}
		if inserted == 0 {
			// Committed by another transaction: it never changes.
			d.dims.Store(int64(dims))
		}
		if dims != want {
			return driver.DimensionMismatch(want, dims)
		}
		return nil
	}
	_, err := driver.BatchDims(recs, dims)
	return err
}

// knownDims returns the store's committed vector dimension, reading and
// caching it on first use; 0 while no vector has been stored.
func (d *Driver) knownDims(ctx context.Context) (int, error) {
	if n := d.dims.Load(); n != 0 {
		return int(n), nil
	}
	n, err := sq.StoredDims(ctx, d.db)
	if err != nil {
		return 0, fail(ctx, err, "postgres: read the vector dimension")
	}
	d.dims.Store(int64(n))
	return n, nil
}
