package backendtest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/driver"
)

// The benchmark data set: BenchRecord(i) for i in [0, n), spread
// round-robin over BenchSessions sessions, so each session's records are
// scattered through the store as they are when many conversations write to
// it at once. Every driver's benchmarks use it, so their numbers compare.
const (
	// BenchSessions is how many sessions the data set spreads over.
	BenchSessions = 5_000
	// BenchMillion is the size of the large data set reads are measured on.
	BenchMillion = 1_000_000
	// BenchIngestBatch is the batch size of the ingest benchmark.
	BenchIngestBatch = 1_000
)

// BenchBase is the creation time of record 0; record i is i ms later.
var BenchBase = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

var benchContent = strings.Repeat("the quick brown fox jumps over the lazy dog ", 5)

// BenchIdentity is the writer of session s: sessions belong to users,
// instances, squads and agents, so every identity field holds realistic
// values.
func BenchIdentity(s int) memory.Identity {
	return memory.Identity{
		Tenant:   "tenant-acme",
		User:     fmt.Sprintf("user-%04d", s%1000),
		Agent:    fmt.Sprintf("kaos://agent/default/agent-%02d", s%20),
		Instance: fmt.Sprintf("instance-%03d", s%200),
		Squad:    fmt.Sprintf("squad-%02d", s%50),
		Session:  fmt.Sprintf("session-%05d", s),
	}
}

// BenchRecord is the i-th record of the data set: a 225-byte turn.
func BenchRecord(i int) memory.Record {
	created := BenchBase.Add(time.Duration(i) * time.Millisecond)
	r := memory.NewTurn(BenchIdentity(i%BenchSessions), memory.RoleUser, benchContent, created)
	r.Tokens = 45
	return r
}

// Fill writes BenchRecord(0) to BenchRecord(n-1) into d in batches of
// memory.MaxBatch, in creation order.
func Fill(ctx context.Context, d driver.Driver, n int) error {
	batch := make([]memory.Record, 0, memory.MaxBatch)
	for i := 0; i < n; i++ {
		batch = append(batch, BenchRecord(i))
		if len(batch) == cap(batch) || i == n-1 {
			if err := d.Put(ctx, batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}

// BenchConfig describes the driver a benchmark measures.
type BenchConfig struct {
	// NewDriver returns a new, empty driver. The benchmark closes it.
	NewDriver func(b *testing.B) driver.Driver
	// Million returns a driver holding Fill's BenchMillion records; it may
	// reuse a data set built earlier in the process. The benchmark closes it.
	Million func(b *testing.B) driver.Driver
}

// medianNs returns the median of ds in nanoseconds.
func medianNs(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds())
}

// BenchmarkAppend measures writing one record per Put, as an agent
// appending conversation turns does, and reports the median.
func BenchmarkAppend(b *testing.B, c BenchConfig) {
	d := c.NewDriver(b)
	defer d.Close()
	ctx := context.Background()
	recs := make([]memory.Record, b.N)
	for i := range recs {
		recs[i] = BenchRecord(i)
	}
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := d.Put(ctx, recs[i:i+1]); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(medianNs(ds), "median-ns/op")
}

// BenchmarkStoreAppend measures appending one conversation turn through a
// backend.Store with its default, exact token counter — the whole write
// path of a turn: the scope checks, attribution, validation, counting and
// the driver's Put — and reports the median.
func BenchmarkStoreAppend(b *testing.B, c BenchConfig) {
	d := c.NewDriver(b)
	st := backend.NewStore(d, backend.StoreOptions{})
	defer st.Close()
	ctx := context.Background()
	if _, err := st.Tokens().CountTokens(ctx, benchContent); err != nil { // load the encoding
		b.Fatal(err)
	}
	recs := make([]memory.Record, b.N)
	for i := range recs {
		recs[i] = BenchRecord(i)
		recs[i].Tokens = 0 // counted by the Store
	}
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := st.Add(ctx, recs[i].Identity, recs[i]); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(medianNs(ds), "median-ns/op")
}

// BenchmarkIngest measures batched writes of BenchIngestBatch records and
// reports records per second, for two shapes of batch:
//
//   - conversations: each batch is ten whole conversations of 100 turns,
//     as a bulk import writes them;
//   - interleaved: each batch holds one record of each of 1,000
//     conversations, the worst case for identity indexes.
func BenchmarkIngest(b *testing.B, c BenchConfig) {
	shapes := []struct {
		name string
		rec  func(i int) memory.Record
	}{
		{"conversations", func(i int) memory.Record {
			r := BenchRecord(i)
			r.Identity = BenchIdentity((i / 100) % BenchSessions)
			return r
		}},
		{"interleaved", BenchRecord},
	}
	for _, shape := range shapes {
		b.Run(shape.name, func(b *testing.B) {
			d := c.NewDriver(b)
			defer d.Close()
			ctx := context.Background()
			recs := make([]memory.Record, b.N*BenchIngestBatch)
			for i := range recs {
				recs[i] = shape.rec(i)
			}
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := d.Put(ctx, recs[i*BenchIngestBatch:(i+1)*BenchIngestBatch]); err != nil {
					b.Fatal(err)
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N*BenchIngestBatch)/elapsed.Seconds(), "records/s")
		})
	}
}

// BenchmarkNewest50 measures reading the newest 50 records of one session
// (session level, user bound) out of BenchMillion, visiting every session,
// and reports the median.
func BenchmarkNewest50(b *testing.B, c BenchConfig) {
	d := c.Million(b)
	defer d.Close()
	runtime.GC() // settle the garbage of building the data set before timing reads
	ctx := context.Background()
	const match = memory.FieldTenant | memory.FieldUser | memory.FieldSession
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := BenchIdentity((i * 7919) % BenchSessions)
		q := driver.Query{Filter: memory.Filter{Match: match, Identity: id.Only(match)}, Limit: 50}
		t0 := time.Now()
		recs, err := d.List(ctx, q)
		ds = append(ds, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) != 50 {
			b.Fatalf("got %d records, want 50", len(recs))
		}
	}
	b.StopTimer()
	b.ReportMetric(medianNs(ds), "median-ns/op")
}
