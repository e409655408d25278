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
	"github.com/agentmem/memory/backend"
)

// Driver is the cgo build's backend.Driver, Sweeper, Swapper,
// VectorSearcher and Claimer. Without cgo, Open and New never return one,
// and every method of a zero Driver but Close fails with
// memory.ErrUnimplemented.
type Driver struct{}

var (
	_ backend.Driver         = (*Driver)(nil)
	_ backend.Sweeper        = (*Driver)(nil)
	_ backend.Swapper        = (*Driver)(nil)
	_ backend.VectorSearcher = (*Driver)(nil)
	_ backend.Claimer        = (*Driver)(nil)
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
func (d *Driver) List(context.Context, backend.Query) ([]memory.Record, error) {
	return nil, errNoCgo()
}

// Delete fails with memory.ErrUnimplemented.
func (d *Driver) Delete(context.Context, backend.Query) (int64, error) { return 0, errNoCgo() }

// Sweep fails with memory.ErrUnimplemented.
func (d *Driver) Sweep(context.Context) (int64, error) { return 0, errNoCgo() }

// Swap fails with memory.ErrUnimplemented.
func (d *Driver) Swap(context.Context, memory.Record, int64) (int64, error) { return 0, errNoCgo() }

// Search fails with memory.ErrUnimplemented.
func (d *Driver) Search(context.Context, backend.Query, []float32, int) ([]backend.Match, error) {
	return nil, errNoCgo()
}

// Enqueue fails with memory.ErrUnimplemented.
func (d *Driver) Enqueue(context.Context, []backend.Work) (int, error) { return 0, errNoCgo() }

// Claim fails with memory.ErrUnimplemented.
func (d *Driver) Claim(context.Context, string, int, time.Duration) ([]backend.Lease, error) {
	return nil, errNoCgo()
}

// Renew fails with memory.ErrUnimplemented.
func (d *Driver) Renew(context.Context, backend.Lease, time.Duration) (backend.Lease, error) {
	return backend.Lease{}, errNoCgo()
}

// Complete fails with memory.ErrUnimplemented.
func (d *Driver) Complete(context.Context, backend.Lease) error { return errNoCgo() }

// Release fails with memory.ErrUnimplemented.
func (d *Driver) Release(context.Context, backend.Lease) error { return errNoCgo() }

// Close does nothing: there is nothing to release.
func (d *Driver) Close() error { return nil }
