package client_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/client"
	"github.com/agentmem/memory/internal/servicetest"
	"github.com/agentmem/memory/server"
	"github.com/agentmem/memory/tiers/tiered"
)

// faulty is the in-memory driver whose reads fail with the error set,
// or wait while a gate is set.
type faulty struct {
	*inmem.Driver
	failList atomic.Pointer[error]
	gate     atomic.Pointer[chan struct{}]
}

func newFaulty() *faulty { return &faulty{Driver: inmem.New(inmem.Options{})} }

func (f *faulty) fail(err error) {
	if err == nil {
		f.failList.Store(nil)
		return
	}
	f.failList.Store(&err)
}

func (f *faulty) List(ctx context.Context, q driver.Query) ([]memory.Record, error) {
	if g := f.gate.Load(); g != nil {
		select {
		case <-*g:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if e := f.failList.Load(); e != nil {
		return nil, *e
	}
	return f.Driver.List(ctx, q)
}

// drivers open fresh storage: in memory and a SQLite file.
var drivers = []struct {
	name string
	open func(t testing.TB) driver.Driver
}{
	{"inmem", func(testing.TB) driver.Driver { return inmem.New(inmem.Options{}) }},
	{"sqlite", func(t testing.TB) driver.Driver {
		d, err := sqlite.Open(filepath.Join(t.TempDir(), "memory.db"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}},
}

// newMemory returns a tiered Memory over d, closed when t ends.
func newMemory(t testing.TB, d driver.Driver, posture memory.Posture, opt tiered.Options) *tiered.Memory {
	t.Helper()
	st := backend.NewStore(d, backend.StoreOptions{Posture: posture})
	m, err := tiered.New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(); _ = st.Close() })
	return m
}

// serve starts the service over mem, trusting identity headers unless
// opt names an authenticator, shut down when t ends.
func serve(t testing.TB, mem *tiered.Memory, opt server.Options) (*server.Server, *httptest.Server) {
	t.Helper()
	if opt.Authenticator == nil {
		opt.Authenticator = server.TrustedHeaders{}
	}
	return servicetest.Serve(t, mem, opt)
}

// newClient returns a client of base with quick retries.
func newClient(t testing.TB, base string, opt client.Options) *client.Client {
	t.Helper()
	if opt.Backoff == 0 {
		opt.Backoff = time.Millisecond
	}
	c, err := client.New(base, opt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var alice = memory.Identity{Tenant: "acme", User: "alice", Agent: "kaos://agent/ns/helper", Session: "s1"}
