package postgres

import (
	"context"

	"github.com/agentmem/memory"
)

// Schema pieces for the external tests that build an old database by hand.
var (
	MigrationsForTest        = migrations
	CreateSchemaTableForTest = createSchemaTable
)

// PutUncheckedForTest stores recs as Put does, but without validating
// them first, so that tests reach the server's own checks (such as the
// jsonb cast of a document's content) and their classification.
func (d *Driver) PutUncheckedForTest(ctx context.Context, recs []memory.Record) error {
	recs, writes, err := dedupe(recs)
	if err != nil {
		return err
	}
	args, err := putArgs(recs, writes)
	if err != nil {
		return err
	}
	return d.put(ctx, recs, args)
}
