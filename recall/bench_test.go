package recall_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/postgres"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/embedding"
	"github.com/agentmem/memory/embedding/embeddingtest"
	"github.com/agentmem/memory/internal/pgtest"
	"github.com/agentmem/memory/recall"
)

// pg is the PostgreSQL cluster the benchmarks share, started by the first
// that asks for it; TestMain stops it.
var pg pgtest.Shared

// benchStores are the filled stores of the recall benchmarks by driver,
// built once per process: filling 100,000 facts takes seconds.
var benchStores = struct {
	sync.Mutex
	m map[string]*backend.Store
}{m: map[string]*backend.Store{}}

// benchStore returns a store over the named driver holding
// backendtest.FillTexts(scopes, perScope).
func benchStore(b *testing.B, name string, scopes, perScope int) *backend.Store {
	return filledStore(b, name, "", scopes, perScope, func(d driver.Driver) error {
		return backendtest.FillTexts(context.Background(), d, scopes, perScope)
	})
}

// benchDims is the dimension of the hybrid benchmarks' vectors.
const benchDims = 64

// hybridStore returns a store over the named driver holding the records
// of backendtest.FillTexts(1, n), each with its embeddingtest vector of
// benchDims dimensions, and that embedder's model recorded.
func hybridStore(b *testing.B, name string, n int, e *embeddingtest.Embedder) *backend.Store {
	st := filledStore(b, name, "hybrid", 1, n, func(d driver.Driver) error {
		ctx := context.Background()
		batch := make([]memory.Record, 0, memory.MaxBatch)
		for i := range n {
			rec := backendtest.BenchTextRecord(0, i)
			rec.Vector = embeddingtest.Vector(rec.Content, benchDims)
			if batch = append(batch, rec); len(batch) == cap(batch) || i == n-1 {
				if err := d.Put(ctx, batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		return nil
	})
	// An Indexer records the model on a store whose vectors it made.
	if _, err := embedding.NewIndexer(context.Background(), st, e, embedding.Options{NoWorkers: true}); err != nil {
		b.Fatal(err)
	}
	return st
}

// filledStore returns the store over the named driver that fill filled,
// built once per process under the name, variant and sizes.
func filledStore(b *testing.B, name, variant string, scopes, perScope int, fill func(driver.Driver) error) *backend.Store {
	benchStores.Lock()
	defer benchStores.Unlock()
	key := fmt.Sprintf("%s%s-%dx%d", name, variant, scopes, perScope)
	if st := benchStores.m[key]; st != nil {
		return st
	}
	var d driver.Driver
	switch name {
	case "inmem":
		d = inmem.New(inmem.Options{})
	case "sqlite":
		// Not b.TempDir: the store outlives this run of the benchmark, for
		// the next; TestMain removes the directory.
		dir, err := benchDir()
		if err != nil {
			b.Fatal(err)
		}
		sd, err := sqlite.Open(filepath.Join(dir, key+".db"), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		d = sd
	case "postgres", "postgres-inprocess":
		pd, err := postgres.Open(pg.CreateDB(b, false), postgres.Options{InProcessVectors: name == "postgres-inprocess"})
		if err != nil {
			b.Fatal(err)
		}
		d = pd
	}
	if err := fill(d); err != nil {
		b.Fatal(err)
	}
	st := backend.NewStore(d, backend.StoreOptions{})
	benchStores.m[key] = st
	return st
}

// BenchmarkRecall100k measures a warm lexical recall of the 10 best of
// 100,000 facts in one scope, with the default options (300 candidates),
// on the in-memory, SQLite and PostgreSQL drivers, and reports the median
// and the 99th percentile.
func BenchmarkRecall100k(b *testing.B) {
	benchmarkRecall(b, 1, 100_000)
}

// BenchmarkRecallOneScopeOf1000 measures a warm lexical recall of the 10
// best facts of one scope of 1,000 among 1,000 such scopes (1,000,000
// facts), visiting the scopes in turn, and reports the median and the
// 99th percentile.
func BenchmarkRecallOneScopeOf1000(b *testing.B) {
	benchmarkRecall(b, 1000, 1000)
}

// BenchmarkRecallHybrid100k measures a warm hybrid recall of the 10 best
// of 100,000 facts in one scope, each with a vector of 64 dimensions:
// the lexical recall of BenchmarkRecall100k fused with an exact vector
// search for as many candidates, with the default options. The embedder
// is embeddingtest's, which costs microseconds: the time is the recall's.
// postgres-inprocess is PostgreSQL with Options.InProcessVectors.
func BenchmarkRecallHybrid100k(b *testing.B) {
	for _, name := range []string{"inmem", "sqlite", "postgres", "postgres-inprocess"} {
		b.Run(name, func(b *testing.B) {
			e := &embeddingtest.Embedder{Dims: benchDims}
			st := hybridStore(b, name, 100_000, e)
			timeRecalls(b, st, recall.Options{Embedder: e}, 1)
		})
	}
}

func benchmarkRecall(b *testing.B, scopes, perScope int) {
	for _, name := range []string{"inmem", "sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			timeRecalls(b, benchStore(b, name, scopes, perScope), recall.Options{}, scopes)
		})
	}
}

// timeRecalls times recalls of the 10 best with opt on st, over the
// scopes of the benchmark data in turn, and reports the median and the
// 99th percentile.
func timeRecalls(b *testing.B, st *backend.Store, opt recall.Options, scopes int) {
	r, err := recall.New(st, opt)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	q := memory.Query{Level: memory.LevelSession}
	queries := backendtest.BenchTextQueries(64)
	scope := func(i int) memory.Identity { return backendtest.BenchTextIdentity((i * 7919) % scopes) }
	// Warm: the first recall builds what the driver keeps for searching.
	if _, err := r.Recall(ctx, scope(0), q, queries[0], 10); err != nil {
		b.Fatal(err)
	}
	// Steady: the garbage of filling and warming collected, so that the
	// recalls timed do not share the machine with its collection.
	runtime.GC()
	backendtest.TimeEach(b, func(i int) (int, error) {
		res, err := r.Recall(ctx, scope(i), q, queries[i%len(queries)], 10)
		if err == nil && res.Degraded != nil {
			err = res.Degraded
		}
		return len(res.Hits), err
	})
}

var benchTemp struct {
	once sync.Once
	dir  string
	err  error
}

// benchDir returns a temporary directory for the process's benchmark
// stores, made once; TestMain removes it.
func benchDir() (string, error) {
	benchTemp.once.Do(func() { benchTemp.dir, benchTemp.err = os.MkdirTemp("", "recall-bench-") })
	return benchTemp.dir, benchTemp.err
}

func TestMain(m *testing.M) {
	code := m.Run()
	pg.Stop()
	if benchTemp.dir != "" {
		os.RemoveAll(benchTemp.dir)
	}
	os.Exit(code)
}
