package main

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/fs"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/qdrant"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/internal/qdrantserver"
)

// drivers are the storage drivers a conversation's store can use, by name.
var drivers = map[string]struct {
	about string
	open  opener
}{
	"inmem":  {"a fresh in-memory driver per conversation", openInmem},
	"sqlite": {"a fresh SQLite file per conversation, in a temporary directory removed afterwards", openSQLite},
	"fs":     {"a fresh fs log per conversation, in a temporary directory removed afterwards", openFS},
	"qdrant": {"a fresh collection per conversation on an in-process Qdrant server (internal/qdrantserver) over loopback gRPC; approximate text search", openQdrant},
}

var _ textStore = (*backend.Store)(nil)

// openInmem returns a store over a fresh in-memory driver.
func openInmem(_ context.Context, _ string, now time.Time) (textStore, error) {
	clock := fixedClock(now)
	return backend.NewStore(inmem.New(inmem.Options{Clock: clock}), backend.StoreOptions{Clock: clock}), nil
}

// fixedClock returns a clock that always reads now.
func fixedClock(now time.Time) memory.Clock { return func() time.Time { return now } }

// openSQLite returns a store over a fresh SQLite file in a temporary
// directory, which closing the store removes.
func openSQLite(_ context.Context, _ string, now time.Time) (textStore, error) {
	return openTemp(now, func(dir string, clock memory.Clock) (driver.Driver, error) {
		return sqlite.Open(filepath.Join(dir, "conversation.db"), sqlite.Options{Clock: clock})
	})
}

// openFS returns a store over a fresh fs driver in a temporary directory,
// which closing the store removes.
func openFS(_ context.Context, _ string, now time.Time) (textStore, error) {
	return openTemp(now, func(dir string, clock memory.Clock) (driver.Driver, error) {
		return fs.Open(filepath.Join(dir, "store"), fs.Options{Clock: clock})
	})
}

// openTemp returns a store over the driver open makes in a fresh
// temporary directory, which closing the store removes; store and driver
// read the clock fixed at now.
func openTemp(now time.Time, open func(dir string, clock memory.Clock) (driver.Driver, error)) (textStore, error) {
	dir, err := os.MkdirTemp("", "agentmem-eval-")
	if err != nil {
		return nil, err
	}
	clock := fixedClock(now)
	d, err := open(dir, clock)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	return tempStore{backend.NewStore(d, backend.StoreOptions{Clock: clock}), dir}, nil
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

// qdrantServer is the in-process Qdrant server of the run, started by the
// first conversation that needs it and serving until the process ends.
var qdrantServer struct {
	once  sync.Once
	addr  string
	err   error
	colls atomic.Int64
}

// openQdrant returns a store over a fresh collection of the run's
// in-process Qdrant server.
func openQdrant(ctx context.Context, _ string, now time.Time) (textStore, error) {
	qs := &qdrantServer
	qs.once.Do(func() {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			qs.err = err
			return
		}
		go func() { _ = qdrantserver.New().Serve(l) }()
		qs.addr = l.Addr().String()
	})
	if qs.err != nil {
		return nil, qs.err
	}
	clock := fixedClock(now)
	coll := "conversation-" + strconv.FormatInt(qs.colls.Add(1), 10)
	d, err := qdrant.Open(ctx, qs.addr, qdrant.Options{Collection: coll, Clock: clock})
	if err != nil {
		return nil, err
	}
	return backend.NewStore(d, backend.StoreOptions{Clock: clock}), nil
}
