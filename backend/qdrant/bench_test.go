package qdrant_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

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

// BenchmarkSearchVector measures Search of the 10 nearest of one scope's
// 100 records (vectors of backendtest.BenchVectorDims), in a collection
// of 200, on the in-process server. driver-ms/op is the
// driver's own time — encoding, the call over loopback gRPC, decoding
// the ten records — the time per search less the time the server spent
// in its handlers (server-ms/op; the in-process server scans every point,
// as a real Qdrant does not).
func BenchmarkSearchVector(b *testing.B) {
	ctx := context.Background()
	srv, d := benchServerDriver(b, backendtest.BenchVectorDims)
	if err := backendtest.FillVectors(ctx, d, 2, benchScope); err != nil {
		b.Fatal(err)
	}
	q := driver.Query{Filter: memory.Filter{Match: memory.AllFields, Identity: backendtest.BenchVectorIdentity(0)}}
	vecs := make([][]float32, 64)
	for i := range vecs {
		vecs[i] = backendtest.BenchVectorRecord(1, i).Vector // another scope's: not in this one
	}
	benchSearch(b, srv, func(i int) (int, error) {
		ms, err := d.Search(ctx, q, vecs[i%len(vecs)], backendtest.BenchVectorK)
		return len(ms), err
	})
}

// BenchmarkSearchText measures SearchText of 10 of one scope's 100
// facts of about twenty words (backendtest.BenchTextRecord) for queries
// of six words (the start of a fact of the other scope, matching ten
// or more), in a collection
// of 200,
// on the in-process server: the counts of the query's terms, run eight at
// a time, and the sparse query. driver-ms/op and server-ms/op as in
// BenchmarkSearchVector.
func BenchmarkSearchText(b *testing.B) {
	ctx := context.Background()
	srv, d := benchServerDriver(b, 0)
	if err := backendtest.FillTexts(ctx, d, 2, benchScope); err != nil {
		b.Fatal(err)
	}
	q := driver.Query{Filter: memory.Filter{Match: memory.AllFields, Identity: backendtest.BenchTextIdentity(0)}}
	var texts []string // six words of a fact of the other scope, matching ten or more
	for i := 0; len(texts) < 64 && i < benchScope; i++ {
		words := strings.Fields(backendtest.BenchTextRecord(1, i).Content)
		text := strings.Join(words[:min(6, len(words))], " ")
		if ms, err := d.SearchText(ctx, q, text, backendtest.BenchTextK); err == nil && len(ms) == backendtest.BenchTextK {
			texts = append(texts, text)
		}
	}
	if len(texts) < 16 {
		b.Fatalf("only %d query texts match ten facts", len(texts))
	}
	benchSearch(b, srv, func(i int) (int, error) {
		ms, err := d.SearchText(ctx, q, texts[i%len(texts)], backendtest.BenchTextK)
		return len(ms), err
	})
}

// benchSearch times search, which must return 10 matches, and reports
// the server's time per search and the rest, the driver's.
func benchSearch(b *testing.B, srv *qdrantserver.Server, search func(i int) (int, error)) {
	for i := range 16 { // warm up
		if _, err := search(i); err != nil {
			b.Fatal(err)
		}
	}
	busy := srv.Busy()
	b.ResetTimer()
	for i := range b.N {
		n, err := search(i)
		if err != nil || n != 10 {
			b.Fatal(fmt.Sprint(n, err))
		}
	}
	b.StopTimer()
	server := srv.Busy() - busy
	b.ReportMetric(float64(server.Nanoseconds())/1e6/float64(b.N), "server-ms/op")
	b.ReportMetric(float64((b.Elapsed()-server).Nanoseconds())/1e6/float64(b.N), "driver-ms/op")
}

// benchDriver returns a driver on a fresh collection of an in-process
// server, both closed when b ends.
func benchDriver(b *testing.B) *qdrant.Driver {
	_, d := benchServerDriver(b, 0)
	return d
}

// benchServerDriver returns an in-process server and a driver on a fresh
// collection of it with vectors of dims dimensions, both closed when b
// ends.
func benchServerDriver(b *testing.B, dims int) (*qdrantserver.Server, *qdrant.Driver) {
	srv, host, port := qdrantserver.StartServer(b)
	d, err := qdrant.New(context.Background(), qdrant.Options{Client: newClient(b, host, port), Collection: "bench", Dims: dims, ExactSearch: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	return srv, d
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

// benchScope is how many records each of a search benchmark's two scopes
// holds: few, so that the in-process server, which scans every point of
// the collection, leaves the machine to the driver.
const benchScope = 100

// BenchmarkClaimCycle measures one round of a work queue's life on the
// in-process server: Enqueue of 10 items, a Claim of them, and Complete
// of each, in a queue whose done points the driver removes in batches.
// driver-ms/op and server-ms/op as in BenchmarkSearchVector.
func BenchmarkClaimCycle(b *testing.B) {
	ctx := context.Background()
	srv, d := benchServerDriver(b, 0)
	who := memory.Identity{Tenant: "acme", Session: "s"}
	start := time.Unix(1_700_000_000, 0)
	round := func(n int) error {
		items := make([]driver.Work, 10)
		for i := range items {
			items[i] = driver.Work{Queue: "fold", ID: fmt.Sprintf("item-%d-%d", n, i), Identity: who, Payload: "{}", Created: start.Add(time.Duration(n*10+i) * time.Microsecond)}
		}
		if _, err := d.Enqueue(ctx, items); err != nil {
			return err
		}
		ls, err := d.Claim(ctx, "fold", 10, time.Minute)
		if err != nil {
			return err
		}
		if len(ls) != 10 {
			return fmt.Errorf("claimed %d items, want 10", len(ls))
		}
		for _, l := range ls {
			if err := d.Complete(ctx, l); err != nil {
				return err
			}
		}
		return nil
	}
	for n := range 4 { // warm up: the work collection is made by the first Enqueue
		if err := round(-1 - n); err != nil {
			b.Fatal(err)
		}
	}
	busy := srv.Busy()
	b.ResetTimer()
	for n := range b.N {
		if err := round(n); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	server := srv.Busy() - busy
	b.ReportMetric(float64(server.Nanoseconds())/1e6/float64(b.N), "server-ms/op")
	b.ReportMetric(float64((b.Elapsed()-server).Nanoseconds())/1e6/float64(b.N), "driver-ms/op")
}
