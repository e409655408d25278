package qdrant_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	qc "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/qdrant"
	"github.com/agentmem/memory/internal/qdrantserver"
)

// newClient returns a client of the server at host:port, closed when t
// ends.
func newClient(t testing.TB, host string, port int) *qc.Client {
	t.Helper()
	c, err := qc.NewClient(&qc.Config{Host: host, Port: port, PoolSize: 1, SkipCompatibilityCheck: true,
		GrpcOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1 << 30))}})
	if err != nil {
		t.Fatalf("qdrant client: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

var collections atomic.Int64

// TestConformance runs the conformance suite on the in-process server:
// one server per test, a fresh collection per driver, and a replica that
// is a second driver with a client of its own on the same collection.
func TestConformance(t *testing.T) {
	type opened struct {
		host  string
		port  int
		coll  string
		clock memory.Clock
	}
	var mu sync.Mutex
	drivers := map[driver.Driver]opened{}
	open := func(t *testing.T, o opened) driver.Driver {
		d, err := qdrant.New(context.Background(), qdrant.Options{Client: newClient(t, o.host, o.port), Collection: o.coll, Clock: o.clock, Dims: backendtest.VectorDims, ExactSearch: true})
		if err != nil {
			t.Fatalf("qdrant.New: %v", err)
		}
		t.Cleanup(func() { _ = d.Close() })
		mu.Lock()
		drivers[d] = o
		mu.Unlock()
		return d
	}
	backendtest.Run(t, declared(backendtest.Config{
		NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver {
			host, port := qdrantserver.Start(t)
			return open(t, opened{host, port, fmt.Sprintf("memory-%d", collections.Add(1)), clock})
		},
		Replica: func(t *testing.T, d driver.Driver) driver.Driver {
			mu.Lock()
			o, ok := drivers[d]
			mu.Unlock()
			if !ok {
				t.Fatalf("a replica of a driver the suite did not open")
			}
			return open(t, o)
		},
	}))
}

// declared sets in c the capabilities the driver declares to the
// conformance suite, opened with Options.Dims backendtest.VectorDims and
// Options.ExactSearch: the same on the in-process server and a real
// Qdrant.
func declared(c backendtest.Config) backendtest.Config {
	c.Sweeper, c.Swapper, c.Claimer, c.WorkEraser = true, true, true, true
	c.VectorSearch, c.FixedVectorDims = backendtest.ExactVectorSearch, true
	c.TextSearch = backendtest.ApproximateTextSearch
	return c
}
