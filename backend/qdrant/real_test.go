package qdrant_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/qdrant"
)

// AddrEnv names the gRPC address ("host:port") of a real Qdrant server
// for TestRealQdrant.
const AddrEnv = "QDRANT_ADDR"

// RequireEnv, set to 1, makes TestRealQdrant fail instead of skipping
// when AddrEnv is not set: for a CI that provides a Qdrant.
const RequireEnv = "AGENTMEM_REQUIRE_QDRANT"

// TestRealQdrant runs the conformance suite against a real Qdrant (1.17
// or newer: update_mode) at $QDRANT_ADDR, each driver on a collection of
// its own that the test deletes at its end. Without the variable it
// skips, or fails under AGENTMEM_REQUIRE_QDRANT=1. The project's CI
// cannot run a Qdrant (no container engine, no package to install), so
// it does not set that flag; there the in-process server
// (internal/qdrantserver) stands in for one in TestConformance, which
// never skips. AGENTMEM_REQUIRE_SERVERS, which CI sets for the servers it
// does start, does not cover this one for that reason.
func TestRealQdrant(t *testing.T) {
	addr := os.Getenv(AddrEnv)
	if addr == "" {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%s=1 but %s is not set: no Qdrant to run the conformance suite against", RequireEnv, AddrEnv)
		}
		t.Skipf("%s is not set: the conformance suite against a real Qdrant is not run (TestConformance runs it on the in-process server)", AddrEnv)
	}
	ctx := context.Background()
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("%s=%q: %v", AddrEnv, addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("%s=%q: %v", AddrEnv, addr, err)
	}
	admin := newClient(t, host, port)
	var mu sync.Mutex
	clocks := map[driver.Driver]struct {
		coll  string
		clock memory.Clock
	}{}
	open := func(t *testing.T, coll string, clock memory.Clock) driver.Driver {
		d, err := qdrant.Open(ctx, addr, qdrant.Options{Collection: coll, Clock: clock, Dims: backendtest.VectorDims, ExactSearch: true})
		if err != nil {
			t.Fatalf("qdrant.Open(%s): %v", addr, err)
		}
		t.Cleanup(func() { _ = d.Close() })
		mu.Lock()
		defer mu.Unlock()
		clocks[d] = struct {
			coll  string
			clock memory.Clock
		}{coll, clock}
		return d
	}
	backendtest.Run(t, declared(backendtest.Config{
		NewDriver: func(t *testing.T, clock memory.Clock) driver.Driver {
			var b [8]byte
			_, _ = rand.Read(b[:])
			coll := "agentmem-test-" + hex.EncodeToString(b[:])
			d := open(t, coll, clock)
			t.Cleanup(func() {
				// Closing a driver needs no collection, so the order of
				// this cleanup and the drivers' Close does not matter.
				for _, c := range []string{coll, coll + qdrant.WorkSuffix} {
					if ok, err := admin.CollectionExists(ctx, c); err != nil || !ok {
						continue // the work collection exists once an item was enqueued
					}
					if err := admin.DeleteCollection(ctx, c); err != nil {
						t.Logf("deleting collection %s: %v", c, err)
					}
				}
			})
			return d
		},
		Replica: func(t *testing.T, d driver.Driver) driver.Driver {
			mu.Lock()
			o := clocks[d]
			mu.Unlock()
			return open(t, o.coll, o.clock)
		},
	}))
}
