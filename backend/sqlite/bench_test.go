package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
)

// The shape of the benchmark store: benchRecords turns in benchSessions
// conversations of benchRecords/benchSessions turns each.
const (
	benchRecords  = 1_000_000
	benchSessions = 5_000
)

var benchBase = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// benchIdentity is the writer of session s: sessions belong to users,
// instances, squads and agents so every index holds realistic values.
func benchIdentity(s int) memory.Identity {
	return memory.Identity{
		Tenant:   "tenant-acme",
		User:     fmt.Sprintf("user-%04d", s%1000),
		Agent:    fmt.Sprintf("kaos://agent/default/agent-%02d", s%20),
		Instance: fmt.Sprintf("instance-%03d", s%200),
		Squad:    fmt.Sprintf("squad-%02d", s%50),
		Session:  fmt.Sprintf("session-%05d", s),
	}
}

var benchContent = strings.Repeat("the quick brown fox jumps over the lazy dog ", 5)

// benchRecord is the n-th record written, a turn of session s. Records are
// created in the order they are written, one millisecond apart, as they are
// when Created is the time of the write.
func benchRecord(n, s int) memory.Record {
	r := memory.NewTurn(benchIdentity(s), memory.RoleUser, benchContent, benchBase.Add(time.Duration(n)*time.Millisecond))
	r.Tokens = 45
	return r
}

// bench1M is the 1,000,000-record file, built once per process.
var bench1M struct {
	once sync.Once
	dir  string
	path string
	took time.Duration
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench1M.dir != "" {
		_ = os.RemoveAll(bench1M.dir)
	}
	os.Exit(code)
}

// millionFile returns the path of the 1M-record file, building it the
// first time with Puts of memory.MaxBatch records. Conversations progress
// in bursts, as in a store many agents write to: each batch holds the next
// 50 turns of each of 200 sessions, so a session's 200 turns lie in four
// runs spread over the file.
func millionFile(b *testing.B) string {
	b.Helper()
	bench1M.once.Do(func() {
		dir, err := os.MkdirTemp("", "agentmem-sqlite-bench-")
		if err != nil {
			bench1M.err = err
			return
		}
		bench1M.dir = dir
		bench1M.path = filepath.Join(dir, "million.db")
		start := time.Now()
		d, err := Open(bench1M.path, Options{})
		if err != nil {
			bench1M.err = err
			return
		}
		const burst, perBatch = 50, memory.MaxBatch / 50 // turns per session, sessions per batch
		batch := make([]memory.Record, 0, memory.MaxBatch)
		for n := 0; n < benchRecords; n++ {
			blk, pos := n/memory.MaxBatch, n%memory.MaxBatch
			s := (blk%(benchSessions/perBatch))*perBatch + pos/burst
			batch = append(batch, benchRecord(n, s))
			if len(batch) == memory.MaxBatch {
				if err := d.Put(context.Background(), batch); err != nil {
					bench1M.err = err
					_ = d.Close()
					return
				}
				batch = batch[:0]
			}
		}
		bench1M.err = d.Close()
		bench1M.took = time.Since(start)
	})
	if bench1M.err != nil {
		b.Fatalf("building the 1M-record file: %v", bench1M.err)
	}
	return bench1M.path
}

// durations collects per-operation times for a median.
type durations []time.Duration

func (ds durations) median() float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds())
}

// BenchmarkAppend writes one record per Put into a fresh file, as agents
// appending the turns of many conversations do.
func BenchmarkAppend(b *testing.B) {
	d, err := Open(filepath.Join(b.TempDir(), "append.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	recs := make([]memory.Record, b.N)
	for i := range recs {
		recs[i] = benchRecord(i, i%benchSessions)
	}
	ds := make(durations, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := d.Put(ctx, recs[i:i+1]); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(ds.median(), "median-ns/op")
}

// BenchmarkIngestBatch writes batches of 1,000 records into a fresh file
// and reports the throughput in records per second, for two shapes of
// batch:
//
//   - conversations: each batch is ten whole conversations of 100 turns,
//     as a bulk import or a migration from another store writes them;
//   - interleaved: each batch holds one record of each of 1,000
//     conversations, the worst case for the identity indexes, whose every
//     insert then lands on a different page.
func BenchmarkIngestBatch(b *testing.B) {
	const batch = 1000
	shapes := []struct {
		name string
		rec  func(i int) memory.Record
	}{
		{"conversations", func(n int) memory.Record { return benchRecord(n, (n/100)%benchSessions) }},
		{"interleaved", func(n int) memory.Record { return benchRecord(n, n%benchSessions) }},
	}
	for _, shape := range shapes {
		b.Run(shape.name, func(b *testing.B) {
			d, err := Open(filepath.Join(b.TempDir(), "ingest.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			ctx := context.Background()
			// Each batch is made with the timer stopped, so the records
			// of all the batches are never live at once and the
			// collector's work on them is not timed.
			recs := make([]memory.Record, batch)
			var elapsed time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				for j := range recs {
					recs[j] = shape.rec(i*batch + j)
				}
				b.StartTimer()
				t0 := time.Now()
				if err := d.Put(ctx, recs); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(t0)
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*batch)/elapsed.Seconds(), "records/s")
		})
	}
}

// BenchmarkNewest50 reads the newest 50 records of one session out of the
// 1,000,000 stored, cycling through the sessions.
func BenchmarkNewest50(b *testing.B) {
	path := millionFile(b)
	d, err := Open(path, Options{Clock: func() time.Time { return benchBase.Add(24 * time.Hour) }})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	ds := make(durations, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := benchIdentity((i * 7919) % benchSessions) // visit every session
		q := backend.Query{
			Filter: memory.Filter{Match: memory.FieldTenant | memory.FieldUser | memory.FieldSession, Identity: id.Only(memory.FieldTenant | memory.FieldUser | memory.FieldSession)},
			Limit:  50,
		}
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
	b.ReportMetric(ds.median(), "median-ns/op")
}

// BenchmarkOpen1M opens the 1,000,000-record file (checking its schema,
// loading nothing) and closes it; only Open is timed.
func BenchmarkOpen1M(b *testing.B) {
	path := millionFile(b)
	ds := make(durations, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		d, err := Open(path, Options{})
		ds = append(ds, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(ds.median(), "median-ns/op")
	b.Logf("building the 1M-record file took %s", bench1M.took)
}
