package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/fs"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/sqlite"
)

// drivers are the storage drivers a conversation's store can use, by name.
var drivers = map[string]struct {
	about string
	open  opener
}{
	"inmem":  {"a fresh in-memory driver per conversation", openInmem},
	"sqlite": {"a fresh SQLite file per conversation, in a temporary directory removed afterwards", openSQLite},
	"fs":     {"a fresh fs log per conversation, in a temporary directory removed afterwards", openFS},
}

var _ textStore = (*backend.Store)(nil)

// openInmem returns a store over a fresh in-memory driver.
func openInmem(context.Context, string) (textStore, error) {
	return backend.NewStore(inmem.New(inmem.Options{}), backend.StoreOptions{}), nil
}

// openSQLite returns a store over a fresh SQLite file in a temporary
// directory, which closing the store removes.
func openSQLite(context.Context, string) (textStore, error) {
	return openTemp(func(dir string) (driver.Driver, error) {
		return sqlite.Open(filepath.Join(dir, "conversation.db"), sqlite.Options{})
	})
}

// openFS returns a store over a fresh fs driver in a temporary directory,
// which closing the store removes.
func openFS(context.Context, string) (textStore, error) {
	return openTemp(func(dir string) (driver.Driver, error) {
		return fs.Open(filepath.Join(dir, "store"), fs.Options{})
	})
}

// openTemp returns a store over the driver open makes in a fresh
// temporary directory, which closing the store removes.
func openTemp(open func(dir string) (driver.Driver, error)) (textStore, error) {
	dir, err := os.MkdirTemp("", "agentmem-eval-")
	if err != nil {
		return nil, err
	}
	d, err := open(dir)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return tempStore{backend.NewStore(d, backend.StoreOptions{}), dir}, nil
}

// tempStore is a store whose files live in dir until it is closed.
type tempStore struct {
	*backend.Store
	dir string
}

// Close closes the store and removes its directory.
func (s tempStore) Close() error {
	return errors.Join(s.Store.Close(), os.RemoveAll(s.dir))
}
