package sqldriver

import (
	"context"
	"log/slog"

	"github.com/agentmem/memory/internal/veccache"
)

// LoadVectorSnapshot returns, on q inside a read transaction, the vector
// copy the stored vector snapshot holds and its description, when use
// accepts its description; nil when there is no such snapshot, or it
// cannot be read or decoded, which is logged to log. The snapshot is
// decoded as its chunks arrive. Only SQLite's schema stores vector
// snapshots.
func (s *SQL) LoadVectorSnapshot(ctx context.Context, q Queryer, use func(Snapshot) bool, log *slog.Logger) (*veccache.Cache, Snapshot) {
	c, hdr, err := readSnapshot(ctx, s, q, vectorSnapshots, use, veccache.DecodeStream)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn(s.d.Name+": the stored vector snapshot cannot be read; reading every vector", "err", err)
		}
		return nil, hdr
	}
	return c, hdr
}

// WriteVectorSnapshot stores data, a snapshot of a vector copy current
// at tag, as the store's vector snapshot, as WriteTextSnapshot stores a
// text snapshot.
func (s *SQL) WriteVectorSnapshot(ctx context.Context, inTx func(ctx context.Context, fn func(q Queryer) error) error, tag string, data []byte) error {
	return s.writeSnapshot(ctx, vectorSnapshots, inTx, tag, data)
}
