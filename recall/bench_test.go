package recall_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentmem/memory"
	"github.com/agentmem/memory/backend"
	"github.com/agentmem/memory/backend/backendtest"
	"github.com/agentmem/memory/backend/driver"
	"github.com/agentmem/memory/backend/inmem"
	"github.com/agentmem/memory/backend/sqlite"
	"github.com/agentmem/memory/recall"
)

// benchStores are the filled stores of the recall benchmarks by driver,
// built once per process: filling 100,000 facts takes seconds.
var benchStores = struct {
	sync.Mutex
	m map[string]*backend.Store
}{m: map[string]*backend.Store{}}

// benchStore returns a store over the named driver holding
// backendtest.FillTexts(scopes, perScope).
func benchStore(b *testing.B, name string, scopes, perScope int) *backend.Store {
	benchStores.Lock()
	defer benchStores.Unlock()
	key := fmt.Sprintf("%s-%dx%d", name, scopes, perScope)
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
	}
	if err := backendtest.FillTexts(context.Background(), d, scopes, perScope); err != nil {
		b.Fatal(err)
	}
	st := backend.NewStore(d, backend.StoreOptions{})
	benchStores.m[key] = st
	return st
}

// BenchmarkRecall100k measures a warm lexical recall of the 10 best of
// 100,000 facts in one scope, with the default options (300 candidates),
// on the in-memory and SQLite drivers, and reports the median and the
// 99th percentile.
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

func benchmarkRecall(b *testing.B, scopes, perScope int) {
	for _, name := range []string{"inmem", "sqlite"} {
		b.Run(name, func(b *testing.B) {
			st := benchStore(b, name, scopes, perScope)
			r, err := recall.New(st, recall.Options{})
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
			backendtest.TimeEach(b, func(i int) (int, error) {
				res, err := r.Recall(ctx, scope(i), q, queries[i%len(queries)], 10)
				return len(res.Hits), err
			})
		})
	}
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
	if benchTemp.dir != "" {
		os.RemoveAll(benchTemp.dir)
	}
	os.Exit(code)
}
