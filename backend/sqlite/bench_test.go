//go:build cgo

package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
)

// bench1M is the file holding backendtest's 1,000,000-record data set,
// built once per process and removed by TestMain.
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
	vectorFiles.mu.Lock()
	for _, d := range vectorFiles.d {
		_ = d.Close()
	}
	if vectorFiles.dir != "" {
		_ = os.RemoveAll(vectorFiles.dir)
	}
	vectorFiles.mu.Unlock()
	os.Exit(code)
}

// vectorFiles holds the vector data sets, one file per shape, built once
// per process and kept open with their search caches loaded; TestMain
// closes and removes them.
var vectorFiles struct {
	mu  sync.Mutex
	dir string
	d   map[[2]int]*Driver
}

var vectorBench = backendtest.VectorBenchConfig{
	Filled: func(b *testing.B, scopes, perScope int) driver.Driver {
		vectorFiles.mu.Lock()
		defer vectorFiles.mu.Unlock()
		shape := [2]int{scopes, perScope}
		if d := vectorFiles.d[shape]; d != nil {
			return d
		}
		if vectorFiles.dir == "" {
			dir, err := os.MkdirTemp("", "agentmem-sqlite-vectors-")
			if err != nil {
				b.Fatal(err)
			}
			vectorFiles.dir = dir
			vectorFiles.d = map[[2]int]*Driver{}
		}
		start := time.Now()
		d, err := Open(filepath.Join(vectorFiles.dir, fmt.Sprintf("vectors-%dx%d.db", scopes, perScope)), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := backendtest.FillVectors(context.Background(), d, scopes, perScope); err != nil {
			b.Fatal(err)
		}
		filled := time.Since(start)
		// The first search loads the vectors into memory; do it before
		// timing.
		start = time.Now()
		q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: backendtest.BenchVectorIdentity(0).Tenant}}}
		if _, err := d.Search(context.Background(), q, backendtest.BenchVectorRecord(0, 0).Vector, 1); err != nil {
			b.Fatal(err)
		}
		b.Logf("%d x %d vectors: writing took %s, loading them for search %s", scopes, perScope, filled, time.Since(start))
		vectorFiles.d[shape] = d
		return d
	},
}

func BenchmarkSearch100k(b *testing.B) { backendtest.BenchmarkSearch100k(b, vectorBench) }
func BenchmarkSearchOneScopeOf1000(b *testing.B) {
	backendtest.BenchmarkSearchOneScopeOf1000(b, vectorBench)
}

// millionFile returns the path of the 1M-record file, building it with
// backendtest.Fill the first time.
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
		if err := backendtest.Fill(context.Background(), d, backendtest.BenchMillion); err != nil {
			bench1M.err = err
			_ = d.Close()
			return
		}
		bench1M.err = d.Close()
		bench1M.took = time.Since(start)
	})
	if bench1M.err != nil {
		b.Fatalf("building the 1M-record file: %v", bench1M.err)
	}
	return bench1M.path
}

var benchConfig = backendtest.BenchConfig{
	NewDriver: func(b *testing.B) driver.Driver {
		d, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		return d
	},
	Million: func(b *testing.B) driver.Driver {
		d, err := Open(millionFile(b), Options{})
		if err != nil {
			b.Fatal(err)
		}
		return d
	},
}

func BenchmarkAppend(b *testing.B) { backendtest.BenchmarkAppend(b, benchConfig) }

// BenchmarkStoreAppend measures one turn appended through a Store, its
// tokens counted.
func BenchmarkStoreAppend(b *testing.B) { backendtest.BenchmarkStoreAppend(b, benchConfig) }
func BenchmarkIngest(b *testing.B)      { backendtest.BenchmarkIngest(b, benchConfig) }
func BenchmarkNewest50(b *testing.B)    { backendtest.BenchmarkNewest50(b, benchConfig) }

// BenchmarkOpen1M opens the 1,000,000-record file (checking its schema,
// loading nothing) and closes it; only Open is timed, and the median is
// reported.
func BenchmarkOpen1M(b *testing.B) {
	path := millionFile(b)
	ds := make([]time.Duration, 0, b.N)
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
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds()), "median-ns/op")
	b.Logf("building the 1M-record file took %s", bench1M.took)
}
