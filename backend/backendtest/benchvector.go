package backendtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/driver"
)

// The vector benchmark data sets: scopes sessions of perScope records
// each, every record carrying a random vector of BenchVectorDims values.
const (
	// BenchVectorDims is the dimension of the benchmark vectors, that of
	// common small sentence-embedding models.
	BenchVectorDims = 384
	// BenchVectorK is how many neighbours each benchmark search asks for.
	BenchVectorK = 10
	// benchVectorScopeSpan is the most records a scope may hold: scope s
	// is created in the span [s, s+1) of it.
	benchVectorScopeSpan = 1 << 20
)

// BenchVectorIdentity is the writer of scope s of the vector data sets.
func BenchVectorIdentity(s int) memory.Identity {
	return memory.Identity{Tenant: "tenant-vec", User: fmt.Sprintf("user-%04d", s), Session: fmt.Sprintf("scope-%04d", s)}
}

// benchVector returns a deterministic random vector for seed.
func benchVector(seed uint64) []float32 {
	rnd := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	v := make([]float32, BenchVectorDims)
	for i := range v {
		v[i] = float32(rnd.NormFloat64())
	}
	return v
}

// BenchVectorRecord is record i of scope s: a short fact with its vector.
// Records are created 1 ms apart in FillVectors' order (scope by scope),
// so filling appends in time order.
func BenchVectorRecord(s, i int) memory.Record {
	id := BenchVectorIdentity(s)
	created := BenchBase.Add(time.Duration(s*benchVectorScopeSpan+i) * time.Millisecond)
	return memory.Record{
		ID: fmt.Sprintf("v-%04d-%07d", s, i), Kind: memory.KindFact, Identity: id,
		Content: "a remembered fact", Created: created, Tokens: 4,
		Vector: benchVector(uint64(s)<<32 | uint64(i)),
	}
}

// FillVectors writes scopes x perScope vector records into d, scope by
// scope, in batches of at most memory.MaxBatch records.
func FillVectors(ctx context.Context, d driver.Driver, scopes, perScope int) error {
	return fillScopes(ctx, d, scopes, perScope, BenchVectorRecord)
}

// fillScopes stores rec(s, i) for every scope s below scopes and i below
// perScope, in batches of memory.MaxBatch.
func fillScopes(ctx context.Context, d driver.Driver, scopes, perScope int, rec func(s, i int) memory.Record) error {
	batch := make([]memory.Record, 0, memory.MaxBatch)
	for s := range scopes {
		for i := range perScope {
			batch = append(batch, rec(s, i))
			if len(batch) == cap(batch) {
				if err := d.Put(ctx, batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
	}
	if len(batch) > 0 {
		return d.Put(ctx, batch)
	}
	return nil
}

// VectorBenchConfig describes the driver a vector benchmark measures.
type VectorBenchConfig struct {
	// Filled returns a driver that implements driver.VectorSearcher and
	// holds FillVectors(scopes, perScope); it may reuse a data set built
	// earlier in the process. The benchmark does not close it.
	Filled func(b *testing.B, scopes, perScope int) driver.Driver
}

// BenchmarkSearch100k measures exact or approximate k-nearest search
// (k = BenchVectorK) over 100,000 vectors of BenchVectorDims dimensions in
// one scope, and reports the median.
func BenchmarkSearch100k(b *testing.B, c VectorBenchConfig) {
	benchmarkSearch(b, c, 1, 100_000)
}

// BenchmarkSearchOneScopeOf1000 measures a search restricted to one scope
// of 1,000 vectors among 1,000 such scopes, visiting the scopes in turn,
// and reports the median.
func BenchmarkSearchOneScopeOf1000(b *testing.B, c VectorBenchConfig) {
	benchmarkSearch(b, c, 1000, 1000)
}

func benchmarkSearch(b *testing.B, c VectorBenchConfig, scopes, perScope int) {
	d := c.Filled(b, scopes, perScope)
	vs, ok := d.(driver.VectorSearcher)
	if !ok {
		b.Fatalf("%T does not implement driver.VectorSearcher", d)
	}
	ctx := context.Background()
	queries := make([][]float32, 64)
	for i := range queries {
		queries[i] = benchVector(1<<63 | uint64(i))
	}
	ds := timeEach(b, func(i int) (int, error) {
		id := BenchVectorIdentity((i * 7919) % scopes)
		q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldSession, Identity: id.Only(memory.FieldTenant | memory.FieldSession)}}
		ms, err := vs.Search(ctx, q, queries[i%len(queries)], BenchVectorK)
		if err == nil && len(ms) != BenchVectorK {
			b.Fatalf("got %d matches, want %d", len(ms), BenchVectorK)
		}
		return len(ms), err
	})
	b.ReportMetric(medianNs(ds), "median-ns/op")
}

// timeEach runs op(i) for i below b.N, timing each call alone, after a
// collection settles the garbage of building the data set, and returns
// the times; an error stops the benchmark, and so do b.N calls that
// found nothing (op reports how many results it found).
func timeEach(b *testing.B, op func(i int) (int, error)) []time.Duration {
	runtime.GC()
	ds := make([]time.Duration, 0, b.N)
	found := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		n, err := op(i)
		ds = append(ds, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		found += n
	}
	b.StopTimer()
	if found == 0 {
		b.Fatal("no call found anything: the benchmark measured nothing")
	}
	return ds
}
