package postgres

import (
	"context"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

var _ driver.TextRanker = (*Driver)(nil)

// SearchText returns the k live records matching q whose content best
// matches text; see driver.TextSearcher. It ranks with the library's
// lexical engine over an in-memory copy of the store's analysed texts,
// as every driver does, so rankings agree across drivers: the first text
// search of a driver loads it, and every search first reads the records
// that any process added, replaced or deleted since, from the change log
// the schema's triggers keep (see textlog.go). The indexes of the writers
// q's filter matches are searched, with kinds, key, ids and expiry
// applied to each candidate inside the search; the k winners are then
// read from the database. A winner deleted by another process in between
// is left out. After a search, the change log is pruned and a snapshot
// of the texts stored in the background when either is due (see
// textprune.go and textsnapshot.go).
func (d *Driver) SearchText(ctx context.Context, q driver.Query, text string, k int) ([]driver.Match, error) {
	return sq.SearchText(ctx, &d.ts, q, text, k)
}

// RankText is SearchText without reading the winners from the database:
// each match is the record's Ref, from the in-memory texts; see
// driver.TextRanker.
func (d *Driver) RankText(ctx context.Context, q driver.Query, text string, k int) ([]driver.RefMatch, error) {
	return sq.RankText(ctx, &d.ts, q, text, k)
}

// WriterRefs returns the Refs of the records of each of writers that q
// matches, from the in-memory texts brought up to date as for a search;
// see driver.TextRanker.
func (d *Driver) WriterRefs(ctx context.Context, q driver.Query, writers []memory.Identity) ([][]driver.Ref, error) {
	return sq.WriterRefs(ctx, &d.ts, q, writers)
}
