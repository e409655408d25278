//go:build !cgo

// Package sqlite is the embedded default storage driver, one SQLite file
// read and written through github.com/mattn/go-sqlite3, which needs cgo.
// This build has no cgo: the package keeps its API, so that programs
// importing it compile, but Open and New fail with memory.ErrUnimplemented.
// Build with CGO_ENABLED=1 and a C compiler for the working driver, or
// store records in files with backend/fs, which needs no cgo.
package sqlite

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// Driver is the cgo build's driver.Driver, Sweeper, Swapper,
// VectorSearcher, TextRanker (and so TextSearcher), Claimer and
// WorkEraser. Without cgo, Open and New never return one,
// and every method of a zero Driver but Close fails with
// memory.ErrUnimplemented.
type Driver struct{}

var (
	_ driver.Driver         = (*Driver)(nil)
	_ driver.Sweeper        = (*Driver)(nil)
	_ driver.Swapper        = (*Driver)(nil)
	_ driver.VectorSearcher = (*Driver)(nil)
	_ driver.TextRanker     = (*Driver)(nil)
	_ driver.Claimer        = (*Driver)(nil)
	_ driver.WorkEraser     = (*Driver)(nil)
)

// errNoCgo is what every call fails with in this build.
func errNoCgo() error {
	return memory.Errorf(memory.ErrUnimplemented, "sqlite: the SQLite driver needs cgo (github.com/mattn/go-sqlite3) and this program was built without it; build with CGO_ENABLED=1 and a C compiler, or use backend/fs")
}

// Open fails with memory.ErrUnimplemented: the SQLite driver needs cgo.
func Open(path string, opt Options) (*Driver, error) { return nil, errNoCgo() }

// New fails with memory.ErrUnimplemented: the SQLite driver needs cgo.
func New(db *sqlx.DB, opt Options) (*Driver, error) { return nil, errNoCgo() }

// Put fails with memory.ErrUnimplemented.
func (d *Driver) Put(context.Context, []memory.Record) error { return errNoCgo() }

// List fails with memory.ErrUnimplemented.
func (d *Driver) List(context.Context, driver.Query) ([]memory.Record, error) {
	return nil, errNoCgo()
}

// Delete fails with memory.ErrUnimplemented.
func (d *Driver) Delete(context.Context, driver.Query) (int64, error) { return 0, errNoCgo() }

// Sweep fails with memory.ErrUnimplemented.
func (d *Driver) Sweep(context.Context) (int64, error) { return 0, errNoCgo() }

// Swap fails with memory.ErrUnimplemented.
func (d *Driver) Swap(context.Context, memory.Record, int64) (int64, error) { return 0, errNoCgo() }

// Search fails with memory.ErrUnimplemented.
func (d *Driver) Search(context.Context, driver.Query, []float32, int) ([]driver.Match, error) {
	return nil, errNoCgo()
}

// RankVector fails with memory.ErrUnimplemented.
func (d *Driver) RankVector(context.Context, driver.Query, []float32, int) ([]driver.RefMatch, error) {
	return nil, errNoCgo()
}

// SearchText fails with memory.ErrUnimplemented.
func (d *Driver) SearchText(context.Context, driver.Query, string, int) ([]driver.Match, error) {
	return nil, errNoCgo()
}

// RankText fails with memory.ErrUnimplemented.
func (d *Driver) RankText(context.Context, driver.Query, string, int) ([]driver.RefMatch, error) {
	return nil, errNoCgo()
}

// WriterRefs fails with memory.ErrUnimplemented.
func (d *Driver) WriterRefs(context.Context, driver.Query, []memory.Identity) ([][]driver.Ref, error) {
	return nil, errNoCgo()
}

// Enqueue fails with memory.ErrUnimplemented.
func (d *Driver) Enqueue(context.Context, []driver.Work) (int, error) { return 0, errNoCgo() }

// Claim fails with memory.ErrUnimplemented.
func (d *Driver) Claim(context.Context, string, int, time.Duration) ([]driver.Lease, error) {
	return nil, errNoCgo()
}

// Renew fails with memory.ErrUnimplemented.
func (d *Driver) Renew(context.Context, driver.Lease, time.Duration) (driver.Lease, error) {
	return driver.Lease{}, errNoCgo()
}

// Complete fails with memory.ErrUnimplemented.
func (d *Driver) Complete(context.Context, driver.Lease) error { return errNoCgo() }

// Release fails with memory.ErrUnimplemented.
func (d *Driver) Release(context.Context, driver.Lease) error { return errNoCgo() }

// EraseWork fails with memory.ErrUnimplemented.
func (d *Driver) EraseWork(context.Context, string, memory.Filter) (int64, error) {
	return 0, errNoCgo()
}

// Close does nothing: there is nothing to release.
func (d *Driver) Close() error { return nil }
