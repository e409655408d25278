package qdrant_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/qdrant"
	"github.com/agentmem/memory/internal/qdrantserver"
)

// BenchmarkPut1000 measures Put of a batch of 1,000 new records of about
// twenty words each (backendtest.BenchTextRecord), one scope, into a
// collection growing with every batch, on the in-process server over
// loopback gRPC: the driver's work (reading the ids' points, encoding,
// the guarded upserts, the read-back) and the server's together.
func BenchmarkPut1000(b *testing.B) {
	ctx := context.Background()
	host, port := qdrantserver.Start(b)
	d, err := qdrant.New(ctx, qdrant.Options{Client: newClient(b, host, port), Collection: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	batch := make([]memory.Record, 1000)
	b.ResetTimer()
	for n := range b.N {
		for i := range batch {
			batch[i] = backendtest.BenchTextRecord(0, n*len(batch)+i)
		}
		if err := d.Put(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkList10Of10k measures List of the newest 10 of one session's
// 10,000 records on the in-process server: the ordered scroll, the tie
// group at the limit, and reading the ten records whole.
func BenchmarkList10Of10k(b *testing.B) {
	ctx := context.Background()
	host, port := qdrantserver.Start(b)
	d, err := qdrant.New(ctx, qdrant.Options{Client: newClient(b, host, port), Collection: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	batch := make([]memory.Record, 1000)
	for n := range 10 {
		for i := range batch {
			batch[i] = backendtest.BenchTextRecord(0, n*len(batch)+i)
		}
		if err := d.Put(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	scope := backendtest.BenchTextIdentity(0)
	q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldSession, Identity: scope}, Limit: 10}
	b.ResetTimer()
	for range b.N {
		recs, err := d.List(ctx, q)
		if err != nil || len(recs) != 10 {
			b.Fatal(fmt.Sprint(len(recs), err))
		}
	}
}
