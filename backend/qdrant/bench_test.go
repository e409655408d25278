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
	d := benchDriver(b)
	b.ResetTimer()
	for n := range b.N {
		putBatch(b, d, n)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkList10Of10k measures List of the newest 10 of one session's
// 10,000 records on the in-process server: the ordered scroll, the tie
// group at the limit, and reading the ten records whole.
func BenchmarkList10Of10k(b *testing.B) {
	ctx := context.Background()
	d := benchDriver(b)
	for n := range 10 {
		putBatch(b, d, n)
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

// benchDriver returns a driver on a fresh collection of an in-process
// server, both closed when b ends.
func benchDriver(b *testing.B) *qdrant.Driver {
	host, port := qdrantserver.Start(b)
	d, err := qdrant.New(context.Background(), qdrant.Options{Client: newClient(b, host, port), Collection: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	return d
}

// putBatch puts batch n of 1,000 BenchTextRecords of one scope: records
// n*1000 to n*1000+999.
func putBatch(b *testing.B, d *qdrant.Driver, n int) {
	batch := make([]memory.Record, 1000)
	for i := range batch {
		batch[i] = backendtest.BenchTextRecord(0, n*len(batch)+i)
	}
	if err := d.Put(context.Background(), batch); err != nil {
		b.Fatal(err)
	}
}
