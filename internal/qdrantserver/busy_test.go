package qdrantserver_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"

	"github.com/agentmem/memory/internal/qdrantserver"
)

// TestBusy checks the server's accounting of its busy time: nothing
// before a call, more after each, and calls answered at once counted
// once, so that it never exceeds the wall-clock time they took.
func TestBusy(t *testing.T) {
	srv, host, port := qdrantserver.StartServer(t)
	if b := srv.Busy(); b != 0 {
		t.Fatalf("Busy before any call = %v, want 0", b)
	}
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: port, SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "c"}); err != nil {
		t.Fatal(err)
	}
	after := srv.Busy()
	if after <= 0 {
		t.Fatalf("Busy after a call = %v, want more than 0", after)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 20 {
				if _, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: "c"}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	busy := srv.Busy() - after
	if busy <= 0 || busy > wall {
		t.Errorf("320 calls, 16 at a time, took %v; Busy grew by %v, want more than 0 and at most the wall time", wall, busy)
	}
}
