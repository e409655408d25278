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
	dataFiles.mu.Lock()
	for _, d := range dataFiles.d {
		_ = d.Close()
	}
	if dataFiles.dir != "" {
		_ = os.RemoveAll(dataFiles.dir)
	}
	dataFiles.mu.Unlock()
	os.Exit(code)
}

// dataFiles holds the search data sets, one file per set, built once per
// process and kept open with their search caches loaded; TestMain closes
// and removes them.
var dataFiles struct {
	mu  sync.Mutex
	dir string
	d   map[string]*Driver
}

// dataFile returns the open driver of the data set name, building it the
// first time with fill and warming its search cache with warm.
func dataFile(b *testing.B, name string, fill, warm func(d *Driver) error) *Driver {
	b.Helper()
	dataFiles.mu.Lock()
	defer dataFiles.mu.Unlock()
	if d := dataFiles.d[name]; d != nil {
		return d
	}
	if dataFiles.dir == "" {
		dir, err := os.MkdirTemp("", "agentmem-sqlite-bench-sets-")
		if err != nil {
			b.Fatal(err)
		}
		dataFiles.dir = dir
		dataFiles.d = map[string]*Driver{}
	}
	start := time.Now()
	d, err := Open(filepath.Join(dataFiles.dir, name+".db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := fill(d); err != nil {
		b.Fatal(err)
	}
	filled := time.Since(start)
	start = time.Now()
	if err := warm(d); err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: writing took %s, loading it for search %s", name, filled, time.Since(start))
	dataFiles.d[name] = d
	return d
}

var vectorBench = backendtest.VectorBenchConfig{
	Filled: func(b *testing.B, scopes, perScope int) driver.Driver {
		return dataFile(b, fmt.Sprintf("vectors-%dx%d", scopes, perScope),
			func(d *Driver) error { return backendtest.FillVectors(context.Background(), d, scopes, perScope) },
			func(d *Driver) error {
				q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: backendtest.BenchVectorIdentity(0).Tenant}}}
				_, err := d.Search(context.Background(), q, backendtest.BenchVectorRecord(0, 0).Vector, 1)
				return err
			})
	},
}

var textBench = backendtest.TextBenchConfig{
	Filled: func(b *testing.B, scopes, perScope int) driver.Driver {
		return dataFile(b, fmt.Sprintf("texts-%dx%d", scopes, perScope),
			func(d *Driver) error { return backendtest.FillTexts(context.Background(), d, scopes, perScope) },
			func(d *Driver) error {
				// The first search loads the texts; the snapshot it would
				// store in the background is stored now, for the first
				// searches of new handles to start from.
				q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: backendtest.BenchTextIdentity(0).Tenant}}}
				if _, err := d.SearchText(context.Background(), q, "warm", 1); err != nil {
					return err
				}
				return d.storeSnapshot(context.Background())
			})
	},
	Reopen: func(b *testing.B, d driver.Driver) driver.Driver {
		rd, err := Open(dataPath(d), Options{})
		if err != nil {
			b.Fatal(err)
		}
		return rd
	},
	NewProcess: func(b *testing.B, d driver.Driver) (string, string) { return "TestFirstSearchTextChild", dataPath(d) },
}

// dataPath returns the file of the data set d was opened on.
func dataPath(d driver.Driver) string {
	dataFiles.mu.Lock()
	defer dataFiles.mu.Unlock()
	for name, x := range dataFiles.d {
		if x == d {
			return filepath.Join(dataFiles.dir, name+".db")
		}
	}
	return ""
}

// TestFirstSearchTextChild is the child process of
// BenchmarkFirstSearchTextNewProcess; run directly, it skips.
func TestFirstSearchTextChild(t *testing.T) {
	backendtest.FirstSearchTextChild(t, func(path string) (driver.Driver, error) { return Open(path, Options{}) })
}

func BenchmarkSearchText100k(b *testing.B) { backendtest.BenchmarkSearchText100k(b, textBench) }
func BenchmarkSearchTextOneScopeOf1000(b *testing.B) {
	backendtest.BenchmarkSearchTextOneScopeOf1000(b, textBench)
}
func BenchmarkFirstSearchText(b *testing.B) { backendtest.BenchmarkFirstSearchText(b, textBench) }
func BenchmarkFirstSearchTextNewProcess(b *testing.B) {
	backendtest.BenchmarkFirstSearchTextNewProcess(b, textBench)
}

func BenchmarkSearch100k(b *testing.B) { backendtest.BenchmarkSearch100k(b, vectorBench) }
func BenchmarkSearchOneScopeOf1000(b *testing.B) {
	backendtest.BenchmarkSearchOneScopeOf1000(b, vectorBench)
}

// BenchmarkFirstSearch100k measures the first vector search of a new
// handle over the 100,000 stored vectors of 384 dimensions: the load of
// the vector copy, from its stored snapshot (snapshot) or from the
// records (records, Options.NoVectorSnapshots), and one search. The
// handle is opened in the benchmark's process.
func BenchmarkFirstSearch100k(b *testing.B) {
	d := vectorBench.Filled(b, 1, 100_000).(*Driver)
	if err := d.storeVectorSnapshot(context.Background()); err != nil {
		b.Fatal(err)
	}
	q := driver.Query{Filter: memory.Filter{Match: memory.FieldTenant, Identity: memory.Identity{Tenant: backendtest.BenchVectorIdentity(0).Tenant}}}
	vec := backendtest.BenchVectorRecord(0, 7).Vector
	for _, from := range []string{"snapshot", "records"} {
		wantSnaps := 0
		if from == "snapshot" {
			wantSnaps = 1
		}
		b.Run(from, func(b *testing.B) {
			backendtest.TimeEach(b, func(int) (int, error) {
				nd, err := Open(dataPath(d), Options{NoVectorSnapshots: from == "records"})
				if err != nil {
					return 0, err
				}
				defer nd.Close()
				got, err := nd.RankVector(context.Background(), q, vec, backendtest.BenchVectorK)
				if err == nil && nd.vc.snaps != wantSnaps {
					err = fmt.Errorf("the copy was loaded from a snapshot %d times", nd.vc.snaps)
				}
				return len(got), err
			})
		})
	}
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
